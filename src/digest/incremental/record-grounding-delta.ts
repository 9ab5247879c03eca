import type { MemoryRecord } from '../../types/memory-record.ts';
import { emailFacts } from '../relations/email-facts.ts';
import {
  type GroundingMedia,
  groundingCapture,
  groundingMatches,
  memoizedMediaTokens,
} from '../relations/record-grounding.ts';
import type { KeyLookup } from './key-lookup.ts';
import { KEY } from './relation-keys.ts';
import type { RecordChange, TypeDelta } from './type-delta.ts';

/**
 * record_grounding: each email links its top 20 media of the days it states, so an email's pairs change when
 * the email changes or when media of one of its days changes (joins, leaves, or changes text or place).
 * Dirty: the changed emails and every email stating the old or new capture day of a changed media record;
 * each is re-ranked with the same groundingMatches as the full rebuild. Cost: the emails stating those days
 * plus the media of every day a dirty email states (uncapped groups: ranking needs all candidates).
 */
export async function recordGroundingDelta(
  lookup: KeyLookup,
  changes: readonly RecordChange[],
  delta: TypeDelta,
): Promise<void> {
  const emails = new Map<string, MemoryRecord>();
  for (const { before, after } of changes) {
    if (after?.kind === 'email') emails.set(after.id, after);
    for (const record of [before, after]) {
      const day = record === undefined ? undefined : groundingCapture(record)?.day;
      if (day === undefined) continue;
      for (const email of await lookup.all(KEY.statedDate + day)) {
        if (email.kind === 'email') emails.set(email.id, email);
      }
    }
  }
  const mediaByDay = new Map<string, GroundingMedia[]>();
  const tokensOf = memoizedMediaTokens();
  for (const email of emails.values()) {
    delta.dirty.add(email.id);
    for (const day of emailFacts(email).statedDates) {
      if (mediaByDay.has(day)) continue;
      const media: GroundingMedia[] = [];
      for (const record of await lookup.all(KEY.captureDay + day)) {
        const capture = groundingCapture(record);
        if (capture?.day === day) media.push({ capture, record });
      }
      mediaByDay.set(day, media);
    }
    for (const id of groundingMatches(email, (day) => mediaByDay.get(day) ?? [], tokensOf)) {
      delta.pairs.add(email.id, id);
    }
  }
}
