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
import { documentPartKey, KEY } from './relation-keys.ts';
import type { RecordChange, TypeDelta } from './type-delta.ts';

const MAX_GROUP = SAME_RECORD_RULE.maxGroup;

/**
 * same_record: every rule is a predicate on the pair (sameRecordLinked) given the sizes of the groups it caps:
 * reference code, stated date, Message-ID, In-Reply-To and subject groups of more than 50 emails link nothing.
 * So the dirty emails are the changed ones plus every member of a group whose size crossed 50 (all its pairs
 * appear or vanish); each dirty email's partners are found through its keys (small thread, code, date and
 * subject groups, its replies) and decided by the same predicate as the full rebuild.
 * Cost per dirty email: at most 51 emails per group it belongs to, each parent it names, and its replies
 * (readers of its Message-ID as an ancestor, one pair each); a crossing group adds up to 50 + (emails it
 * gained) dirty emails. Before round 55 the thread and subject groups were read whole: 1,000 replies to one
 * parent in one add read and paired 1,000 x 1,000.
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
  /** Reads a capped group up to the size that matters (51 plus what the change added). */
  const sized = async (key: string, joined = 0): Promise<MemoryRecord[]> => {
    const limit = MAX_GROUP + joined + 1;
    const { records, complete } = key.startsWith(KEY.subject)
      ? await lookup.prefixGroup(key, limit)
      : await lookup.group(key, limit);
    sizes.set(key, complete ? records.length : Number.POSITIVE_INFINITY);
    return records;
  };
  /** The members of a capped group when it is small (at most 50), else none; its size recorded. */
  const smallGroup = async (key: string): Promise<MemoryRecord[]> => {
    const members = await sized(key);
    return sizes.get(key)! <= MAX_GROUP ? members : [];
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

  const size = (key: string): number => sizes.get(key) ?? Number.POSITIVE_INFINITY;
  const groups: SameRecordGroups = {
    codeSize: (code) => size(KEY.code + code),
    dateSize: (date) => size(KEY.statedDate + date),
    messageIdSize: (id) => size(KEY.messageId + id),
    inReplyToSize: (id) => size(KEY.inReplyTo + id),
    subjectSize: (subject) => size(subjectGroupKey(subject)),
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
    // Its own groups (copies, siblings, codes, dates, subject), each read only up to 51: a small subject group
    // is read whole, and the predicate keeps the mails within 14 days.
    for (const key of groupKeys(email)) add(await smallGroup(key));
    // Its replies, when its Message-ID is not a flood (a reply is linked to each copy of its parent).
    if (email.messageId && size(KEY.messageId + email.messageId) <= MAX_GROUP) {
      add(await lookup.all(KEY.ancestor + email.messageId));
    }
    for (const ancestor of email.ancestors) add(await smallGroup(KEY.messageId + ancestor));
    for (const candidate of candidates.values()) {
      const other = factsOf(candidate);
      if (other && sameRecordLinked(email, other, groups)) delta.pairs.add(record.id, candidate.id);
    }
  }
}

/** The prefix of every subject key of one subject (`subjectKey`: subject, NUL, sent time). */
function subjectGroupKey(subject: string): string {
  return `${KEY.subject}${subject}\u0000`;
}

/** The capped groups an email belongs to: reference codes, stated dates, Message-ID, In-Reply-To, subject. */
function groupKeys(email: EmailFacts | undefined): string[] {
  if (!email) return [];
  return [
    ...new Set([
      ...email.referenceCodes.map((code) => KEY.code + code),
      ...email.statedDates.map((date) => KEY.statedDate + date),
      ...(email.messageId ? [KEY.messageId + email.messageId] : []),
      ...(email.inReplyTo ? [KEY.inReplyTo + email.inReplyTo] : []),
      ...(subjectEligible(email) ? [subjectGroupKey(email.subject)] : []),
    ]),
  ];
}
