import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/digest/semantic/seeded-random.ts';
import type { VectorRow } from '../../src/store/archive-store-spec.ts';
import { VectorIndex } from '../../src/store/vector-index.ts';

/** Deterministic pseudo-random numbers so the test replays exactly. */
const random = mulberry32;

function clusteredRows(n: number, dims: number, clusters: number, seed: number): VectorRow[] {
  const next = random(seed);
  const centres = Array.from({ length: clusters }, () => Array.from({ length: dims }, () => next() * 2 - 1));
  return Array.from({ length: n }, (_, i) => {
    const centre = centres[i % clusters]!;
    const vector = Float32Array.from(centre, (v) => v + (next() - 0.5) * 0.3);
    return { memoryId: `m${i}`, kind: 'text', key: 'main', vector };
  });
}

describe('VectorIndex', () => {
  it('is exact below the threshold', () => {
    const rows = clusteredRows(500, 8, 10, 1);
    const index = new VectorIndex(rows);
    expect(index.approximate).toBe(false);
    const query = rows[7]!.vector;
    expect(index.search(query, { limit: 1 })[0]!.memoryId).toBe('m7');
  });

  it('uses IVF above the threshold with high recall against the exact scan', () => {
    const rows = clusteredRows(6000, 16, 40, 2);
    const exact = new VectorIndex(rows);
    const approximate = new VectorIndex(rows, { approximateAbove: 1000 });
    expect(approximate.approximate).toBe(true);
    const next = random(3);
    let found = 0;
    let total = 0;
    for (let q = 0; q < 30; q++) {
      const query = rows[Math.floor(next() * rows.length)]!.vector;
      const truth = new Set(exact.search(query, { limit: 10 }).map((h) => h.memoryId));
      const hits = approximate.search(query, { limit: 10 });
      expect(hits).toHaveLength(10);
      for (const hit of hits) if (truth.has(hit.memoryId)) found++;
      total += truth.size;
    }
    expect(found / total).toBeGreaterThan(0.9);
  });
  it('kept up to date by upserts and removals, searches exactly as an index built from the live rows', () => {
    const next = random(9);
    const index = new VectorIndex(clusteredRows(40, 6, 5, 8));
    const live = new Map(clusteredRows(40, 6, 5, 8).map((row) => [row.memoryId, row]));
    let fresh = 40;
    for (let step = 0; step < 300; step++) {
      const roll = next();
      const ids = [...live.keys()];
      if (roll < 0.5 || ids.length < 5) {
        const row: VectorRow = {
          memoryId: next() < 0.3 ? ids[Math.floor(next() * ids.length)]! : `m${fresh++}`,
          kind: 'text',
          key: 'main',
          vector: Float32Array.from({ length: 6 }, () => next() * 2 - 1),
        };
        index.upsert([row]);
        live.set(row.memoryId, row);
      } else {
        const id = ids[Math.floor(next() * ids.length)]!;
        expect(index.remove([{ memoryId: id, kind: 'text', key: 'main' }])).toBe(1);
        live.delete(id);
      }
      expect(index.size).toBe(live.size);
      const query = Float32Array.from({ length: 6 }, () => next() * 2 - 1);
      expect(index.search(query, { limit: 7 })).toEqual(
        new VectorIndex([...live.values()]).search(query, { limit: 7 }),
      );
      const some = ids.slice(0, 4);
      expect(index.search(query, { limit: 3, memoryIds: some })).toEqual(
        new VectorIndex([...live.values()]).search(query, { limit: 3, memoryIds: some }),
      );
    }
    expect(index.remove([{ memoryId: 'absent', kind: 'text', key: 'main' }])).toBe(0);
  });

  it('builds its IVF when upserts cross the threshold and rebuilds it as rows double or holes pile up', () => {
    const rows = clusteredRows(3000, 16, 30, 4);
    const index = new VectorIndex(rows.slice(0, 400), { approximateAbove: 500 });
    expect(index.approximate).toBe(false);
    index.upsert(rows.slice(400, 1600));
    expect(index.approximate).toBe(true);
    index.upsert(rows.slice(1600));
    index.remove(rows.slice(0, 1200));
    expect(index.size).toBe(1800);
    const live = rows.slice(1200);
    const exact = new VectorIndex(live);
    const next = random(6);
    let found = 0;
    for (let q = 0; q < 30; q++) {
      const query = live[Math.floor(next() * live.length)]!.vector;
      const truth = exact.search(query, { limit: 10 });
      const hits = index.search(query, { limit: 10 });
      expect(hits).toHaveLength(10);
      const scores = new Map(
        exact.search(query, { limit: live.length }).map((hit) => [hit.memoryId, hit.rawScore]),
      );
      // Only live rows, each with its exact cosine.
      for (const hit of hits) expect(hit.rawScore).toBe(scores.get(hit.memoryId));
      const wanted = new Set(truth.map((hit) => hit.memoryId));
      found += hits.filter((hit) => wanted.has(hit.memoryId)).length;
    }
    expect(found / 300).toBeGreaterThan(0.9);
  });
});
