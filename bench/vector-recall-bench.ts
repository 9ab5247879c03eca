/**
 * `npx tsx bench/vector-recall-bench.ts [--sizes 20000,50000] [--dims 256] [--queries 200] [--clusters 500]
 *   [--noise 0.6]`
 *
 * Recall@10 of the store's approximate vector search (VectorIndex's IVF, used above
 * APPROXIMATE_VECTOR_THRESHOLD vectors in one context and space) against the exact scan, on seeded
 * clustered unit vectors (cluster centres plus Gaussian noise: real embeddings are clustered, and uniform
 * random vectors make every index look bad). Issue #10 asks for recall@10 >= 0.98 from the approximate
 * index. No model weights are downloadable here, so the vectors are generated; queries are perturbed
 * stored vectors (a question near what was written).
 */
import { mulberry32 } from '../src/digest/semantic/seeded-random.ts';
import type { VectorRow } from '../src/store/archive-store-spec.ts';
import { VectorIndex } from '../src/store/vector-index.ts';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string): string => {
  const at = args.indexOf(`--${name}`);
  return at < 0 ? fallback : args[at + 1]!;
};
const sizes = flag('sizes', '20000,50000').split(',').map(Number);
const dims = Number(flag('dims', '256'));
const queries = Number(flag('queries', '200'));
const clusters = Number(flag('clusters', '500'));
/** Noise per coordinate around a cluster centre (centres are N(0, 1) per coordinate): higher = harder. */
const noise = Number(flag('noise', '0.6'));

const random = mulberry32(7);
const gaussian = (): number => {
  const u = Math.max(1e-12, random());
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
};
const centres = Array.from({ length: clusters }, () => Float32Array.from({ length: dims }, gaussian));
const near = (centre: Float32Array, noise: number): Float32Array =>
  Float32Array.from(centre, (value) => value + noise * gaussian());

const rows: string[] = [];
for (const n of sizes) {
  const vectors: VectorRow[] = Array.from({ length: n }, (_, i) => ({
    memoryId: `m${i}`,
    kind: 'text',
    key: 'main',
    vector: near(centres[Math.floor(random() * clusters)]!, noise),
  }));
  let started = performance.now();
  const approximate = new VectorIndex(vectors, { approximateAbove: 0 });
  const buildMs = performance.now() - started;
  const exact = new VectorIndex(vectors, { approximateAbove: Number.POSITIVE_INFINITY });
  let hits = 0;
  let approximateMs = 0;
  let exactMs = 0;
  for (let q = 0; q < queries; q++) {
    const query = near(vectors[Math.floor(random() * n)]!.vector, noise / 2);
    started = performance.now();
    const found = approximate.search(query, { limit: 10 });
    approximateMs += performance.now() - started;
    started = performance.now();
    const truth = new Set(exact.search(query, { limit: 10 }).map((hit) => hit.memoryId));
    exactMs += performance.now() - started;
    hits += found.filter((hit) => truth.has(hit.memoryId)).length;
  }
  rows.push(
    `| ${n} | ${dims} (${noise}) | ${(hits / (10 * queries)).toFixed(4)} | ${(approximateMs / queries).toFixed(2)} | ${(exactMs / queries).toFixed(2)} | ${(buildMs / 1000).toFixed(1)} |`,
  );
}
process.stdout.write(
  `| vectors | dims (noise) | IVF recall@10 vs exact | IVF ms / query | exact ms / query | IVF build s |\n|---|---|---|---|---|---|\n`,
);
process.stdout.write(`${rows.join('\n')}\n`);
