import { type AssetKind, type DerivedFields, MEMORY_KINDS, type MemoryKind } from '../types/memory-record.ts';
import { asText, asTextList, compact, isJsonObject, type JsonObject } from './json-values.ts';
import { assetKindForMime, mimeForPath } from './media-files.ts';
import { parseDatasetDate } from './parse-dataset-date.ts';

/**
 * Row mappers of the authors' harness bundle (snake_case rows) to the unified camelCase inputs, tolerant of
 * the spelling variants seen in the wild. The exact mapping is documented in docs/archive-format.md.
 */

export type AssetRow = JsonObject;

/** Kind names of other tools mapped onto MemoryKind; unknown kinds become 'other' (original kept). */
const KIND_ALIASES: Record<string, MemoryKind> = {
  dialogue: 'message',
  dialog: 'message',
  turn: 'message',
  utterance: 'message',
  chat: 'message',
  mail: 'email',
  image: 'photo',
  picture: 'photo',
  persona: 'profile',
  doc: 'document',
  text: 'note',
};

export function memoryKindOf(raw: unknown): { kind?: MemoryKind; original?: string } {
  const text = asText(raw)?.trim().toLowerCase();
  if (text === undefined || text === '') return {};
  if ((MEMORY_KINDS as readonly string[]).includes(text)) return { kind: text as MemoryKind };
  return { kind: KIND_ALIASES[text] ?? 'other', original: text };
}

/** DerivedFields from `{captions|caption, ocr|ocr_text, summary, tags}`; undefined when empty. */
export function derivedOf(...sources: unknown[]): DerivedFields | undefined {
  const captions: string[] = [];
  let ocr: string | undefined;
  let summary: string | undefined;
  const tags: string[] = [];
  for (const source of sources) {
    if (!isJsonObject(source)) continue;
    // Loops, not push(...): raw rows are unvalidated here, and spreading a huge list overflows the stack.
    for (const caption of asTextList(source.captions)) captions.push(caption);
    for (const caption of asTextList(source.caption)) captions.push(caption);
    ocr ??= asText(source.ocr) ?? asText(source.ocr_text);
    summary ??= asText(source.summary);
    for (const tag of asTextList(source.tags)) tags.push(tag);
  }
  const derived = compact({
    captions: captions.length > 0 ? [...new Set(captions)] : undefined,
    ocr,
    summary,
    tags: tags.length > 0 ? [...new Set(tags)] : undefined,
  });
  return Object.keys(derived).length === 0 ? undefined : derived;
}

export function assetIdOf(row: JsonObject): string | undefined {
  return asText(row.asset_id) ?? asText(row.id);
}

/** A unified asset input from an asset row or an asset content block (block fields win). */
export function assetInputOf(row: JsonObject, fallbackId: string): JsonObject {
  const uri = asText(row.uri) ?? asText(row.path) ?? asText(row.file) ?? asText(row.url);
  const mime =
    asText(row.mime) ?? asText(row.mime_type) ?? (uri === undefined ? undefined : mimeForPath(uri));
  const metadata = isJsonObject(row.metadata) ? row.metadata : undefined;
  return compact({
    id: assetIdOf(row) ?? fallbackId,
    kind: assetKindOf(asText(row.kind) ?? asText(row.modality) ?? asText(row.type), mime),
    uri,
    mime,
    sha256: asText(row.sha256),
    derived: derivedOf(row.derived, metadata?.derived, row),
    exif: isJsonObject(row.exif) ? row.exif : undefined,
    frames: Array.isArray(row.frames) ? asTextList(row.frames) : undefined,
  });
}

function assetKindOf(raw: string | undefined, mime: string | undefined): AssetKind {
  const text = raw?.toLowerCase();
  if (text === 'image' || text === 'photo' || text === 'picture') return 'image';
  if (text === 'video' || text === 'audio' || text === 'document') return text;
  if (text === 'pdf' || text === 'file') return 'document';
  return assetKindForMime(mime) ?? 'image';
}

/** Block types that carry media rather than text. */
const MEDIA_BLOCKS = new Set(['asset', 'image', 'photo', 'video', 'audio', 'document', 'file']);

/**
 * `content`: a string, or blocks `{type:"text", text}` / `{type:"image"|"asset"|..., asset_id | uri ...}`.
 * Text blocks join with a newline; a media block naming an asset_id found in assets.jsonl merges that row
 * (the block's own fields win); unknown blocks with text are read as text.
 */
export function contentOf(
  raw: unknown,
  lookupAsset: (assetId: string) => AssetRow | undefined,
): { text: string; assets: JsonObject[]; unknownAssetIds: string[] } {
  if (typeof raw === 'string') return { text: raw, assets: [], unknownAssetIds: [] };
  const texts: string[] = [];
  const assets: JsonObject[] = [];
  const unknownAssetIds: string[] = [];
  const blocks = Array.isArray(raw) ? raw : raw === undefined || raw === null ? [] : [raw];
  for (const block of blocks) {
    if (typeof block === 'string') {
      texts.push(block);
      continue;
    }
    if (!isJsonObject(block)) continue;
    const type = asText(block.type)?.toLowerCase() ?? (asText(block.text) === undefined ? 'asset' : 'text');
    if (!MEDIA_BLOCKS.has(type)) {
      const text = asText(block.text);
      if (text !== undefined) texts.push(text);
      continue;
    }
    const assetId = assetIdOf(block);
    const row = assetId === undefined ? undefined : lookupAsset(assetId);
    if (
      assetId !== undefined &&
      row === undefined &&
      asText(block.uri) === undefined &&
      asText(block.path) === undefined
    ) {
      unknownAssetIds.push(assetId);
    }
    const merged: JsonObject = { ...(row ?? {}), ...block };
    assets.push(assetInputOf(merged, `asset-${assets.length}`));
  }
  return { text: texts.join('\n'), assets, unknownAssetIds };
}

/** ISO timestamps pass; other readable dataset dates are converted; unreadable ones are reported. */
export function timestampOf(raw: unknown): { timestamp?: string; unreadable?: string } {
  const text = asText(raw);
  if (text === undefined || text.trim() === '') return {};
  const parsed = /^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/.test(text.trim())
    ? text.trim()
    : parseDatasetDate(text);
  return parsed === undefined ? { unreadable: text } : { timestamp: parsed };
}
