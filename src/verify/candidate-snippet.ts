import type { MemoryRecord } from '../types/memory-record.ts';
import { cleanOcr, SNIPPET_OCR_CHARS, truncate } from './clean-ocr.ts';

/** Longest snippet a verifier sees per candidate (method notes 4). */
export const SNIPPET_CHARS = 420;

/** Every caption of a record: record-level first, then per asset, then summaries (no duplicates). */
export function recordCaptions(record: MemoryRecord): string[] {
  const captions: string[] = [...(record.derived?.captions ?? [])];
  for (const asset of record.assets)
    for (const caption of asset.derived?.captions ?? []) captions.push(caption);
  if (record.derived?.summary) captions.push(record.derived.summary);
  for (const asset of record.assets) if (asset.derived?.summary) captions.push(asset.derived.summary);
  return [...new Set(captions.map((c) => c.trim()).filter((c) => c !== ''))];
}

/** All OCR text of a record (record-level, then per asset), one block per source. */
export function recordOcr(record: MemoryRecord): string {
  const blocks = [record.derived?.ocr, ...record.assets.map((asset) => asset.derived?.ocr)];
  return blocks.filter((b): b is string => b !== undefined && b.trim() !== '').join('\n');
}

/** Modality tags of a record for prompts: 'text', 'image', 'video', ... in a fixed order. */
export function recordModalities(record: MemoryRecord): string[] {
  const tags = new Set<string>();
  if (record.text.trim() !== '') tags.add('text');
  for (const asset of record.assets) tags.add(asset.kind);
  if (recordOcr(record) !== '') tags.add('ocr');
  if (tags.size === 0) tags.add('text');
  return [...tags];
}

/** A record's location as one line ("Lisbon (38.7139, -9.1394)"), or undefined. */
export function locationText(record: MemoryRecord): string | undefined {
  const location = record.location;
  if (!location) return undefined;
  const coords =
    location.lat !== undefined && location.lon !== undefined
      ? `(${location.lat.toFixed(4)}, ${location.lon.toFixed(4)})`
      : undefined;
  const text = [location.name, coords].filter(Boolean).join(' ');
  return text === '' ? undefined : text;
}

/**
 * The query-aware verifier snippet (method notes 4): the memory's text, then its captions, then cleaned OCR
 * (at most 120 characters, lines sharing question terms first), then `Location: ...`; 420 characters in all.
 * OCR and location are reserved first, so a long message body is what gets cut, never the place.
 */
export function candidateSnippet(
  record: MemoryRecord,
  questionText: string,
  maxChars = SNIPPET_CHARS,
): string {
  const ocr = cleanOcr(recordOcr(record), questionText, SNIPPET_OCR_CHARS);
  const location = locationText(record);
  const tail = [
    ocr === '' ? undefined : `OCR: ${ocr}`,
    location === undefined ? undefined : `Location: ${location}`,
  ]
    .filter((part): part is string => part !== undefined)
    .join(' ');
  const body = [record.text.trim(), ...recordCaptions(record).map((c) => `[caption] ${c}`)]
    .filter((part) => part !== '')
    .join(' ')
    .replace(/\s+/g, ' ');
  if (tail === '') return truncate(body, maxChars);
  const bodyBudget = maxChars - tail.length - 1;
  if (body === '' || bodyBudget <= 0) return truncate(tail, maxChars);
  return `${truncate(body, bodyBudget)} ${tail}`;
}

/**
 * Texts derived from a record object, kept while the object lives: a question's verifiers and ranker read
 * each pool record's texts several times, and pool records are kept between questions
 * (src/pipeline/pool-records.ts). Records are read-only once read (nothing on the question path mutates them),
 * and the same string object makes the token cache's lookups cheap (its hash is computed once).
 */
const fullTexts = new WeakMap<MemoryRecord, string>();

/** Every text route of a record joined (text, captions, OCR, speaker): what offline verifiers read. */
export function recordFullText(record: MemoryRecord): string {
  let text = fullTexts.get(record);
  if (text === undefined) {
    text = [
      record.speaker ?? '',
      record.text,
      ...recordCaptions(record),
      recordOcr(record),
      record.location?.name ?? '',
    ]
      .filter((part) => part !== '')
      .join('\n');
    fullTexts.set(record, text);
  }
  return text;
}
