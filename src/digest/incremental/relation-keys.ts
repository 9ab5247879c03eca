import { MEDIA_PENDING_KEY } from '../../store/archive-store-spec.ts';
import { mediaReferenceKey } from '../../store/media-folder.ts';
import { documentPartOf } from '../../types/document-parts.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';
import { turnSession } from '../relations/consecutive-turn.ts';
import { type EmailFacts, emailFacts } from '../relations/email-facts.ts';
import { bridgeCapture } from '../relations/event-bridge.ts';
import { groundingCapture } from '../relations/record-grounding.ts';
import { subjectEligible } from '../relations/same-record.ts';
import { roundOf } from '../relations/same-round.ts';
import { explicitSupersedes, supersessionThread } from '../relations/supersedes.ts';

/**
 * Relation lookup keys: stored with each memory (MemoryWrite.keys) so the incremental path can find every
 * record that could share a schema relation with a changed one by key, never by scanning the context.
 * A key only narrows the candidates; the rules in src/digest/relations/* still decide every pair.
 */
export const KEY = {
  /** same_round: the native round. */
  round: 'round:',
  /** consecutive_turn: the session of a message (adjacency by (sequence, id) within the key). */
  turn: 'turn:',
  /** same_record rule 1: own Message-ID, each ancestor (In-Reply-To, References), the In-Reply-To. */
  messageId: 'mid:',
  ancestor: 'anc:',
  inReplyTo: 'irt:',
  /** same_record rule 2: each reference code. */
  code: 'ref:',
  /** same_record rule 3 and record_grounding: each day an email states. */
  statedDate: 'date:',
  /** same_record rule 4: normalised subject + NUL + sent time (range lookups over the 14-day window). */
  subject: 'subj:',
  /** same_record rule 5: a document part's place, `<document id> NUL <part number>` (0: the document). */
  documentPart: 'docpart:',
  /** record_grounding: the capture day of a (non-email) media memory. */
  captureDay: 'day:',
  /** event_bridge: capture time of media with coordinates (range lookups over 1-hour gaps). */
  bridgeTime: 'ebt:',
  /** supersedes detection: the thread a memory's revisions are looked for in (adjacency by (sequence, id)). */
  supersedesThread: 'sup:',
  /** supersedes, explicit: each id the memory lists, so the listed memory finds its lister when it changes. */
  supersedesTarget: 'sre:',
} as const;

/** Every relation lookup key of a record (deduplicated); empty for records no schema relation can touch. */
export function relationKeys(record: MemoryRecord): string[] {
  const keys: string[] = [];
  const round = roundOf(record);
  if (round !== undefined) keys.push(KEY.round + round);
  const session = turnSession(record);
  if (session !== undefined) keys.push(KEY.turn + session);
  if (record.kind === 'email') keys.push(...emailKeys(emailFacts(record)));
  const part = documentPartOf(record);
  if (part !== undefined) keys.push(documentPartKey(part.documentId, part.part));
  const day = groundingCapture(record)?.day;
  if (day !== undefined) keys.push(KEY.captureDay + day);
  const bridge = bridgeCapture(record);
  if (bridge) keys.push(KEY.bridgeTime + encodeTime(bridge.timeMs));
  const thread = supersessionThread(record);
  if (thread !== undefined) keys.push(KEY.supersedesThread + thread);
  for (const id of explicitSupersedes(record)) keys.push(KEY.supersedesTarget + id);
  // Not a relation: which memories reference a local media file (forget removes unreferenced uploads).
  for (const asset of record.assets) {
    for (const uri of [asset.uri, ...(asset.frames ?? []), asset.thumbnail]) {
      const key = uri === undefined ? undefined : mediaReferenceKey(uri);
      if (key !== undefined) keys.push(key);
    }
  }
  // Not a relation: a record whose media digest is queued, so the queue finds it again after a restart.
  if (record.media?.status === 'pending') keys.push(MEDIA_PENDING_KEY);
  return [...new Set(keys)];
}

export function documentPartKey(documentId: string, part: number): string {
  return `${KEY.documentPart}${documentId}\u0000${part}`;
}

/** Key of every record whose media digest is pending (src/digest/media/media-queue.ts). */
export { MEDIA_PENDING_KEY };

/** The keys of an email's facts (see KEY). */
export function emailKeys(facts: EmailFacts): string[] {
  const keys: string[] = [];
  if (facts.messageId) keys.push(KEY.messageId + facts.messageId);
  for (const ancestor of facts.ancestors) keys.push(KEY.ancestor + ancestor);
  if (facts.inReplyTo) keys.push(KEY.inReplyTo + facts.inReplyTo);
  for (const code of facts.referenceCodes) keys.push(KEY.code + code);
  for (const date of facts.statedDates) keys.push(KEY.statedDate + date);
  if (subjectEligible(facts)) keys.push(subjectKey(facts.subject, facts.timeMs!));
  return keys;
}

export function subjectKey(subject: string, timeMs: number): string {
  return `${KEY.subject}${subject}\u0000${encodeTime(timeMs)}`;
}

/**
 * A time in ms as a fixed-width decimal string whose string order is the numeric order (offset by 1e16 so
 * every Date value, negative ones included, is a 17-digit positive; BigInt keeps odd ms exact above 2^53).
 */
export function encodeTime(timeMs: number): string {
  return (BigInt(Math.round(timeMs)) + 10n ** 16n).toString().padStart(17, '0');
}
