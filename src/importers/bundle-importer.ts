import { basename, dirname, join } from 'node:path';
import { toMemoryRecord } from '../schemas/record-schema.ts';
import {
  type AssetRow,
  assetIdOf,
  assetInputOf,
  contentOf,
  derivedOf,
  memoryKindOf,
  timestampOf,
} from './bundle-rows.ts';
import { findFiles } from './find-files.ts';
import { type ItemPlace, rejectItem, SequenceCounter, sourceAt, warningItem } from './import-items.ts';
import type { Importer, ImportItem, ImportOptions } from './importer-spec.ts';
import { asText, asTextList, compact, isJsonObject, type JsonObject } from './json-values.ts';
import { importRootOf, isReadableFile } from './media-files.ts';
import { readJsonFile } from './read-json-file.ts';
import { readLines } from './read-lines.ts';
import { resolveRecordMedia } from './resolve-record-media.ts';
import { DEFAULT_MAX_TEXT_BYTES } from './text-size-limit.ts';
import { toQuestion } from './unified-importer.ts';
import { questionInputSchema } from './unified-line-schema.ts';

/** Files that mark a directory as a bundle. */
const BUNDLE_MARKERS = new Set(['manifest.json', 'memories.jsonl']);

/**
 * Bundles in the layout of the authors' harness: `manifest.json` + `contexts.jsonl` + `memories.jsonl` +
 * `assets.jsonl` (+ the asset files) + `questions.jsonl`, one bundle per directory. The row mapping onto
 * the unified record is documented in docs/archive-format.md; every memory then goes through the same
 * validation as a unified line (toMemoryRecord, size limit, missing-media rule).
 */
export function createBundleImporter(): Importer {
  return { format: 'bundle', read: readBundles };
}

async function* readBundles(path: string, given: ImportOptions): AsyncGenerator<ImportItem> {
  const options = { ...given, mediaRoot: given.mediaRoot ?? (await importRootOf(path)) };
  const markers = await findFiles(path, (name) => BUNDLE_MARKERS.has(name));
  const directories = [...new Set(markers.map((file) => dirname(file)))];
  const sequences = new SequenceCounter();
  for (const directory of directories) yield* readBundle(directory, options, sequences);
}

