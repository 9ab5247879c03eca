import { stat } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import type { DerivedFields, MediaAsset, MemoryRecord } from '../types/memory-record.ts';
import type { EvalQuestion, QuestionChoice } from '../types/question.ts';
import { LINE_TERMINATOR } from '../types/trim-chars.ts';
import { dialogueRounds } from './dialogue-rounds.ts';
import { parseEvidenceRefs } from './evidence-refs.ts';
import { findFiles } from './find-files.ts';
import { type ItemPlace, rejectItem, SequenceCounter, sourceAt, warningItem } from './import-items.ts';
import type { Importer, ImportItem, ImportOptions } from './importer-spec.ts';
import { asText, asTextList, compact, isJsonObject, type JsonObject } from './json-values.ts';
import { importRootOf, isReadableFile, MissingMediaLog, referencedAsset } from './media-files.ts';
import { readJsonFile } from './read-json-file.ts';

/**
 * M3Exam persona folders (`<Persona>/sessions.json` + `question.json` + `images/`):
 * - context id = the folder name (or `options.contextId`); ids below are prefixed with it;
 * - per round `<ctx>:<round>:user` and `<ctx>:<round>:assistant`, roundId "D1:1" (same_round), sessionId,
 *   timestamp = the session date; `is_followup` / `followup_of` kept in metadata;
 * - the round's `img_file` images are assets of the user memory: absolute uri into `images/`, MIME, sha256,
 *   asset id = file stem ("img_60", which is also how `fm` answers name images);
 * - `img_description`: a list with one entry per image becomes each asset's caption; a single string (or a
 *   list whose length does not match) describes the round's images together, so it goes to the user
 *   memory's `derived.captions` instead of being pinned to one arbitrary image;
 * - questions `<ctx>:q<index>`: type, answer.text = label, alternatives = the accepted answers, gold =
 *   supporting_facts ("D12:4", "D2:7,D2:9") expanded to both memories of each round; `fj` questions get
 *   their "(A) ..." options parsed into choices and `choiceIds` = [label].
 */
export function createM3examImporter(): Importer {
  return { format: 'm3exam', read: readM3exam };
}

async function* readM3exam(path: string, given: ImportOptions): AsyncGenerator<ImportItem> {
  const options = { ...given, mediaRoot: given.mediaRoot ?? (await importRootOf(path)) };
  const files = await findFiles(path, (name) => name === 'sessions.json');
  const sequences = new SequenceCounter();
  for (const file of files) yield* readPersona(file, options, sequences);
}

async function* readPersona(
  sessionsFile: string,
  options: ImportOptions,
  sequences: SequenceCounter,
): AsyncGenerator<ImportItem> {
  const directory = dirname(sessionsFile);
  const prefix = basename(directory);
  const contextId = options.contextId ?? prefix;
  const sessions = await readJsonFile(sessionsFile);
  if (!sessions.ok) {
    yield rejectItem(sessionsFile, 'INVALID_INPUT', `not readable JSON: ${sessions.error}`);
    return;
  }
  if (!Array.isArray(sessions.value)) {
    yield rejectItem(sessionsFile, 'INVALID_INPUT', 'expected a list of sessions');
    return;
  }
  const imageDirectory = join(directory, 'images');
  const baseDirectory = (await isDirectory(imageDirectory)) ? imageDirectory : directory;
  const missing = new MissingMediaLog();
  const rounds = new Set<string>();

  for (const item of dialogueRounds(sessionsFile, sessions.value, '', rounds)) {
    if (item.type !== 'round') {
      yield item;
      continue;
    }
    const { sessionId, timestamp, roundId, round } = item;
    const { assets, roundCaptions } = await roundImages(
      round,
      baseDirectory,
      missing,
      options.mediaRoot ?? directory,
    );
    const shared = compact({
      contextId,
      kind: 'message' as const,
      sessionId,
      roundId: options.shape === 'turns' ? undefined : roundId,
      sourceId: basename(sessionsFile),
      timestamp,
    });
    const metadata = compact({
      isFollowup: round.is_followup ?? undefined,
      followupOf: round.followup_of ?? undefined,
    });
    const hasMetadata = Object.keys(metadata).length > 0;
    const user: MemoryRecord = compact({
      ...shared,
      id: `${prefix}:${roundId}:user`,
      sequence: sequences.next(contextId),
      role: 'user',
      text: asText(round.user) ?? '',
      assets,
      derived: roundCaptions.length > 0 ? ({ captions: roundCaptions } satisfies DerivedFields) : undefined,
      metadata: hasMetadata ? metadata : undefined,
    });
    const assistant: MemoryRecord = compact({
      ...shared,
      id: `${prefix}:${roundId}:assistant`,
      sequence: sequences.next(contextId),
      role: 'assistant',
      text: asText(round.assistant) ?? '',
      assets: [],
      metadata: hasMetadata ? metadata : undefined,
    });
    yield { type: 'record', record: user, source: sourceAt(sessionsFile, { recordId: user.id }) };
    yield { type: 'record', record: assistant, source: sourceAt(sessionsFile, { recordId: assistant.id }) };
  }

  const note = missing.message(baseDirectory);
  if (note) yield warningItem(sessionsFile, note);
  yield* readQuestions(directory, { prefix, contextId, rounds });
}

