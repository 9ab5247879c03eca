import { basename, dirname, extname } from 'node:path';
import type { z } from 'zod';
import { toMemoryRecord } from '../schemas/record-schema.ts';
import type { EvalQuestion } from '../types/question.ts';
import { findFiles, hasExtension } from './find-files.ts';
import { type ItemPlace, rejectItem, SequenceCounter, sourceAt, warningItem } from './import-items.ts';
import type { Importer, ImportItem, ImportOptions } from './importer-spec.ts';
import { compact, isJsonObject, type JsonObject } from './json-values.ts';
import { importRootOf } from './media-files.ts';
import { readLines } from './read-lines.ts';
import { resolveRecordMedia } from './resolve-record-media.ts';
import { DEFAULT_MAX_TEXT_BYTES } from './text-size-limit.ts';
import { contextLineSchema, questionInputSchema, type UnifiedQuestionLine } from './unified-line-schema.ts';

/** Extensions searched for in a directory. */
export const UNIFIED_EXTENSIONS = ['.jsonl', '.ndjson'];

/** Lines are parsed whole; this bound keeps one runaway line from exhausting memory. */
const MIN_MAX_LINE_BYTES = 64 * 1024 * 1024;

/**
 * The unified archive format (docs/archive-format.md): JSONL of context, memory and question lines.
 * Every line is validated on its own; a bad line becomes a reject naming file, line, record and field, and
 * the lines after it keep flowing. A line without `type` is read as a memory (plain record files work).
 *
 * Context of a line: `options.contextId`, else the line's `contextId`, else the last context line above
 * it, else the file stem. Relative media paths resolve against the file's directory.
 */
export function createUnifiedImporter(): Importer {
  return { format: 'unified', read: readUnified };
}

async function* readUnified(path: string, given: ImportOptions): AsyncGenerator<ImportItem> {
  const options = { ...given, mediaRoot: given.mediaRoot ?? (await importRootOf(path)) };
  const files = await findFiles(path, (name) => hasExtension(name, UNIFIED_EXTENSIONS));
  const sequences = new SequenceCounter();
  for (const file of files) yield* readUnifiedFile(file, options, sequences);
}

async function* readUnifiedFile(
  file: string,
  options: ImportOptions,
  sequences: SequenceCounter,
): AsyncGenerator<ImportItem> {
  const maxTextBytes = options.maxTextBytes ?? DEFAULT_MAX_TEXT_BYTES;
  const maxLineBytes = Math.max(MIN_MAX_LINE_BYTES, maxTextBytes * 4);
  const baseDirectory = dirname(file);
  let headerContext: string | undefined;
  const fileContext = basename(file, extname(file));

  for await (const item of readLines(file, { maxLineBytes })) {
    const { line } = item;
    if (item.tooLong) {
      yield rejectItem(
        file,
        'TOO_LARGE',
        `line of ${item.bytes} bytes exceeds ${maxLineBytes} bytes; skipped`,
        {
          line,
        },
      );
      continue;
    }
    if (item.text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(item.text);
    } catch (cause) {
      yield rejectItem(file, 'INVALID_INPUT', `malformed JSON: ${(cause as Error).message}`, { line });
      continue;
    }
    if (!isJsonObject(value)) {
      yield rejectItem(file, 'INVALID_INPUT', 'expected a JSON object', { line });
      continue;
    }
    const { type = 'memory', ...rest } = value;
    const recordId = typeof rest.id === 'string' ? rest.id : undefined;
    const place: ItemPlace = { line, recordId };
    const contextOf = (): string =>
      options.contextId ??
      (typeof rest.contextId === 'string' && rest.contextId !== '' ? rest.contextId : undefined) ??
      headerContext ??
      fileContext;

    if (type === 'context') {
      const parsed = contextLineSchema.safeParse(value);
      if (!parsed.success) yield rejectItem(file, 'INVALID_INPUT', ...issueOf(parsed.error, place));
      else headerContext = parsed.data.id;
    } else if (type === 'memory') {
      yield* memoryLine(file, rest, {
        place,
        contextId: contextOf(),
        sequences,
        maxTextBytes,
        baseDirectory,
        mediaRoot: options.mediaRoot ?? baseDirectory,
      });
    } else if (type === 'question') {
      const parsed = questionInputSchema.safeParse(rest);
      if (!parsed.success) yield rejectItem(file, 'INVALID_INPUT', ...issueOf(parsed.error, place));
      else
        yield {
          type: 'question',
          question: toQuestion(parsed.data, contextOf()),
          source: sourceAt(file, place),
        };
    } else {
      yield rejectItem(
        file,
        'INVALID_INPUT',
        `unknown line type ${JSON.stringify(type)} (memory, question, context)`,
        {
          ...place,
          field: 'type',
        },
      );
    }
  }
}

async function* memoryLine(
  file: string,
  input: JsonObject,
  at: {
    place: ItemPlace;
    contextId: string;
    sequences: SequenceCounter;
    maxTextBytes: number;
    baseDirectory: string;
    mediaRoot: string;
  },
): AsyncGenerator<ImportItem> {
  const result = toMemoryRecord(
    input,
    { contextId: at.contextId, sequence: at.sequences.forId(at.contextId, input.id) },
    { maxTextBytes: at.maxTextBytes },
  );
  if (!result.ok) {
    yield rejectItem(file, result.code, result.message, { ...at.place, field: result.field });
    return;
  }
  const resolved = await resolveRecordMedia(result.record, at.baseDirectory, at.mediaRoot);
  for (const problem of resolved.problems) {
    yield warningItem(file, problem.message, { ...at.place, field: problem.field });
  }
  if (resolved.record === undefined) {
    yield rejectItem(file, 'NOT_FOUND_PATH', 'record has no text and none of its media files exist', {
      ...at.place,
      field: 'assets',
    });
    return;
  }
  yield { type: 'record', record: resolved.record, source: sourceAt(file, at.place) };
}

/** A validated question line as an EvalQuestion (evidence ids stay as written; ingest resolves them). */
export function toQuestion(input: UnifiedQuestionLine, contextId: string): EvalQuestion {
  const { contextId: _ignored, answer, evidence, ...rest } = input;
  // Zod types nested optionals as `?: T | undefined`; parsed output never holds undefined values, so the
  // cast only bridges exactOptionalPropertyTypes.
  return compact({
    ...rest,
    contextId,
    answer: compact({ ...answer }),
    evidence: evidence ?? [],
  }) as EvalQuestion;
}

/** Zod issue -> [message, place with dotted field path]; unknown keys are named themselves. */
function issueOf(error: z.ZodError, place: ItemPlace): [string, ItemPlace] {
  const issue = error.issues[0];
  if (issue === undefined) return ['invalid line', place];
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    return [`unknown field "${key}"`, { ...place, field: [...path, key].join('.') }];
  }
  return [issue.message, { ...place, field: path.join('.') }];
}
