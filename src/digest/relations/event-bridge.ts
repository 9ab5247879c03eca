import type { MemoryRecord } from '../../types/memory-record.ts';
import { haversineKm } from './haversine-km.ts';
import { type MediaCapture, mediaCapture } from './media-capture.ts';
import { orderedPair, type RecordPair } from './record-pair.ts';

/** Paper A.1: complementary media 1 minute to 1 hour apart (inclusive) and within 5 km. */
export const EVENT_BRIDGE_RULE = {
  minSeconds: 60,
  maxSeconds: 3600,
  maxKm: 5,
  maxNeighbours: 2,
} as const;

/**
 * `event_bridge`: media memories (see `mediaCapture`) captured 60 s to 3600 s apart (both bounds
 * inclusive; closer captures are near-duplicates of one moment, not complementary views of an event) and
 * within 5 km (haversine, inclusive). Both records need coordinates: without them "within 5 km" cannot
 * hold, so they are not linked.
 *
 * Neighbour cap (symmetric): every eligible pair is ranked by time gap, then distance, then ids; pairs are
 * accepted in that order while BOTH ends have fewer than two accepted neighbours. So no memory ever has
 * more than two event_bridge neighbours, each memory keeps its nearest-in-time partners unless those
 * partners are already full, and the result does not depend on input order. No pair spans a gap of more
 * than 1 hour, so the result over a set of whole time chains (consecutive gaps <= 1 h) is the result per
 * chain: the incremental path recomputes only the chains a change touches.
 */
export function eventBridgePairs(records: readonly MemoryRecord[]): RecordPair[] {
  const media = records
    .map(bridgeCapture)
    .filter((capture) => capture !== undefined)
    .sort((x, y) => x.timeMs - y.timeMs || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));

  const candidates: Array<{ pair: RecordPair; gap: number; km: number }> = [];
  const maxGapMs = EVENT_BRIDGE_RULE.maxSeconds * 1000;
  const minGapMs = EVENT_BRIDGE_RULE.minSeconds * 1000;
  for (let i = 0; i < media.length; i++) {
    const x = media[i]!;
    for (let j = i + 1; j < media.length; j++) {
      const y = media[j]!;
      const gap = y.timeMs - x.timeMs;
      if (gap > maxGapMs) break;
      if (gap < minGapMs) continue;
      const km = haversineKm(x.lat, x.lon, y.lat, y.lon);
      if (km > EVENT_BRIDGE_RULE.maxKm) continue;
      candidates.push({ pair: orderedPair(x.id, y.id), gap, km });
    }
  }
  candidates.sort(
    (p, q) => p.gap - q.gap || p.km - q.km || compare(p.pair[0], q.pair[0]) || compare(p.pair[1], q.pair[1]),
  );

  const degree = new Map<string, number>();
  const out: RecordPair[] = [];
  for (const { pair } of candidates) {
    const [a, b] = pair;
    const da = degree.get(a) ?? 0;
    const db = degree.get(b) ?? 0;
    if (da >= EVENT_BRIDGE_RULE.maxNeighbours || db >= EVENT_BRIDGE_RULE.maxNeighbours) continue;
    degree.set(a, da + 1);
    degree.set(b, db + 1);
    out.push(pair);
  }
  return out;
}

/** A capture that can take part in event_bridge: media with a time and coordinates. */
export function bridgeCapture(record: MemoryRecord): BridgeCapture | undefined {
  const capture = mediaCapture(record);
  return capture !== undefined && capture.lat !== undefined && capture.lon !== undefined
    ? (capture as BridgeCapture)
    : undefined;
}

export type BridgeCapture = MediaCapture & { lat: number; lon: number };

function compare(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}
