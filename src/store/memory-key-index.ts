import type { MemoryRecord } from '../types/memory-record.ts';
import { lowerBound } from './lower-bound.ts';
import { compareStrings } from './store-rules.ts';

/**
 * The relation-key index of the in-memory store (MemoryWrite.keys): key -> ids, id -> keys, and the distinct
 * keys kept sorted for range lookups. Lookups read only the key groups they name (plus a binary search for
 * ranges), so the incremental relation path stays independent of the context size here too.
 */
export class MemoryKeyIndex {
  private readonly idsByKey = new Map<string, Set<string>>();
  private readonly keysById = new Map<string, readonly string[]>();
  /** Distinct keys in string order (binary-searched; insertion is a memmove, cheap next to a write). */
  private readonly sorted: string[] = [];

  /** Replaces the keys of `id` (none when `keys` is empty). */
  set(id: string, keys: readonly string[]): void {
    this.remove(id);
    const unique = [...new Set(keys)];
    if (unique.length === 0) return;
    this.keysById.set(id, unique);
    for (const key of unique) {
      let ids = this.idsByKey.get(key);
      if (!ids) {
        ids = new Set();
        this.idsByKey.set(key, ids);
        this.sorted.splice(lowerBound(this.sorted, key, byCodeUnits), 0, key);
      }
      ids.add(id);
    }
  }

  remove(id: string): void {
    for (const key of this.keysById.get(id) ?? []) {
      const ids = this.idsByKey.get(key);
      ids?.delete(id);
      if (ids && ids.size === 0) {
        this.idsByKey.delete(key);
        this.sorted.splice(lowerBound(this.sorted, key, byCodeUnits), 1);
      }
    }
    this.keysById.delete(id);
  }

  /** Records holding any of `keys`, in (sequence, id) order. */
  find(keys: readonly string[], records: (id: string) => MemoryRecord | undefined): MemoryRecord[] {
    const ids = new Set<string>();
    for (const key of keys) for (const id of this.idsByKey.get(key) ?? []) ids.add(id);
    return [...ids].flatMap((id) => records(id) ?? []).sort(bySequence);
  }

  adjacent(
    key: string,
    position: { sequence: number; id: string },
    direction: 'before' | 'after',
    records: (id: string) => MemoryRecord | undefined,
  ): MemoryRecord | undefined {
    let best: MemoryRecord | undefined;
    for (const id of this.idsByKey.get(key) ?? []) {
      const record = records(id);
      if (!record) continue;
      const order = bySequence(record, position);
      if (direction === 'before' ? order >= 0 : order <= 0) continue;
      if (!best || (direction === 'before' ? bySequence(record, best) > 0 : bySequence(record, best) < 0)) {
        best = record;
      }
    }
    return best;
  }

  range(from: string, to: string, limit = Number.POSITIVE_INFINITY): Array<{ key: string; id: string }> {
    const out: Array<{ key: string; id: string }> = [];
    for (
      let at = lowerBound(this.sorted, from, byCodeUnits);
      at < this.sorted.length && out.length < limit;
      at++
    ) {
      const key = this.sorted[at]!;
      if (key > to) break;
      for (const id of [...this.idsByKey.get(key)!].sort(compareStrings)) out.push({ key, id });
    }
    return out.slice(0, limit);
  }
}

function bySequence(x: { sequence: number; id: string }, y: { sequence: number; id: string }): number {
  return x.sequence - y.sequence || compareStrings(x.id, y.id);
}

/** JS string order (UTF-16 code units), the order of `sorted`. */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