async function* readBundle(
  directory: string,
  options: ImportOptions,
  sequences: SequenceCounter,
): AsyncGenerator<ImportItem> {
  const manifestFile = join(directory, 'manifest.json');
  let defaultContext = basename(directory);
  if (await isReadableFile(manifestFile)) {
    const manifest = await readJsonFile(manifestFile);
    if (!manifest.ok) {
      yield warningItem(manifestFile, `unreadable manifest (${manifest.error}); continuing without it`);
    } else if (isJsonObject(manifest.value)) {
      defaultContext = asText(manifest.value.context_id) ?? defaultContext;
    }
  }
  const contextOf = (row: JsonObject): string =>
    options.contextId ?? asText(row.context_id) ?? asText(row.contextId) ?? defaultContext;

  // Assets first: memories reference them by id, and asset rows are small (paths and captions).
  const assetsById = new Map<string, AssetRow>();
  const assetsByMemory = new Map<string, AssetRow[]>();
  const assetsFile = join(directory, 'assets.jsonl');
  for await (const row of jsonlRows(assetsFile)) {
    if (row.type === 'problem') {
      yield row.item;
      continue;
    }
    const assetId = assetIdOf(row.value);
    if (assetId === undefined) {
      yield rejectItem(assetsFile, 'INVALID_INPUT', 'asset row without asset_id', {
        line: row.line,
        field: 'asset_id',
      });
      continue;
    }
    const context = contextOf(row.value);
    assetsById.set(`${context}\u0000${assetId}`, row.value);
    if (!assetsById.has(assetId)) assetsById.set(assetId, row.value);
    const memoryId = asText(row.value.memory_id);
    if (memoryId !== undefined) {
      const key = `${context}\u0000${memoryId}`;
      assetsByMemory.set(key, [...(assetsByMemory.get(key) ?? []), row.value]);
    }
  }

  const memoriesFile = join(directory, 'memories.jsonl');
  const maxTextBytes = options.maxTextBytes ?? DEFAULT_MAX_TEXT_BYTES;
  for await (const row of jsonlRows(memoriesFile)) {
    if (row.type === 'problem') {
      yield row.item;
      continue;
    }
    const contextId = contextOf(row.value);
    const id = asText(row.value.memory_id) ?? asText(row.value.id);
    const place: ItemPlace = { line: row.line, recordId: id };
    const mapped = memoryInputOf(row.value, {
      lookupAsset: (assetId) => assetsById.get(`${contextId}\u0000${assetId}`) ?? assetsById.get(assetId),
      linkedAssets: id === undefined ? [] : (assetsByMemory.get(`${contextId}\u0000${id}`) ?? []),
    });
    for (const note of mapped.notes)
      yield warningItem(memoriesFile, note.message, { ...place, field: note.field });
    const result = toMemoryRecord(
      mapped.input,
      { contextId, sequence: sequences.forId(contextId, mapped.input.id) },
      { maxTextBytes },
    );
    if (!result.ok) {
      yield rejectItem(memoriesFile, result.code, result.message, {
        ...place,
        field: bundleField(result.field),
      });
      continue;
    }
    const resolved = await resolveRecordMedia(result.record, directory, options.mediaRoot ?? directory);
    for (const problem of resolved.problems) {
      yield warningItem(memoriesFile, problem.message, { ...place, field: bundleField(problem.field) });
    }
    if (resolved.record === undefined) {
      yield rejectItem(
        memoriesFile,
        'NOT_FOUND_PATH',
        'record has no text and none of its media files exist',
        {
          ...place,
          field: 'content',
        },
      );
      continue;
    }
    yield { type: 'record', record: resolved.record, source: sourceAt(memoriesFile, place) };
  }

  const questionsFile = join(directory, 'questions.jsonl');
  for await (const row of jsonlRows(questionsFile)) {
    if (row.type === 'problem') {
      yield row.item;
      continue;
    }
    const contextId = contextOf(row.value);
    const input = questionInputOf(row.value);
    const place: ItemPlace = { line: row.line, recordId: asText(input.id) };
    const parsed = questionInputSchema.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      yield rejectItem(questionsFile, 'INVALID_INPUT', issue?.message ?? 'invalid question', {
        ...place,
        field: issue?.path.map(String).join('.'),
      });
      continue;
    }
    yield {
      type: 'question',
      question: toQuestion(parsed.data, contextId),
      source: sourceAt(questionsFile, place),
    };
  }
}

/** Memory row -> unified MemoryRecordInput (before validation), with notes on what was tolerated. */
function memoryInputOf(
  row: JsonObject,
  assets: { lookupAsset: (assetId: string) => AssetRow | undefined; linkedAssets: AssetRow[] },
): { input: JsonObject; notes: { field: string; message: string }[] } {
  const notes: { field: string; message: string }[] = [];
  const metadata: JsonObject = isJsonObject(row.metadata) ? { ...row.metadata } : {};
  const roundId = asText(metadata.native_round_id) ?? asText(row.native_round_id) ?? asText(row.round_id);
  const derived = derivedOf(metadata.derived, row.derived);
  delete metadata.native_round_id;
  delete metadata.derived;

  const content = contentOf(row.content ?? row.text, assets.lookupAsset);
  for (const assetId of content.unknownAssetIds) {
    notes.push({ field: 'content', message: `asset ${assetId} is not in assets.jsonl and has no uri` });
  }
  const blockIds = new Set(content.assets.map((asset) => asset.id));
  for (const [index, linked] of assets.linkedAssets.entries()) {
    const input = assetInputOf(linked, `linked-${index}`);
    if (!blockIds.has(input.id)) {
      blockIds.add(input.id);
      content.assets.push(input);
    }
  }

  const { kind, original } = memoryKindOf(row.kind);
  if (original !== undefined) metadata.sourceKind = original;
  const time = timestampOf(row.timestamp);
  if (time.unreadable !== undefined) {
    metadata.rawTimestamp = time.unreadable;
    notes.push({
      field: 'timestamp',
      message: `unreadable timestamp "${time.unreadable}" kept in metadata only`,
    });
  }
  const location = isJsonObject(row.location) ? row.location : undefined;
  const input = compact({
    id: asText(row.memory_id) ?? asText(row.id),
    kind,
    sequence: typeof row.sequence === 'number' ? row.sequence : undefined,
    sessionId: asText(row.session_id) ?? asText(row.sessionId),
    roundId,
    sourceId: asText(row.source_id) ?? asText(row.sourceId),
    role: asText(row.role),
    speaker: asText(row.speaker),
    timestamp: time.timestamp,
    location,
    text: content.text,
    assets: content.assets.length > 0 ? content.assets : undefined,
    derived,
    metadata: Object.keys(metadata).length > 0 ? metadata : undefined,
  });
  return { input, notes };
}

