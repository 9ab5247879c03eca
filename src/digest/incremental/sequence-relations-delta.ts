import type { MemoryRecord } from '../../types/memory-record.ts';
import { turnSession } from '../relations/consecutive-turn.ts';
import { MAX_ROUND_CLIQUE, roundOf, sameRoundPairs } from '../relations/same-round.ts';
import { chainDelta } from './chain-delta.ts';
import type { ChainPosition, KeyLookup } from './key-lookup.ts';
import { KEY } from './relation-keys.ts';
import type { RecordChange, TypeDelta } from './type-delta.ts';

/** consecutive_turn: the turn chain of every session a change left or joined. */
export async function consecutiveTurnDelta(
  lookup: KeyLookup,
  changes: readonly RecordChange[],
  delta: TypeDelta,
): Promise<void> {
  for (const [session, { current, oldPlaces }] of groupChanges(changes, turnSession)) {
    await chainDelta(lookup, KEY.turn + session, current, oldPlaces, delta);
  }
}

/**
 * same_round: a round of at most MAX_ROUND_CLIQUE members is a clique, a larger one a chain by sequence.
 * When the round is (or was, before the change) a clique, it is read whole (at most MAX_ROUND_CLIQUE plus
 * the members the change added) and every member is dirty; when it is a chain before and after, only the
 * chain around the changed places is read (chainDelta), so a mis-mapped round of 100k members costs a few
 * reads too.
 */
export async function sameRoundDelta(
  lookup: KeyLookup,
  changes: readonly RecordChange[],
  delta: TypeDelta,
): Promise<void> {
  for (const [round, { current, oldPlaces, joined, left }] of groupChanges(changes, roundOf)) {
    const key = KEY.round + round;
    const limit = MAX_ROUND_CLIQUE + joined + 1;
    const { records, complete } = await lookup.group(key, limit);
    // Fewer than `limit` back: the size now is exact; the size before follows from who joined and left.
    // A full page means both sizes exceed MAX_ROUND_CLIQUE (before >= limit - joined + left).
    const sizeNow = records.length;
    const sizeBefore = sizeNow - joined + left;
    if (complete && (sizeNow <= MAX_ROUND_CLIQUE || sizeBefore <= MAX_ROUND_CLIQUE)) {
      delta.markDirty(records);
      for (const [a, b] of sameRoundPairs(records)) delta.pairs.add(a, b);
    } else {
      await chainDelta(lookup, key, current, oldPlaces, delta);
    }
  }
}

interface GroupChanges {
  /** Changed records now in the group. */
  current: MemoryRecord[];
  /** Places changed records held in the group before. */
  oldPlaces: ChainPosition[];
  /** Changed records in the group now but not before, and the reverse. */
  joined: number;
  left: number;
}

function groupChanges(
  changes: readonly RecordChange[],
  groupOf: (record: MemoryRecord) => string | undefined,
): Map<string, GroupChanges> {
  const groups = new Map<string, GroupChanges>();
  const entry = (group: string): GroupChanges => {
    let found = groups.get(group);
    if (!found) {
      found = { current: [], oldPlaces: [], joined: 0, left: 0 };
      groups.set(group, found);
    }
    return found;
  };
  for (const { before, after } of changes) {
    const was = before === undefined ? undefined : groupOf(before);
    const now = after === undefined ? undefined : groupOf(after);
    if (was !== undefined) {
      entry(was).oldPlaces.push({ sequence: before!.sequence, id: before!.id });
      if (was !== now) entry(was).left += 1;
    }
    if (now !== undefined) {
      entry(now).current.push(after!);
      if (was !== now) entry(now).joined += 1;
    }
  }
  return groups;
}
