import { mulberry32 } from '../src/digest/semantic/seeded-random.ts';
import { VectorIndex } from '../src/store/vector-index.ts';
const usearch = (await import('usearch')).default as any;
const n = Number(process.argv[2] ?? 100000), dims = 256, clusters = 500;
const random = mulberry32(7);
const gaussian = () => { const u = Math.max(1e-12, random()); return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random()); };
const centres = Array.from({ length: clusters }, () => Float32Array.from({ length: dims }, gaussian));
const spread = Float32Array.from({ length: dims }, (_, d) => 1.2 / Math.sqrt(d + 1) + 0.05);
const mix = () => { const v = new Float32Array(dims); const t = 1 + Math.floor(random() * 3); for (let i = 0; i < t; i++) { const c = centres[Math.floor(random() * clusters)]!; const w = 0.3 + random(); for (let d = 0; d < dims; d++) v[d]! += w * c[d]!; } for (let d = 0; d < dims; d++) v[d]! += 1.5 * spread[d]! * gaussian() * Math.sqrt(dims) * 0.1; return v; };
const rows = Array.from({ length: n }, (_, i) => ({ memoryId: `m${i}`, kind: 'text' as const, key: 'main', vector: mix() }));
const exact = new VectorIndex(rows, { approximateAbove: Infinity });
const qs = Array.from({ length: 100 }, mix);
const truth = qs.map((q) => exact.search(q, { limit: 10 }).map((h) => Number(h.memoryId.slice(1))));
const matrix = new Float32Array(n * dims); rows.forEach((r, i) => matrix.set(r.vector, i * dims));
for (const [M, efAdd] of [[32, 256], [16, 128]]) {
  let t = performance.now();
  const idx = new usearch.Index({ dimensions: dims, metric: 'cos', quantization: 'f32', connectivity: M, expansion_add: efAdd, expansion_search: 128, multi: false });
  idx.add(BigUint64Array.from({ length: n }, (_, i) => BigInt(i)), matrix, 0);
  console.log(`M ${M} efAdd ${efAdd}: build ${((performance.now() - t) / 1000).toFixed(1)} s`);
  for (const k of [74, 150, 300]) {
    let hits = 0; t = performance.now();
    for (const [i, q] of qs.entries()) { const keys = idx.search(q, k, 1).keys; const s = new Set(Array.from(keys, Number)); hits += truth[i]!.filter((x) => s.has(x)).length; }
    console.log(`  k' ${k}: recall ${(hits / 1000).toFixed(4)}, ${((performance.now() - t) / qs.length).toFixed(2)} ms/search`);
  }
}
