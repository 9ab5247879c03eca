import type { MemoryRecord } from '../../types/memory-record.ts';
import { compareBySequence, PairSet, type RecordPair } from './record-pair.ts';

/**
 * A native round larger than this is almost surely a mis-mapped id (a dataset field reused for something
 * else); its members are chained by sequence instead of fully connected, so bad input cannot make the
 * relation quadratic. Real rounds have 2 members (user + assistant), a few more in multi-party data.
 */
export const MAX_ROUND_CLIQUE = 32;

/**
 * `same_round`: every pair of records sharing a native round id (Mem-Gallery: the user and the assistant
 * message of one round). Records without a round id are not linked.
 */
export function sameRoundPairs(records: readonly MemoryRecord[]): RecordPair[] {
  const rounds = new Map<string, MemoryRecord[]>();
  for (const record of records) {
    const round = roundOf(record);
    if (round === undefined) continue;
    const members = rounds.get(round);
    if (members) members.push(record);
    else rounds.set(round, [record]);
  }
  const out = new PairSet();
  for (const members of rounds.values()) {
    if (members.length > MAX_ROUND_CLIQUE) {
      const chain = [...members].sort(compareBySequence);
      for (let i = 1; i < chain.length; i++) out.add(chain[i - 1]!.id, chain[i]!.id);
      continue;
    }
    for (let i = 0; i < members.length; i++) {
      for (let j = i + 1; j < members.length; j++) out.add(members[i]!.id, members[j]!.id);
    }
  }
  return out.pairs;
}

/** The native round of a record; undefined when it has none. */
export function roundOf(record: MemoryRecord): string | undefined {
  return record.roundId === undefined || record.roundId === '' ? undefined : record.roundId;
}