/** Question row -> unified QuestionInput (before validation). */
function questionInputOf(row: JsonObject): JsonObject {
  const answer = isJsonObject(row.answer) ? row.answer : { text: row.answer };
  const choices = Array.isArray(row.choices)
    ? row.choices.map((choice, index) =>
        isJsonObject(choice)
          ? {
              id: asText(choice.id) ?? asText(choice.choice_id) ?? asText(choice.label) ?? letter(index),
              text: asText(choice.text) ?? '',
            }
          : { id: letter(index), text: asText(choice) ?? '' },
      )
    : undefined;
  const evidence = Array.isArray(row.evidence)
    ? row.evidence.flatMap((entry) => (isJsonObject(entry) ? asTextList(entry.memory_id) : asTextList(entry)))
    : undefined;
  const images = Array.isArray(row.images)
    ? row.images
        .filter(isJsonObject)
        .map((image) =>
          compact({ uri: asText(image.uri) ?? asText(image.path), caption: asText(image.caption) }),
        )
    : undefined;
  return compact({
    id: asText(row.question_id) ?? asText(row.id),
    prompt: asText(row.prompt) ?? asText(row.question),
    type: asText(row.type) ?? asText(row.question_type) ?? asText(row.category),
    instruction: asText(row.instruction),
    choices,
    images,
    answer: compact({
      text: asText(answer.text),
      alternatives: answer.alternatives === undefined ? undefined : asTextList(answer.alternatives),
      choiceIds:
        answer.choice_ids === undefined && answer.choiceIds === undefined
          ? undefined
          : asTextList(answer.choice_ids ?? answer.choiceIds),
      unanswerable: typeof answer.unanswerable === 'boolean' ? answer.unanswerable : undefined,
    }),
    evidence,
    metadata: isJsonObject(row.metadata) ? row.metadata : undefined,
  });
}

function letter(index: number): string {
  return String.fromCharCode(65 + index);
}

/** Unified field paths -> the bundle's own names where they differ, so a reject names the bundle field. */
function bundleField(field: string): string {
  if (field === 'id') return 'memory_id';
  if (field === 'text' || field.startsWith('assets')) return `content (${field})`;
  if (field === 'sessionId') return 'session_id';
  if (field === 'roundId') return 'metadata.native_round_id';
  if (field.startsWith('derived')) return `metadata.${field}`;
  return field;
}

type JsonlRow = { type: 'row'; line: number; value: JsonObject } | { type: 'problem'; item: ImportItem };

/** JSON object rows of an optional JSONL file; malformed lines come back as reject items. */
async function* jsonlRows(file: string): AsyncGenerator<JsonlRow> {
  if (!(await isReadableFile(file))) return;
  for await (const item of readLines(file)) {
    if (item.tooLong) {
      yield {
        type: 'problem',
        item: rejectItem(file, 'TOO_LARGE', `line of ${item.bytes} bytes skipped`, { line: item.line }),
      };
      continue;
    }
    if (item.text.trim() === '') continue;
    try {
      const value: unknown = JSON.parse(item.text);
      if (isJsonObject(value)) yield { type: 'row', line: item.line, value };
      else
        yield {
          type: 'problem',
          item: rejectItem(file, 'INVALID_INPUT', 'expected a JSON object', { line: item.line }),
        };
    } catch (cause) {
      yield {
        type: 'problem',
        item: rejectItem(file, 'INVALID_INPUT', `malformed JSON: ${(cause as Error).message}`, {
          line: item.line,
        }),
      };
    }
  }
}
