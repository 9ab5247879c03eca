import { documentPartOf } from '../../types/document-parts.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';
import { type EmailFacts, emailFacts } from './email-facts.ts';
import { PairSet, type RecordPair } from './record-pair.ts';

/** Constants of the `same_record` rules (documented on `sameRecordPairs`). */
export const SAME_RECORD_RULE = {
  subjectWindowDays: 14,
  minSubjectTokens: 2,
  minStemJaccard: 0.5,
  /**
   * A reference code, event date, Message-ID, In-Reply-To or subject shared by more emails than this is a
   * template or a flood, not one record: its group rule links no pair (each of those rules links every pair of
   * its group, so one add of 1,000 emails replying to one parent made 499,500 edges).
   */
  maxGroup: 50,
} as const;

/**
 * `same_record` between emails (kind 'email'); a pair is linked when ANY rule holds:
 * 1. Threading: one's Message-ID is the other's In-Reply-To or in its References; or both reply to the same
 *    Message-ID (same In-Reply-To); or both carry the same Message-ID (one message stored twice).
 * 2. Reference number: both state the same explicit reference code (`extractReferenceCodes`).
 * 3. Event-date category: both state the same calendar day (`extractDates`, anchored to the sent date) and
 *    their subject stems agree (Jaccard >= 0.5 over stem tokens, at least one shared).
 * 4. Subject in time: identical normalised subjects with >= 2 content tokens, sent <= 14 days apart, unless
 *    both state event dates and no date is shared (a weekly "Team dinner" on different days is two records).
 * Groups with more than 50 emails are skipped (templates or floods, not records; round 55 for rules 1 and 4):
 * a reference code or stated date (rules 2, 3), a Message-ID (its copies, and replies to it), an In-Reply-To
 * (its siblings), a subject (rule 4, counted over all its eligible emails, any time).
 * 5. Documents (src/types/document-parts.ts): a document memory and its first part, and each
 *    part and the next one of the same document (a chain in reading order: consecutive pages or sections).
 */
export function sameRecordPairs(records: readonly MemoryRecord[]): RecordPair[] {
  const emails = records.filter((record) => record.kind === 'email').map(emailFacts);
  const codeGroups = groupBy(emails, (email) => email.referenceCodes);
  const dateGroups = groupBy(emails, (email) => email.statedDates);
  const byMessageId = groupBy(emails, (email) => (email.messageId ? [email.messageId] : []));
  const byInReplyTo = groupBy(emails, (email) => (email.inReplyTo ? [email.inReplyTo] : []));
  const bySubject = groupBy(emails, (email) => (subjectEligible(email) ? [email.subject] : []));
  const groups: SameRecordGroups = {
    codeSize: (code) => codeGroups.get(code)?.length ?? 0,
    dateSize: (date) => dateGroups.get(date)?.length ?? 0,
    messageIdSize: (id) => byMessageId.get(id)?.length ?? 0,
    inReplyToSize: (id) => byInReplyTo.get(id)?.length ?? 0,
    subjectSize: (subject) => bySubject.get(subject)?.length ?? 0,
  };
  const small = (group: readonly EmailFacts[] | undefined): readonly EmailFacts[] =>
    group !== undefined && group.length <= SAME_RECORD_RULE.maxGroup ? group : [];
  // Candidate pairs come from the groups the rules read; `sameRecordLinked` decides every pair, so the
  // incremental path (src/digest/incremental/same-record-delta.ts) applies exactly the same rules.
  const out = new PairSet();
  for (const [a, b] of documentPartPairs(records)) out.add(a, b);
  const consider = (x: EmailFacts, y: EmailFacts): void => {
    if (x.id !== y.id && !out.has(x.id, y.id) && sameRecordLinked(x, y, groups)) out.add(x.id, y.id);
  };
  for (const group of byMessageId.values()) eachPair(small(group), consider);
  for (const email of emails) {
    for (const ancestor of email.ancestors) {
      for (const parent of small(byMessageId.get(ancestor))) consider(email, parent);
    }
  }
  for (const groupsOfRule of [byInReplyTo, codeGroups, dateGroups]) {
    for (const group of groupsOfRule.values()) eachPair(small(group), consider);
  }
  const windowMs = SAME_RECORD_RULE.subjectWindowDays * 86_400_000;
  for (const group of bySubject.values()) {
    if (group.length > SAME_RECORD_RULE.maxGroup) continue;
    group.sort((x, y) => (x.timeMs ?? 0) - (y.timeMs ?? 0));
    for (let i = 0; i < group.length; i++) {
      for (let j = i + 1; j < group.length; j++) {
        if ((group[j]!.timeMs ?? 0) - (group[i]!.timeMs ?? 0) > windowMs) break;
        consider(group[i]!, group[j]!);
      }
    }
  }
  return out.pairs;
}

