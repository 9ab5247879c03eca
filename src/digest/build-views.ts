import { MONTH_NAMES, WEEKDAY_NAMES } from '../types/calendar-names.ts';
import type { MediaAsset, MemoryRecord } from '../types/memory-record.ts';
import type { MemoryView } from '../types/view.ts';

/** Bump when the rules below change: content hashes include it, so re-imports rebuild every record's views. */
export const VIEWS_VERSION = 2;

/**
 * The retrieval views of one record (paper 3.3: several routes into one memory, scored by max pooling):
 * - 'text' / 'main': the text as a person would search a conversation. For a message with a speaker or a date
 *   (chat turns, mails) it reads "[8 May 2023] Caroline: <text>": "what did Caroline say about the race in
 *   May" matches one document, where text alone would need the metadata view's separate max (views are
 *   max-pooled, never summed). Other kinds (notes, photos, documents) keep their raw text. (Version 2; in
 *   version 1 the text view was the raw text only.)
 * - 'caption': one view per caption of each asset (key = asset id, then `<asset id>:<n>` for further
 *   captions), one per record-level caption (key `record`, `record:<n>`), and the record summary (`summary`)
 *   and asset summaries (`<asset id>:summary`), which are derived descriptions too.
 * - 'ocr': one per asset with OCR text (key = asset id) and the record-level OCR (key `record`).
 * - 'metadata' / 'main': words for who, when and where: kind, speaker, role, the timestamp's and EXIF dates in
 *   several forms ("2024-06-03 3 June 2024 June 2024 2024 Monday"), place names, tags.
 * - 'image': one per image asset with a uri (text empty; embedded when a vision embedding model exists).
 * - 'frame': one per sampled video frame (key `<asset id>:<n>`; text: the frame's OCR, `frameText`).
 * - 'text' / 'page:<n>': each page of a multi-page document (text split on form feeds).
 * Views with no text and no uri are skipped.
 */
export function buildViews(record: MemoryRecord): MemoryView[] {
  const views: MemoryView[] = [];
  const add = (kind: MemoryView['kind'], key: string, text: string, uri?: string): void => {
    const trimmed = text.trim();
    if (trimmed === '' && uri === undefined) return;
    views.push(
      uri === undefined
        ? { memoryId: record.id, kind, key, text: trimmed }
        : { memoryId: record.id, kind, key, text: trimmed, uri },
    );
  };

  add('text', 'main', searchableText(record));
  // A document's pages (form feeds between them, as pdftotext writes) are routes of their own: a question
  // about page 7 matches page 7's words without the rest of the document diluting them.
  if (record.kind === 'document' && record.text.includes('\f')) {
    for (const [i, page] of record.text.split('\f').entries()) add('text', `page:${i + 1}`, page);
  }
  for (const [i, caption] of (record.derived?.captions ?? []).entries()) {
    add('caption', i === 0 ? 'record' : `record:${i}`, caption);
  }
  if (record.derived?.summary) add('caption', 'summary', record.derived.summary);
  for (const asset of record.assets) {
    for (const [i, caption] of (asset.derived?.captions ?? []).entries()) {
      add('caption', i === 0 ? asset.id : `${asset.id}:${i}`, caption);
    }
    if (asset.derived?.summary) add('caption', `${asset.id}:summary`, asset.derived.summary);
  }
  if (record.derived?.ocr) add('ocr', 'record', record.derived.ocr);
  for (const asset of record.assets) if (asset.derived?.ocr) add('ocr', asset.id, asset.derived.ocr);
  add('metadata', 'main', metadataText(record));
  for (const asset of record.assets) {
    if (asset.kind === 'image' && asset.uri !== undefined) add('image', asset.id, '', asset.uri);
    if (asset.kind !== 'video') continue;
    for (const [i, frame] of (asset.frames ?? []).entries()) {
      add('frame', `${asset.id}:${i}`, asset.frameText?.[i] ?? '', frame);
    }
  }
  return views;
}

/** "2024-06-03T14:05Z" -> "2024-06-03 3 June 2024 June 2024 2024 Monday" (date read from the string, no time zone shift). */
export function dateForms(timestamp: string): string[] {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(timestamp);
  if (!match) return [];
  const [, year, month, day] = match as unknown as [string, string, string, string];
  const monthName = MONTH_NAMES[Number(month) - 1];
  if (monthName === undefined) return [];
  const weekday =
    WEEKDAY_NAMES[new Date(Date.UTC(Number(year), Number(month) - 1, Number(day))).getUTCDay()]!;
  return [
    `${year}-${month}-${day}`,
    `${Number(day)} ${monthName} ${year}`,
    `${monthName} ${year}`,
    year,
    weekday,
  ];
}

/** The text view of a record: "[day] speaker: text" for messages, the raw text otherwise (empty stays empty). */
export function searchableText(record: MemoryRecord): string {
  const text = record.text.trim();
  if (record.kind !== 'message' || text === '') return text;
  const day = record.timestamp === undefined ? undefined : dateForms(record.timestamp)[1];
  const speaker = record.speaker?.trim();
  const prefix = [day === undefined ? '' : `[${day}]`, speaker ? `${speaker}:` : '']
    .filter(Boolean)
    .join(' ');
  return prefix === '' ? text : `${prefix} ${text}`;
}

function metadataText(record: MemoryRecord): string {
  const parts: string[] = [record.kind];
  if (record.speaker) parts.push(record.speaker);
  if (record.role && record.role !== record.speaker) parts.push(record.role);
  const dates = new Set<string>();
  if (record.timestamp) dates.add(record.timestamp.slice(0, 10));
  for (const asset of record.assets) if (asset.exif?.takenAt) dates.add(asset.exif.takenAt.slice(0, 10));
  for (const date of dates) parts.push(...dateForms(date));
  if (record.location?.name) parts.push(record.location.name);
  // Loops, not push(...): spreading a huge tag list passes every tag as an argument and overflows the stack.
  for (const tag of record.derived?.tags ?? []) parts.push(tag);
  for (const asset of record.assets) for (const tag of assetTags(asset)) parts.push(tag);
  return [...new Set(parts)].join(' ');
}

function assetTags(asset: MediaAsset): string[] {
  return asset.derived?.tags ?? [];
}
