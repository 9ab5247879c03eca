/**
 * mulberry32: a tiny seeded PRNG, uniform in [0, 1). Used where runs must replay exactly: the LSH hyperplanes of
 * the dense mutual-kNN, and the generated instances of tests and benchmarks.
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
