import { basename, dirname } from 'node:path';
import type { MediaAsset, MemoryRecord } from '../types/memory-record.ts';
import type { EvalQuestion, QuestionImage } from '../types/question.ts';
import { dialogueRounds } from './dialogue-rounds.ts';
import { parseEvidenceRefs } from './evidence-refs.ts';
import { findFiles, hasExtension } from './find-files.ts';
import { rejectItem, SequenceCounter, sourceAt, warningItem } from './import-items.ts';
import type { Importer, ImportItem, ImportOptions } from './importer-spec.ts';
import { asText, asTextList, compact, isJsonObject, type JsonObject } from './json-values.ts';
import {
  importRootOf,
  isMediaFileInside,
  locateMedia,
  MissingMediaLog,
  referencedAsset,
} from './media-files.ts';
import { readJsonFile } from './read-json-file.ts';

/**
 * Mem-Gallery raw dialog files (`dialog/<Context>.json`), converted as the paper does (A.1):
 * - context id = file stem (or `options.contextId`); ids below are prefixed with the file stem `<ctx>`;
 * - one `profile` memory per context (`<ctx>:profile`, sequence 0) from `character_profile`;
 * - one memory per speaker turn: `<ctx>:<round>:user` then `<ctx>:<round>:assistant`, both with
 *   roundId = native round id ("D1:3", so the pair gets `same_round`), sessionId ("D1"), timestamp = the
 *   session date, role user/assistant, speaker = the persona name / "assistant";
 * - a round's images (image_id, input_image resolved against the file, image_caption) are assets of the
 *   USER memory, captions in `assets[].derived.captions`;
 * - questions `<ctx>:q<index>` (index into `human-annotated QAs`, from 0), type = `point`, images from
 *   question_image + image_caption, gold = clue rounds expanded to both memories of each round; type AR
 *   (answer refusal) has no clue, so no gold, and is marked unanswerable.
 */
export function createMemGalleryImporter(): Importer {
  return { format: 'mem-gallery', read: readMemGallery };
}

async function* readMemGallery(path: string, given: ImportOptions): AsyncGenerator<ImportItem> {
  const options = { ...given, mediaRoot: given.mediaRoot ?? (await importRootOf(path)) };
  const files = await findFiles(path, (name) => hasExtension(name, ['.json']));
  const sequences = new SequenceCounter();
  for (const file of files) yield* readDialogFile(file, options, sequences);
}

async function* readDialogFile(
  file: string,
  options: ImportOptions,
  sequences: SequenceCounter,
): AsyncGenerator<ImportItem> {
  const parsed = await readJsonFile(file);
  if (!parsed.ok) {
    yield rejectItem(file, 'INVALID_INPUT', `not valid JSON: ${parsed.error}`);
    return;
  }
  const data = parsed.value;
  if (!isJsonObject(data) || !Array.isArray(data.multi_session_dialogues)) {
    yield rejectItem(file, 'INVALID_INPUT', 'not a Mem-Gallery dialog file', {
      field: 'multi_session_dialogues',
    });
    return;
  }
  // Ids always carry the file stem, so merging several files into one `--context` cannot collide.
  const prefix = basename(file, '.json');
  const contextId = options.contextId ?? prefix;
  const baseDirectory = dirname(file);
  const missing = new MissingMediaLog();
  const sourceId = basename(file);

  const profile = profileRecord(data.character_profile, prefix, contextId, sourceId);
  if (profile)
    yield {
      type: 'record',
      record: { ...profile, sequence: sequences.next(contextId) },
      source: sourceAt(file, { recordId: profile.id }),
    };
  const personaName = isJsonObject(data.character_profile) ? asText(data.character_profile.name) : undefined;

  const rounds = new Set<string>();
  for (const item of dialogueRounds(file, data.multi_session_dialogues, 'multi_session_dialogues', rounds)) {
    if (item.type !== 'round') {
      yield item;
      continue;
    }
    const { sessionId, timestamp, roundId, round } = item;
    const shared = compact({
      contextId,
      sessionId,
      roundId: options.shape === 'turns' ? undefined : roundId,
      sourceId,
      timestamp,
      kind: 'message' as const,
    });
    const assets = await roundAssets(round, baseDirectory, missing, options.mediaRoot ?? baseDirectory);
    const user: MemoryRecord = {
      ...shared,
      id: `${prefix}:${roundId}:user`,
      sequence: sequences.next(contextId),
      role: 'user',
      speaker: personaName ?? 'user',
      text: asText(round.user) ?? '',
      assets,
    };
    const assistant: MemoryRecord = {
      ...shared,
      id: `${prefix}:${roundId}:assistant`,
      sequence: sequences.next(contextId),
      role: 'assistant',
      speaker: 'assistant',
      text: asText(round.assistant) ?? '',
      assets: [],
    };
    yield { type: 'record', record: user, source: sourceAt(file, { recordId: user.id }) };
    yield { type: 'record', record: assistant, source: sourceAt(file, { recordId: assistant.id }) };
  }

  const questions = Array.isArray(data['human-annotated QAs']) ? data['human-annotated QAs'] : [];
  for (const [index, raw] of questions.entries()) {
    const id = `${prefix}:q${index}`;
    const field = `human-annotated QAs.${index}`;
    const prompt = isJsonObject(raw) ? asText(raw.question) : undefined;
    if (!isJsonObject(raw) || prompt === undefined || prompt.trim() === '') {
      yield rejectItem(file, 'INVALID_INPUT', 'question without question text', {
        field: `${field}.question`,
        recordId: id,
      });
      continue;
    }
    const refs = parseEvidenceRefs(raw.clue);
    const known = refs.ids.filter((round) => rounds.has(round));
    const unresolved = [...refs.invalid, ...refs.ids.filter((round) => !rounds.has(round))];
    if (unresolved.length > 0) {
      yield warningItem(file, `unresolved evidence ${unresolved.join(', ')}`, {
        field: `${field}.clue`,
        recordId: id,
      });
    }
    const point = asText(raw.point);
    const question: EvalQuestion = compact({
      id,
      contextId,
      prompt,
      type: point,
      images: await questionImages(raw, baseDirectory, missing, options.mediaRoot ?? baseDirectory),
      answer: compact({
        text: asText(raw.answer),
        unanswerable: point === 'AR' ? true : undefined,
      }),
      evidence: known.flatMap((round) => [`${prefix}:${round}:user`, `${prefix}:${round}:assistant`]),
      unresolvedEvidence: unresolved.length > 0 ? unresolved : undefined,
      metadata: compact({ sessionIds: asTextList(raw.session_id), clue: asTextList(raw.clue) }),
    });
    yield { type: 'question', question, source: sourceAt(file, { recordId: id }) };
  }

  const note = missing.message(baseDirectory);
  if (note) yield warningItem(file, note);
}