async function* readQuestions(
  directory: string,
  at: { prefix: string; contextId: string; rounds: Set<string> },
): AsyncGenerator<ImportItem> {
  const file = join(directory, 'question.json');
  if (!(await isReadableFile(file))) return;
  const questions = await readJsonFile(file);
  if (!questions.ok || !Array.isArray(questions.value)) {
    yield rejectItem(
      file,
      'INVALID_INPUT',
      questions.ok ? 'expected a list of questions' : `not readable JSON: ${questions.error}`,
    );
    return;
  }
  for (const [index, raw] of questions.value.entries()) {
    const id = `${at.prefix}:q${index}`;
    const place: ItemPlace = { recordId: id, field: String(index) };
    const text = isJsonObject(raw) ? asText(raw.question) : undefined;
    if (!isJsonObject(raw) || text === undefined || text.trim() === '') {
      yield rejectItem(file, 'INVALID_INPUT', 'question without question text', {
        ...place,
        field: `${index}.question`,
      });
      continue;
    }
    const refs = parseEvidenceRefs(raw.supporting_facts);
    const known = refs.ids.filter((round) => at.rounds.has(round));
    const unresolved = [...refs.invalid, ...refs.ids.filter((round) => !at.rounds.has(round))];
    if (unresolved.length > 0) {
      yield warningItem(file, `unresolved evidence ${unresolved.join(', ')}`, {
        ...place,
        field: `${index}.supporting_facts`,
      });
    }
    const type = asText(raw.type);
    const accepted = asTextList(raw.answer);
    const label = asText(raw.label) ?? accepted[0];
    const options = type === 'fj' ? splitChoices(text) : undefined;
    const choiceIds =
      options !== undefined && label !== undefined && options.choices.some((choice) => choice.id === label)
        ? [label]
        : undefined;
    const question: EvalQuestion = compact({
      id,
      contextId: at.contextId,
      prompt: options?.stem ?? text,
      type,
      instruction: options?.instruction,
      choices: options?.choices,
      answer: compact({ text: label, alternatives: accepted.length > 0 ? accepted : undefined, choiceIds }),
      evidence: known.flatMap((round) => [`${at.prefix}:${round}:user`, `${at.prefix}:${round}:assistant`]),
      unresolvedEvidence: unresolved.length > 0 ? unresolved : undefined,
      metadata: compact({
        supportingFacts: asText(raw.supporting_facts),
        answerAssetIds: type === 'fm' ? accepted : undefined,
      }),
    });
    yield { type: 'question', question, source: sourceAt(file, { recordId: id }) };
  }
}

async function roundImages(
  round: JsonObject,
  baseDirectory: string,
  missing: MissingMediaLog,
  root: string,
): Promise<{ assets: MediaAsset[]; roundCaptions: string[] }> {
  const files = asTextList(round.img_file);
  const descriptions = asTextList(round.img_description);
  const perImage = Array.isArray(round.img_description) && descriptions.length === files.length;
  const assets: MediaAsset[] = [];
  for (const [index, file] of files.entries()) {
    const caption = perImage ? descriptions[index] : undefined;
    const built = await referencedAsset(
      file,
      baseDirectory,
      {
        id: basename(file, extname(file)),
        kind: 'image',
        ...(caption === undefined ? {} : { derived: { captions: [caption] } }),
      },
      root,
    );
    if (built.missing) missing.add(file);
    if (built.asset) assets.push(built.asset);
  }
  return { assets, roundCaptions: perImage ? [] : descriptions };
}

/**
 * The text after a choice label, as `\s*(.+)$` took it (trimmed), else undefined; by hand because that tail
 * retried every split of a long blank run before a line terminator, which `.` does not match (100k: 10 s).
 */
function choiceText(rest: string): string | undefined {
  const body = rest.trimStart();
  if (body !== '') return LINE_TERMINATOR.test(body) ? undefined : body.trim();
  // Only whitespace: `(.+)` takes the last character unless it is a line terminator.
  return rest !== '' && !LINE_TERMINATOR.test(rest.slice(-1)) ? '' : undefined;
}

/** "Stem\n(A) x\n(B) y\nOutput only the letter." -> stem, choices, trailing instruction. */
export function splitChoices(
  text: string,
): { stem: string; choices: QuestionChoice[]; instruction?: string } | undefined {
  const lines = text.split('\n');
  const choices: QuestionChoice[] = [];
  let first = -1;
  let last = -1;
  for (const [index, line] of lines.entries()) {
    const match = /^\s*\(?([A-Z])[).:]/.exec(line);
    const choice = match ? choiceText(line.slice(match[0].length)) : undefined;
    if (!match || choice === undefined) continue;
    if (first === -1) first = index;
    last = index;
    choices.push({ id: match[1]!, text: choice });
  }
  if (choices.length < 2) return undefined;
  const stem = lines.slice(0, first).join('\n').trim();
  const instruction = lines
    .slice(last + 1)
    .join('\n')
    .trim();
  return compact({ stem, choices, instruction: instruction === '' ? undefined : instruction });
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
