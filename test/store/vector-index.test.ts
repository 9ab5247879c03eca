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
});
