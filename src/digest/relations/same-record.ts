import type { MemoryRecord } from '../../types/memory-record.ts';
import { type EmailFacts, emailFacts } from './email-facts.ts';
import { PairSet, type RecordPair } from './record-pair.ts';

/** Constants of the `same_record` rules (documented on `sameRecordPairs`). */
export const SAME_RECORD_RULE = {
  subjectWindowDays: 14,
  minSubjectTokens: 2,
  minStemJaccard: 0.5,
  /** A reference code or event date shared by more emails than this is a template, not one record. */
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
 * Groups for rules 2 and 3 with more than 50 emails are skipped (templates, not records).
 */
export function sameRecordPairs(records: readonly MemoryRecord[]): RecordPair[] {
  const emails = records.filter((record) => record.kind === 'email').map(emailFacts);
  const out = new PairSet();
  linkThreads(emails, out);
  for (const group of groupBy(emails, (email) => email.referenceCodes).values()) {
    if (group.length <= SAME_RECORD_RULE.maxGroup) linkAll(group, out, () => true);
  }
  for (const group of groupBy(emails, (email) => email.statedDates).values()) {
    if (group.length <= SAME_RECORD_RULE.maxGroup) linkAll(group, out, stemsAgree);
  }
  linkSubjects(emails, out);
  return out.pairs;
}

function linkThreads(emails: readonly EmailFacts[], out: PairSet): void {
  const byMessageId = groupBy(emails, (email) => (email.messageId ? [email.messageId] : []));
  for (const group of byMessageId.values()) linkAll(group, out, () => true);
  for (const email of emails) {
    for (const ancestor of email.ancestors) {
      for (const parent of byMessageId.get(ancestor) ?? []) out.add(email.id, parent.id);
    }
  }
  const byParent = groupBy(emails, (email) => (email.inReplyTo ? [email.inReplyTo] : []));
  for (const siblings of byParent.values()) linkAll(siblings, out, () => true);
}

function linkSubjects(emails: readonly EmailFacts[], out: PairSet): void {
  const windowMs = SAME_RECORD_RULE.subjectWindowDays * 86_400_000;
  const bySubject = groupBy(emails, (email) =>
    email.timeMs !== undefined && email.subjectTokens >= SAME_RECORD_RULE.minSubjectTokens
      ? [email.subject]
      : [],
  );
  for (const group of bySubject.values()) {
    group.sort((x, y) => (x.timeMs ?? 0) - (y.timeMs ?? 0));
    for (let i = 0; i < group.length; i++) {
      for (let j = i + 1; j < group.length; j++) {
        const x = group[i]!;
        const y = group[j]!;
        if ((y.timeMs ?? 0) - (x.timeMs ?? 0) > windowMs) break;
        if (datesConflict(x, y)) continue;
        out.add(x.id, y.id);
      }
    }
  }
}

function stemsAgree(x: EmailFacts, y: EmailFacts): boolean {
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

function linkAll(
  group: readonly EmailFacts[],
  out: PairSet,
  accept: (x: EmailFacts, y: EmailFacts) => boolean,
): void {
  for (let i = 0; i < group.length; i++) {
    for (let j = i + 1; j < group.length; j++) {
      if (accept(group[i]!, group[j]!)) out.add(group[i]!.id, group[j]!.id);
    }
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