function profileRecord(
  raw: unknown,
  prefix: string,
  contextId: string,
  sourceId: string,
): MemoryRecord | undefined {
  if (!isJsonObject(raw)) return undefined;
  const lines = [
    line('Name', raw.name),
    line('Persona', raw.persona_summary),
    line('Traits', asTextList(raw.traits).join(', ')),
    line('Conversation style', raw.conversation_style),
  ].filter((entry): entry is string => entry !== undefined);
  if (lines.length === 0) return undefined;
  return {
    id: `${prefix}:profile`,
    contextId,
    kind: 'profile',
    sequence: 0,
    sourceId,
    text: lines.join('\n'),
    assets: [],
    metadata: { characterProfile: raw },
  };
}

async function roundAssets(
  round: JsonObject,
  baseDirectory: string,
  missing: MissingMediaLog,
  root: string,
): Promise<MediaAsset[]> {
  const paths = asTextList(round.input_image);
  const ids = asTextList(round.image_id);
  const captions = asTextList(round.image_caption);
  const count = Math.max(paths.length, ids.length);
  const assets: MediaAsset[] = [];
  for (let index = 0; index < count; index += 1) {
    const caption = captions[index];
    const fields = {
      id: ids[index] ?? `image-${index}`,
      kind: 'image' as const,
      ...(caption === undefined ? {} : { derived: { captions: [caption] } }),
    };
    const path = paths[index];
    if (path === undefined) {
      if (caption !== undefined) assets.push(fields);
      continue;
    }
    const built = await referencedAsset(path, baseDirectory, fields, root);
    if (built.missing) missing.add(path);
    if (built.asset) assets.push(built.asset);
  }
  return assets;
}

/** Question images follow the missing-media rule too: no uri for a file that is not there. */
async function questionImages(
  raw: JsonObject,
  baseDirectory: string,
  missing: MissingMediaLog,
  root: string,
): Promise<QuestionImage[] | undefined> {
  const paths = asTextList(raw.question_image);
  const captions = asTextList(raw.image_caption);
  const images: QuestionImage[] = [];
  for (let index = 0; index < Math.max(paths.length, captions.length); index += 1) {
    const path = paths[index];
    const location = path === undefined ? undefined : locateMedia(path, baseDirectory);
    let uri: string | undefined;
    if (location?.remote) uri = location.uri;
    else if (location !== undefined && (await isMediaFileInside(location.path, root))) uri = location.path;
    else if (path !== undefined) missing.add(path);
    images.push(compact({ uri, caption: captions[index] }));
  }
  return images.length === 0 ? undefined : images;
}

function line(label: string, value: unknown): string | undefined {
  const text = asText(value);
  return text === undefined || text.trim() === '' ? undefined : `${label}: ${text}`;
}
