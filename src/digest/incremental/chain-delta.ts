import type { MemoryRecord } from '../../types/memory-record.ts';
import { compareBySequence } from '../relations/record-pair.ts';
import type { ChainPosition, KeyLookup } from './key-lookup.ts';
import type { TypeDelta } from './type-delta.ts';

/**
 * Incremental adjacency over one (sequence, id)-ordered chain of the records holding `key`
 * (consecutive_turn per session; same_round for rounds too large to be cliques).
 *
 * `current`: changed records now in the chain; `oldPlaces`: where changed records were before (deleted or
 * moved). Every pair that appears or disappears has an end among `current`, their neighbours, or the
 * records now around an old place (what closes the gap a deleted turn leaves), so those are dirty; their
 * pairs are their previous and next records. Cost: about 4 adjacency reads per changed position, whatever
 * the chain length.
 */
export async function chainDelta(
  lookup: KeyLookup,
  key: string,
  current: readonly MemoryRecord[],
  oldPlaces: readonly ChainPosition[],
  delta: TypeDelta,
): Promise<void> {
  const prev = new Map<string, MemoryRecord | null>();
  const next = new Map<string, MemoryRecord | null>();
  const dirty = new Map<string, MemoryRecord>();
  const around = async (place: ChainPosition, record?: MemoryRecord): Promise<void> => {
    // Issued together: a networked store answers both in one round trip.
    const [before, after] = await Promise.all([
      lookup.adjacent(key, place, 'before'),
      lookup.adjacent(key, place, 'after'),
    ]);
    for (const found of [before, after]) if (found) dirty.set(found.id, found);
    if (!record) return;
    prev.set(record.id, before ?? null);
    next.set(record.id, after ?? null);
    // The reverse links come for free: the record is its neighbours' next / previous.
    if (before && !next.has(before.id)) next.set(before.id, record);
    if (after && !prev.has(after.id)) prev.set(after.id, record);
  };
  // Every place's neighbours read together first (KeyLookup caches them): the loops below then apply them in
  // order. A bulk import's chain had one round trip per record on a networked store.
  await Promise.all(
    [...current, ...oldPlaces].flatMap((place) => [
      lookup.adjacent(key, place, 'before'),
      lookup.adjacent(key, place, 'after'),
    ]),
  );
  for (const record of current) {
    dirty.set(record.id, record);
    await around(record, record);
  }
  for (const place of oldPlaces) await around(place);
  const ordered = [...dirty.values()].sort(compareBySequence);
  // The missing links of every dirty record, read together (KeyLookup caches them for the loop below).
  await Promise.all(
    ordered.flatMap((record) => [
      ...(prev.has(record.id) ? [] : [lookup.adjacent(key, record, 'before')]),
      ...(next.has(record.id) ? [] : [lookup.adjacent(key, record, 'after')]),
    ]),
  );
  for (const record of ordered) {
    if (!prev.has(record.id)) prev.set(record.id, (await lookup.adjacent(key, record, 'before')) ?? null);
    if (!next.has(record.id)) next.set(record.id, (await lookup.adjacent(key, record, 'after')) ?? null);
    const p = prev.get(record.id);
    const n = next.get(record.id);
    if (p) delta.pairs.add(p.id, record.id);
    if (n) delta.pairs.add(record.id, n.id);
    delta.dirty.add(record.id);
  }
}