/** Sizes of the context's groups the rules cap (more than SAME_RECORD_RULE.maxGroup: the rule is skipped). */
export interface SameRecordGroups {
  codeSize(code: string): number;
  dateSize(date: string): number;
  /** Emails carrying this Message-ID (copies of one message). */
  messageIdSize(id: string): number;
  /** Emails replying to this Message-ID. */
  inReplyToSize(id: string): number;
  /** Emails eligible for rule 4 with this normalised subject. */
  subjectSize(subject: string): number;
}

/** Rules 1-4 for one pair of distinct emails (see sameRecordPairs). */
export function sameRecordLinked(x: EmailFacts, y: EmailFacts, groups: SameRecordGroups): boolean {
  if (threadLinked(x, y, groups)) return true;
  const max = SAME_RECORD_RULE.maxGroup;
  if (x.referenceCodes.some((code) => y.referenceCodes.includes(code) && groups.codeSize(code) <= max)) {
    return true;
  }
  if (
    x.statedDates.some((date) => y.statedDates.includes(date) && groups.dateSize(date) <= max) &&
    stemsAgree(x, y)
  ) {
    return true;
  }
  return subjectLinked(x, y) && groups.subjectSize(x.subject) <= max;
}

/**
 * Rule 1: reply/reference, shared parent, or one message stored twice; a Message-ID carried by more than
 * maxGroup emails links none of them, nor their replies, and more than maxGroup replies to one parent are not
 * linked to each other (each still is to the parent).
 */
export function threadLinked(x: EmailFacts, y: EmailFacts, groups: SameRecordGroups): boolean {
  const max = SAME_RECORD_RULE.maxGroup;
  const parentOk = (id: string): boolean => groups.messageIdSize(id) <= max;
  if (
    x.messageId &&
    (x.messageId === y.messageId || y.ancestors.includes(x.messageId)) &&
    parentOk(x.messageId)
  )
    return true;
  if (y.messageId && x.ancestors.includes(y.messageId) && parentOk(y.messageId)) return true;
  return (
    x.inReplyTo !== undefined &&
    x.inReplyTo !== '' &&
    x.inReplyTo === y.inReplyTo &&
    groups.inReplyToSize(x.inReplyTo) <= max
  );
}

/** Rule 4: identical subject of 2+ content tokens, sent <= 14 days apart, no conflicting event dates. */
export function subjectLinked(x: EmailFacts, y: EmailFacts): boolean {
  if (!subjectEligible(x) || !subjectEligible(y) || x.subject !== y.subject) return false;
  if (Math.abs(x.timeMs! - y.timeMs!) > SAME_RECORD_RULE.subjectWindowDays * 86_400_000) return false;
  return !datesConflict(x, y);
}

/** Whether rule 4 applies to an email at all: a sent time and a subject of 2+ content tokens. */
export function subjectEligible(email: EmailFacts): boolean {
  return email.timeMs !== undefined && email.subjectTokens >= SAME_RECORD_RULE.minSubjectTokens;
}

export function stemsAgree(x: EmailFacts, y: EmailFacts): boolean {
  if (x.stem.length === 0 || y.stem.length === 0) return false;
  const ys = new Set(y.stem);
  const shared = x.stem.filter((token) => ys.has(token)).length;
  if (shared === 0) return false;
  return shared / (x.stem.length + y.stem.length - shared) >= SAME_RECORD_RULE.minStemJaccard;
}

function datesConflict(x: EmailFacts, y: EmailFacts): boolean {
  if (x.statedDates.length === 0 || y.statedDates.length === 0) return false;
  return !x.statedDates.some((date) => y.statedDates.includes(date));
}

function eachPair(group: readonly EmailFacts[], visit: (x: EmailFacts, y: EmailFacts) => void): void {
  for (let i = 0; i < group.length; i++) {
    for (let j = i + 1; j < group.length; j++) visit(group[i]!, group[j]!);
  }
}

function groupBy(
  emails: readonly EmailFacts[],
  keys: (email: EmailFacts) => readonly string[],
): Map<string, EmailFacts[]> {
  const groups = new Map<string, EmailFacts[]>();
  for (const email of emails) {
    for (const key of new Set(keys(email))) {
      const group = groups.get(key);
      if (group) group.push(email);
      else groups.set(key, [email]);
    }
  }
  return groups;
}

/** Rule 5: each document part with the one before it (part 1 with the document memory itself). */
export function documentPartPairs(records: readonly MemoryRecord[]): [string, string][] {
  const byPlace = new Map<string, string>();
  const parts: { id: string; documentId: string; part: number }[] = [];
  for (const record of records) {
    const place = documentPartOf(record);
    if (place === undefined) continue;
    byPlace.set(`${place.documentId}\u0000${place.part}`, record.id);
    parts.push({ id: record.id, ...place });
  }
  const pairs: [string, string][] = [];
  for (const { id, documentId, part } of parts) {
    const previous = byPlace.get(`${documentId}\u0000${part - 1}`);
    if (previous !== undefined && previous !== id) pairs.push([previous, id]);
  }
  return pairs;
}
