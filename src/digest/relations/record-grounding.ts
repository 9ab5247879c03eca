import type { MemoryRecord } from '../../types/memory-record.ts';
import { contentTokens, emailFacts } from './email-facts.ts';
import { haversineKm } from './haversine-km.ts';
import { type MediaCapture, mediaCapture } from './media-capture.ts';
import { orderedPair, type RecordPair } from './record-pair.ts';

/** Constants of the `record_grounding` rule (documented on `recordGroundingPairs`). */
export const RECORD_GROUNDING_RULE = {
  maxKm: 5,
  minSharedTokens: 2,
  maxMediaPerEmail: 20,
} as const;

/**
 * `record_grounding`: an email (kind 'email') and a media memory (`mediaCapture`) captured on a calendar day
 * the email states (`extractDates`, relative words anchored to the sent date), when also
 * - location agrees: every content token of one comma-separated part of the media's place name appears in
 *   the email ("Alfama, Lisbon" matches a mail saying "lisbon"), or the email's own location name matches
 *   that way, or both have coordinates within 5 km; or
 * - content agrees: at least 2 distinct content tokens (shared tokenizer, no numbers or calendar words,
 *   3+ characters) shared by the email and the media's text, captions, OCR, summary and tags.
 * At most 20 media per email are linked, most shared tokens first (then location match, then id), so a
 * day with hundreds of photos cannot flood one email.
 */
export function recordGroundingPairs(records: readonly MemoryRecord[]): RecordPair[] {
  const mediaByDay = new Map<string, GroundingMedia[]>();
  for (const record of records) {
    const capture = groundingCapture(record);
    if (!capture) continue;
    const list = mediaByDay.get(capture.day);
    if (list) list.push({ capture, record });
    else mediaByDay.set(capture.day, [{ capture, record }]);
  }
  if (mediaByDay.size === 0) return [];
  const tokensOf = memoizedMediaTokens();
  const out: RecordPair[] = [];
  for (const record of records) {
    if (record.kind !== 'email') continue;
    for (const id of groundingMatches(record, (day) => mediaByDay.get(day) ?? [], tokensOf)) {
      out.push(orderedPair(record.id, id));
    }
  }
  return out;
}

/** A media memory a mail can be grounded in, with its capture. */
export interface GroundingMedia {
  capture: MediaCapture;
  record: MemoryRecord;
}

/** The capture of a record that record_grounding can link to a mail: media that is not itself an email. */
export function groundingCapture(record: MemoryRecord): MediaCapture | undefined {
  return record.kind === 'email' ? undefined : mediaCapture(record);
}

/**
 * The media ids one email (kind 'email') is grounded in, ranked and capped as documented on
 * recordGroundingPairs; `mediaOn(day)` gives the media captured on a day (any order).
 */
export function groundingMatches(
  email: MemoryRecord,
  mediaOn: (day: string) => readonly GroundingMedia[],
  tokensOf: (media: MemoryRecord) => Set<string> = memoizedMediaTokens(),
): string[] {
  const facts = emailFacts(email);
  const matches: Array<{ id: string; shared: number; located: boolean }> = [];
  const seen = new Set<string>();
  for (const day of facts.statedDates) {
    for (const { capture, record: media } of mediaOn(day)) {
      if (seen.has(media.id) || media.id === email.id) continue;
      seen.add(media.id);
      const shared = countShared(facts.tokens, tokensOf(media));
      const located = locationAgrees(email, facts.tokens, capture);
      if (located || shared >= RECORD_GROUNDING_RULE.minSharedTokens) {
        matches.push({ id: media.id, shared, located });
      }
    }
  }
  matches.sort(
    (x, y) =>
      y.shared - x.shared ||
      Number(y.located) - Number(x.located) ||
      (x.id < y.id ? -1 : x.id > y.id ? 1 : 0),
  );
  return matches.slice(0, RECORD_GROUNDING_RULE.maxMediaPerEmail).map((match) => match.id);
}

/** Content tokens of a media memory's text and derived fields, computed once per record id. */
export function memoizedMediaTokens(): (media: MemoryRecord) => Set<string> {
  const cache = new Map<string, Set<string>>();
  return (media) => {
    let tokens = cache.get(media.id);
    if (!tokens) {
      tokens = contentTokens(mediaText(media));
      cache.set(media.id, tokens);
    }
    return tokens;
  };
}

function locationAgrees(email: MemoryRecord, emailTokens: Set<string>, capture: MediaCapture): boolean {
  const place = capture.placeName;
  if (place && placeMentioned(place, emailTokens)) return true;
  const emailPlace = email.location?.name;
  if (place && emailPlace && placeMentioned(emailPlace, contentTokens(place))) return true;
  const { lat, lon } = email.location ?? {};
  if (lat === undefined || lon === undefined || capture.lat === undefined || capture.lon === undefined) {
    return false;
  }
  return haversineKm(lat, lon, capture.lat, capture.lon) <= RECORD_GROUNDING_RULE.maxKm;
}

/** True when every token of at least one comma/semicolon-separated part of `place` is in `tokens`. */
function placeMentioned(place: string, tokens: Set<string>): boolean {
  return place.split(/[,;/|]/).some((part) => {
    const partTokens = contentTokens(part);
    if (partTokens.size === 0) return false;
    for (const token of partTokens) if (!tokens.has(token)) return false;
    return true;
  });
}

function countShared(x: Set<string>, y: Set<string>): number {
  const [small, large] = x.size <= y.size ? [x, y] : [y, x];
  let shared = 0;
  for (const token of small) if (large.has(token)) shared++;
  return shared;
}

function mediaText(record: MemoryRecord): string {
  const parts = [record.text];
  for (const derived of [record.derived, ...record.assets.map((asset) => asset.derived)]) {
    if (!derived) continue;
    // Loops, not spreads: a spread passes every element as an argument and overflows the stack on huge lists.
    for (const caption of derived.captions ?? []) parts.push(caption);
    parts.push(derived.ocr ?? '', derived.summary ?? '');
    for (const tag of derived.tags ?? []) parts.push(tag);
  }
  return parts.join('\n');
}
