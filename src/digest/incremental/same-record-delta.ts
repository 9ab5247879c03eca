import { documentPartOf } from '../../types/document-parts.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';
import { type EmailFacts, emailFacts } from '../relations/email-facts.ts';
import {
  SAME_RECORD_RULE,
  type SameRecordGroups,
  sameRecordLinked,
  subjectEligible,
} from '../relations/same-record.ts';
import type { KeyLookup } from './key-lookup.ts';
import { documentPartKey, encodeTime, KEY } from './relation-keys.ts';
import type { RecordChange, TypeDelta } from './type-delta.ts';

const WINDOW_MS = SAME_RECORD_RULE.subjectWindowDays * 86_400_000;
const MAX_GROUP = SAME_RECORD_RULE.maxGroup;

/**
 * same_record: every rule is a predicate on the pair (sameRecordLinked) except that rules 2 and 3 skip
 * reference-code / stated-date groups of more than 50 emails. So the dirty emails are the changed ones plus
 * every member of a code or date group whose size crossed 50 (all its pairs appear or vanish); each dirty
 * email's partners are found through its keys (thread ids, small code/date groups, the subject within
 * 14 days) and decided by the same predicate as the full rebuild.
 * Cost per dirty email: its thread groups (uncapped, as in the rebuild), at most 51 per code or date, and
 * its subject's mails within 14 days; a crossing group adds up to 50 + (emails it gained) dirty emails.
 */
export async function sameRecordDelta(
  lookup: KeyLookup,
  changes: readonly RecordChange[],
  delta: TypeDelta,
): Promise<void> {
  // Cached by id for stored (current) records only: a change's `before` shares the id of its `after`.
  const facts = new Map<string, EmailFacts>();
  const factsOf = (record: MemoryRecord, stored = true): EmailFacts | undefined => {
    if (record.kind !== 'email') return undefined;
    if (!stored) return emailFacts(record);
    let found = facts.get(record.id);
    if (!found) {
      found = emailFacts(record);
      facts.set(record.id, found);
    }
    return found;
  };
  const sizes = new Map<string, number>();
  /** Reads a code/date group up to the size that matters (51 plus what the change added). */
  const sized = async (key: string, joined = 0): Promise<MemoryRecord[]> => {
    const { records, complete } = await lookup.group(key, MAX_GROUP + joined + 1);
    sizes.set(key, complete ? records.length : Number.POSITIVE_INFINITY);
    return records;
  };

  // Rule 5: a changed document part is linked to the parts before and after it, found by their place keys.
  for (const { after } of changes) {
    const place = after === undefined ? undefined : documentPartOf(after);
    if (after === undefined || place === undefined) continue;
    delta.dirty.add(after.id);
    for (const step of [-1, 1]) {
      if (place.part + step < 0) continue;
      for (const other of await lookup.all(documentPartKey(place.documentId, place.part + step))) {
        const otherPlace = documentPartOf(other);
        if (other.id !== after.id && otherPlace?.documentId === place.documentId) {
          delta.pairs.add(after.id, other.id);
        }
      }
    }
  }

  const dirty = new Map<string, MemoryRecord>();
  for (const { after } of changes) if (after && after.kind === 'email') dirty.set(after.id, after);

  // Groups whose size crossed 50: all their members are dirty.
  const membership = new Map<string, { joined: number; left: number }>();
  for (const { before, after } of changes) {
    const was = groupKeys(before === undefined ? undefined : factsOf(before, false));
    const now = groupKeys(after === undefined ? undefined : factsOf(after));
    for (const key of new Set([...was, ...now])) {
      const entry = membership.get(key) ?? { joined: 0, left: 0 };
      if (now.includes(key) && !was.includes(key)) entry.joined += 1;
      if (was.includes(key) && !now.includes(key)) entry.left += 1;
      membership.set(key, entry);
    }
  }
  for (const [key, { joined, left }] of membership) {
    const members = await sized(key, joined);
    const sizeNow = sizes.get(key)!;
    const sizeBefore = sizeNow - joined + left;
    if (sizeNow <= MAX_GROUP !== sizeBefore <= MAX_GROUP) for (const m of members) dirty.set(m.id, m);
  }

  const groups: SameRecordGroups = {
    codeSize: (code) => sizes.get(KEY.code + code) ?? Number.POSITIVE_INFINITY,
    dateSize: (date) => sizes.get(KEY.statedDate + date) ?? Number.POSITIVE_INFINITY,
  };
  for (const record of dirty.values()) {
    delta.dirty.add(record.id);
    const email = factsOf(record);
    if (!email) continue;
    const candidates = new Map<string, MemoryRecord>();
    const add = (records: readonly MemoryRecord[]) => {
      for (const candidate of records)
        if (candidate.id !== record.id) candidates.set(candidate.id, candidate);
    };
    if (email.messageId) {
      add(await lookup.all(KEY.messageId + email.messageId));
      add(await lookup.all(KEY.ancestor + email.messageId));
    }
    for (const ancestor of email.ancestors) add(await lookup.all(KEY.messageId + ancestor));
    if (email.inReplyTo) add(await lookup.all(KEY.inReplyTo + email.inReplyTo));
    for (const key of groupKeys(email)) {
      const members = sizes.has(key) ? (await lookup.group(key, MAX_GROUP + 1)).records : await sized(key);
      if (sizes.get(key)! <= MAX_GROUP) add(members);
    }
    if (subjectEligible(email)) {
      const prefix = `${KEY.subject}${email.subject}\u0000`;
      add(
        await lookup.range(
          prefix + encodeTime(email.timeMs! - WINDOW_MS),
          prefix + encodeTime(email.timeMs! + WINDOW_MS),
        ),
      );
    }
    for (const candidate of candidates.values()) {
      const other = factsOf(candidate);
      if (other && sameRecordLinked(email, other, groups)) delta.pairs.add(record.id, candidate.id);
    }
  }
}

/** The code and stated-date group keys of an email (the groups rules 2 and 3 cap). */
function groupKeys(email: EmailFacts | undefined): string[] {
  if (!email) return [];
  return [
    ...new Set([
      ...email.referenceCodes.map((code) => KEY.code + code),
      ...email.statedDates.map((date) => KEY.statedDate + date),
    ]),
  ];
}
