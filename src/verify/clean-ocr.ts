import { tokenize } from '../retrieval/tokenize.ts';

/** OCR characters the verifier snippet may hold (method notes 4). */
export const SNIPPET_OCR_CHARS = 120;
/** OCR characters of one evidence item in the reader packet (method notes 9). */
export const PACKET_OCR_CHARS = 320;

/**
 * Cleans raw OCR text for a prompt, query-aware (method notes 4):
 * 1. split into lines, collapse whitespace;
 * 2. drop lines with fewer than 2 letters/digits, or under 25% letters/digits (of non-space characters);
 * 3. drop near-duplicates (same letters/digits ignoring case, or token sets with Jaccard >= 0.8);
 * 4. order lines by preference, stable: lines sharing a question token first, then lines with a number or a
 *    currency sign, then the rest;
 * 5. join with " | " and cut at `maxChars` (on a character boundary; the last line may be cut).
 */
export function cleanOcr(raw: string, questionText: string, maxChars: number): string {
  if (maxChars <= 0 || raw.trim() === '') return '';
  const questionTerms = new Set(tokenize(questionText));
  const kept: { line: string; tokens: Set<string>; signature: string }[] = [];
  for (const rawLine of raw.split(/\r?\n/)) {
    const line = rawLine.replace(/\s+/g, ' ').trim();
    if (!isReadableLine(line)) continue;
    const signature = line.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
    const tokens = new Set(tokenize(line));
    if (kept.some((other) => other.signature === signature || jaccard(other.tokens, tokens) >= 0.8)) continue;
    kept.push({ line, tokens, signature });
  }
  const ranked = kept
    .map((entry, index) => ({
      entry,
      index,
      preference: preference(entry.line, entry.tokens, questionTerms),
    }))
    .sort((x, y) => y.preference - x.preference || x.index - y.index);
  return truncate(ranked.map(({ entry }) => entry.line).join(' | '), maxChars);
}

/** Cuts `text` to at most `maxChars` characters, marking a cut with an ellipsis inside the budget. */
export function truncate(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  if (maxChars <= 1) return text.slice(0, Math.max(0, maxChars));
  return `${text.slice(0, maxChars - 1).trimEnd()}…`;
}

function isReadableLine(line: string): boolean {
  const alnum = line.match(/[\p{L}\p{N}]/gu)?.length ?? 0;
  if (alnum < 2) return false;
  const visible = line.replace(/\s/g, '').length;
  return visible > 0 && alnum / visible >= 0.25;
}

function preference(line: string, tokens: Set<string>, questionTerms: Set<string>): number {
  for (const token of tokens) if (questionTerms.has(token)) return 2;
  return /[\p{N}$€£¥₹]/u.test(line) ? 1 : 0;
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const token of a) if (b.has(token)) shared++;
  return shared / (a.size + b.size - shared);
}
