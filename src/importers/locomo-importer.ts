import { basename, dirname } from 'node:path';
import type { MediaAsset, MemoryRecord } from '../types/memory-record.ts';
import type { EvalQuestion } from '../types/question.ts';
import { normaliseDiaIdString, parseEvidenceRefs } from './evidence-refs.ts';
import { findFiles, hasExtension } from './find-files.ts';
import { rejectItem, SequenceCounter, sourceAt, warningItem } from './import-items.ts';
import type { Importer, ImportItem, ImportOptions } from './importer-spec.ts';
import { asText, asTextList, compact, isJsonObject, type JsonObject } from './json-values.ts';
import { importRootOf, MissingMediaLog, referencedAsset } from './media-files.ts';
import { parseDatasetDate } from './parse-dataset-date.ts';
import { readJsonFile } from './read-json-file.ts';

/**
 * LoCoMo release format and its variants:
 * - `locomo10.json`: an array of samples `{sample_id, conversation: {speaker_a, speaker_b, session_N,
 *   session_N_date_time}, qa}`;
 * - one conversation per file with the `conversation` keys flattened next to `qa`;
 * - REALTALK: the flattened shape with `clean_text`, a per-message `date_time` ("29.12.2023, 22:42:04")
 *   and `img_file` (local files, resolved against the JSON file's directory).
 *
 * One `message` memory per utterance, id `<sample>:<dia_id>` (sample = sample_id, else the file stem, with
 * `-<index>` for arrays without ids), context = `options.contextId` or the sample key, sessionId `session_N`,
 * timestamp = the message's own date_time, else the session's. `roundId` stays unset: LoCoMo turns are
 * not paired user/assistant rounds, and reusing dia ids would invent `same_round` edges; the dia id is kept
 * in `metadata.diaId`. Images (img_url / img_file) become image assets with blip_caption as caption.
 * Questions `<sample>:q<index>`, type = category; category 5 (adversarial) is marked unanswerable and keeps
 * `adversarial_answer` in metadata. Evidence is parsed defensively; anything that does not resolve to a
 * memory goes to `unresolvedEvidence` with a warning, never a reject.
 */
export function createLocomoImporter(): Importer {
  return { format: 'locomo', read: readLocomo };
}

async function* readLocomo(path: string, given: ImportOptions): AsyncGenerator<ImportItem> {
  const options = { ...given, mediaRoot: given.mediaRoot ?? (await importRootOf(path)) };
  const files = await findFiles(path, (name) => hasExtension(name, ['.json']));
  const sequences = new SequenceCounter();
  for (const file of files) {
    const parsed = await readJsonFile(file);
    if (!parsed.ok) {
      yield rejectItem(file, 'INVALID_INPUT', `not valid JSON: ${parsed.error}`);
      continue;
    }
    const data = parsed.value;
    const stem = basename(file, '.json');
    const samples = Array.isArray(data) ? data : [data];
    for (const [index, sample] of samples.entries()) {
      const field = Array.isArray(data) ? String(index) : undefined;
      const fallbackKey = Array.isArray(data) ? `${stem}-${index}` : stem;
      yield* readSample(file, sample, { field, fallbackKey, options, sequences });
    }
  }
}

interface SampleContext {
  field: string | undefined;
  fallbackKey: string;
  options: ImportOptions;
  sequences: SequenceCounter;
}

async function* readSample(file: string, sample: unknown, at: SampleContext): AsyncGenerator<ImportItem> {
  const conversation = isJsonObject(sample)
    ? isJsonObject(sample.conversation)
      ? sample.conversation
      : sample
    : undefined;
  const sessions = conversation === undefined ? [] : sessionKeys(conversation);
  if (!isJsonObject(sample) || conversation === undefined || sessions.length === 0) {
    yield rejectItem(file, 'INVALID_INPUT', 'not a LoCoMo conversation (no session_N lists)', {
      field: at.field ?? 'conversation',
    });
    return;
  }
  const key = asText(sample.sample_id) ?? at.fallbackKey;
  const contextId = at.options.contextId ?? key;
  const prefix = (name: string): string => (at.field === undefined ? name : `${at.field}.${name}`);
  const conversationField = conversation === sample ? '' : 'conversation.';
  const baseDirectory = dirname(file);
  const missing = new MissingMediaLog();
  const byDiaId = new Map<string, string>();

  for (const { name } of sessions) {
    const sessionField = prefix(`${conversationField}${name}`);
    const rawDate = asText(conversation[`${name}_date_time`]);
    const sessionTime = rawDate === undefined ? undefined : parseDatasetDate(rawDate);
    if (rawDate !== undefined && sessionTime === undefined) {
      yield warningItem(file, `unreadable date "${rawDate}"; session ${name} has no session timestamp`, {
        field: `${sessionField}_date_time`,
      });
    }
    const turns = conversation[name] as unknown[];
    for (const [turnIndex, turn] of turns.entries()) {
      const field = `${sessionField}.${turnIndex}`;
      if (!isJsonObject(turn)) {
        yield rejectItem(file, 'INVALID_INPUT', 'message is not an object', { field });
        continue;
      }
      const rawDiaId = asText(turn.dia_id);
      const diaId = rawDiaId === undefined ? undefined : (normaliseDiaIdString(rawDiaId) ?? rawDiaId);
      let id = `${key}:${rawDiaId ?? `${name}:${turnIndex}`}`;
      if (diaId !== undefined && byDiaId.has(diaId)) {
        id = `${id}#${turnIndex}`;
        yield warningItem(file, `dia_id ${rawDiaId} appears twice; evidence resolves to the first`, {
          field: `${field}.dia_id`,
          recordId: id,
        });
      } else if (diaId !== undefined) {
        byDiaId.set(diaId, id);
      }
      const rawMessageDate = asText(turn.date_time);
      const messageTime = rawMessageDate === undefined ? undefined : parseDatasetDate(rawMessageDate);
      if (rawMessageDate !== undefined && messageTime === undefined) {
        yield warningItem(file, `unreadable date "${rawMessageDate}"; using the session date`, {
          field: `${field}.date_time`,
          recordId: id,
        });
      }
      const text = asText(turn.clean_text) ?? asText(turn.text) ?? '';
      const assets = await messageAssets(turn, baseDirectory, missing, at.options.mediaRoot ?? baseDirectory);
      if (text.trim() === '' && assets.length === 0) {
        yield rejectItem(file, 'INVALID_INPUT', 'message has no text and no image', {
          field: `${field}.text`,
          recordId: id,
        });
        continue;
      }
      const speaker = asText(turn.speaker);
      const original = asText(turn.text);
      const record: MemoryRecord = compact({
        id,
        contextId,
        kind: 'message' as const,
        sequence: at.sequences.next(contextId),
        sessionId: name,
        sourceId: basename(file),
        role: speaker,
        speaker,
        timestamp: messageTime ?? sessionTime,
        text,
        assets,
        metadata: compact({
          sampleId: key,
          diaId: rawDiaId,
          sessionDateTime: rawDate,
          dateTime: rawMessageDate,
          originalText: original !== undefined && original !== text ? original : undefined,
          imageQuery: asText(turn.query),
        }),
      });
      yield { type: 'record', record, source: sourceAt(file, { recordId: id }) };
    }
  }

  const qa = Array.isArray(sample.qa) ? sample.qa : [];
  for (const [index, raw] of qa.entries()) {
    yield* readQuestion(file, raw, { index, key, contextId, byDiaId, field: prefix(`qa.${index}`) });
  }
  const note = missing.message(baseDirectory);
  if (note) yield warningItem(file, note);
}

