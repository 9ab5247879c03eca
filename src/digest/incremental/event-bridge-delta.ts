import type { MemoryRecord } from '../../types/memory-record.ts';
import { bridgeCapture, EVENT_BRIDGE_RULE, eventBridgePairs } from '../relations/event-bridge.ts';
import type { KeyLookup } from './key-lookup.ts';
import { encodeTime, KEY } from './relation-keys.ts';
import type { RecordChange, TypeDelta } from './type-delta.ts';

const GAP_MS = EVENT_BRIDGE_RULE.maxSeconds * 1000;

/**
 * event_bridge: pairs only join captures at most 1 hour apart, so the greedy degree cap decomposes over
 * maximal chains of captures (by time) whose consecutive gaps are <= 1 hour: no candidate crosses chains
 * and degrees are per capture. A change can only alter the chains within 1 hour of its old or new capture
 * time; those chains are read whole (walking outwards an hour at a time until a gap) and recomputed with
 * the same eventBridgePairs as the full rebuild, so the result is exact. Cost: the length of the affected
 * chains (a camera shooting at least hourly for a month makes one long chain), never the context size.
 */
export async function eventBridgeDelta(
  lookup: KeyLookup,
  changes: readonly RecordChange[],
  delta: TypeDelta,
): Promise<void> {
  const seeds: number[] = [];
  for (const { before, after } of changes) {
    for (const record of [before, after]) {
      const capture = record === undefined ? undefined : bridgeCapture(record);
      if (capture) seeds.push(capture.timeMs);
    }
  }
  if (seeds.length === 0) return;
  const members = new Map<string, MemoryRecord>();
  const covered: Array<[number, number]> = [];
  for (const seed of seeds.sort((x, y) => x - y)) {
    if (covered.some(([lo, hi]) => seed >= lo && seed <= hi)) continue;
    const span = await readChains(lookup, seed, members);
    if (span) covered.push(span);
  }
  const region = [...members.values()];
  delta.markDirty(region);
  for (const [a, b] of eventBridgePairs(region)) delta.pairs.add(a, b);
}

/** Reads the whole chains holding a capture within 1 hour of `seed`; returns their time span. */
async function readChains(
  lookup: KeyLookup,
  seed: number,
  members: Map<string, MemoryRecord>,
): Promise<[number, number] | undefined> {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  const take = async (from: number, to: number): Promise<boolean> => {
    let found = false;
    for (const record of await lookup.range(
      KEY.bridgeTime + encodeTime(from),
      KEY.bridgeTime + encodeTime(to),
    )) {
      const capture = bridgeCapture(record);
      if (!capture) continue;
      found = true;
      members.set(record.id, record);
      lo = Math.min(lo, capture.timeMs);
      hi = Math.max(hi, capture.timeMs);
    }
    return found;
  };
  if (!(await take(seed - GAP_MS, seed + GAP_MS))) return undefined;
  // Every capture at `lo` came with the window that found it, so each step reads the hour before it only.
  while (await take(lo - GAP_MS, lo - 1)) {}
  while (await take(hi + 1, hi + GAP_MS)) {}
  return [lo, hi];
}