function* readQuestion(
  file: string,
  raw: unknown,
  at: { index: number; key: string; contextId: string; byDiaId: Map<string, string>; field: string },
): Generator<ImportItem> {
  const id = `${at.key}:q${at.index}`;
  const prompt = isJsonObject(raw) ? asText(raw.question) : undefined;
  if (!isJsonObject(raw) || prompt === undefined || prompt.trim() === '') {
    yield rejectItem(file, 'INVALID_INPUT', 'question without question text', {
      field: `${at.field}.question`,
      recordId: id,
    });
    return;
  }
  const refs = parseEvidenceRefs(raw.evidence);
  const evidence: string[] = [];
  const unresolved = [...refs.invalid];
  for (const diaId of refs.ids) {
    const memoryId = at.byDiaId.get(diaId);
    if (memoryId === undefined) unresolved.push(diaId);
    else evidence.push(memoryId);
  }
  if (unresolved.length > 0) {
    yield warningItem(file, `unresolved evidence ${unresolved.join(', ')}`, {
      field: `${at.field}.evidence`,
      recordId: id,
    });
  }
  const category = asText(raw.category);
  const adversarial = asText(raw.adversarial_answer);
  const question: EvalQuestion = compact({
    id,
    contextId: at.contextId,
    prompt,
    type: category,
    answer: compact({
      text: asText(raw.answer),
      unanswerable:
        category === '5' || (adversarial !== undefined && raw.answer === undefined) ? true : undefined,
    }),
    evidence,
    unresolvedEvidence: unresolved.length > 0 ? unresolved : undefined,
    metadata: compact({
      sampleId: at.key,
      category: raw.category,
      adversarialAnswer: adversarial,
      evidenceRaw: raw.evidence,
    }),
  });
  yield { type: 'question', question, source: sourceAt(file, { recordId: id }) };
}

/** `session_N` keys holding message lists, in numeric order. */
function sessionKeys(conversation: JsonObject): { name: string; number: number }[] {
  return Object.keys(conversation)
    .map((name) => ({ name, match: /^session_(\d+)$/.exec(name) }))
    .filter((entry) => entry.match !== null && Array.isArray(conversation[entry.name]))
    .map((entry) => ({ name: entry.name, number: Number(entry.match![1]) }))
    .sort((a, b) => a.number - b.number);
}

async function messageAssets(
  turn: JsonObject,
  baseDirectory: string,
  missing: MissingMediaLog,
  root: string,
): Promise<MediaAsset[]> {
  const references = [...asTextList(turn.img_url), ...asTextList(turn.img_file)];
  const captions = [
    ...asTextList(turn.blip_caption),
    ...asTextList(turn.image_caption),
    ...asTextList(turn.img_caption),
  ];
  const assets: MediaAsset[] = [];
  for (const [index, reference] of references.entries()) {
    // One caption for one image is the release's shape; with several images, captions pair up by position.
    const caption =
      captions.length === 1 && references.length > 1
        ? index === 0
          ? captions[0]
          : undefined
        : captions[index];
    const built = await referencedAsset(
      reference,
      baseDirectory,
      {
        id: `image-${index}`,
        kind: 'image',
        ...(caption === undefined ? {} : { derived: { captions: [caption] } }),
      },
      root,
    );
    if (built.missing) missing.add(reference);
    if (built.asset) assets.push(built.asset);
  }
  if (references.length === 0 && captions.length > 0) {
    // A caption without its image (some releases strip urls): keep it as a caption-only asset.
    assets.push({ id: 'image-0', kind: 'image', derived: { captions } });
  }
  return assets;
}
