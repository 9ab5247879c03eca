/**
 * `npx tsx bench/vector-recall-bench.ts [--index usearch|ivf|stored-ivf] [--sizes 10000,100000] [--dims 256]
 *   [--queries 200] [--data mixture|clusters] [--noise 1.5] [--clusters 500] [--threshold 5000]`
 *
 * Recall@10 of the store's approximate vector search against the exact scan, and its query latency.
 * - `--index usearch` (default): the SQLite store's persistent HNSW index (src/store/usearch-vector-index.ts,
 *   used above APPROXIMATE_VECTOR_THRESHOLD vectors per context and space) through the store API
 *   (memories in batches of 10k, one `putVectors`: one build; `searchVectors`), then a fresh store on the same file (first search:
 *   open + checksum + memory-map). Needs the optional package usearch (scripts/install-usearch.sh).
 * - `--index ivf`: the in-memory IVF of VectorIndex (the memory store's approximate path).
 * - `--index stored-ivf`: the SQLite store without usearch (src/store/sqlite-stored-ivf.ts): vectors written
 *   with their memories in steps of 10k (the step that crosses the threshold or doubles the space trains it;
 *   the slowest step is printed), then a fresh store on the file; the index column is the whole file.
 * No embedding model can be downloaded here, so vectors are generated (seeded):
 * - `mixture` (default, the realistic case): each vector mixes 1-3 of `--clusters` topic directions with
 *   random weights, plus anisotropic noise whose variance falls off with the dimension (real embeddings put
 *   most variance in a few directions); queries are fresh draws from the same distribution, not perturbed
 *   copies of stored vectors, so their neighbours are genuinely ambiguous.
 * - `clusters`: cluster centres plus isotropic Gaussian noise `--noise` (0.6 easy, 1.5 hard); queries are
 *   stored vectors perturbed by half the noise.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulberry32 } from '../src/digest/semantic/seeded-random.ts';
import type { ArchiveStore, MemoryWrite, VectorRow } from '../src/store/archive-store-spec.ts';
import { createSqliteStore } from '../src/store/sqlite-store.ts';
import { VectorIndex } from '../src/store/vector-index.ts';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string): string => {
  const at = args.indexOf(`--${name}`);
  return at < 0 ? fallback : args[at + 1]!;
};
const kind = flag('index', 'usearch');
const sizes = flag('sizes', '10000,100000').split(',').map(Number);
const dims = Number(flag('dims', '256'));
const queries = Number(flag('queries', '200'));
const data = flag('data', 'mixture');
const clusters = Number(flag('clusters', '500'));
const noise = Number(flag('noise', '1.5'));
/** Vectors per space above which the store uses its HNSW file (default the store's, 20,000). */
const threshold = args.includes('--threshold') ? Number(flag('threshold', '20000')) : undefined;

const random = mulberry32(7);
const gaussian = (): number => {
  const u = Math.max(1e-12, random());
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
};
const centres = Array.from({ length: clusters }, () => Float32Array.from({ length: dims }, gaussian));
/** Standard deviation of the noise per dimension: a power-law spectrum (dimension d gets (d + 1)^-0.5). */
const spread = Float32Array.from({ length: dims }, (_, d) => 1.2 / Math.sqrt(d + 1) + 0.05);

function mixtureVector(): Float32Array {
  const vector = new Float32Array(dims);
  const topics = 1 + Math.floor(random() * 3);
  for (let t = 0; t < topics; t++) {
    const centre = centres[Math.floor(random() * clusters)]!;
    const weight = 0.3 + random();
    for (let d = 0; d < dims; d++) vector[d]! += weight * centre[d]!;
  }
  for (let d = 0; d < dims; d++) vector[d]! += 1.5 * spread[d]! * gaussian() * Math.sqrt(dims) * 0.1;
  return vector;
}

const near = (centre: Float32Array, amount: number): Float32Array =>
  Float32Array.from(centre, (value) => value + amount * gaussian());

function stored(n: number): VectorRow[] {
  return Array.from({ length: n }, (_, i) => ({
    memoryId: `m${i}`,
    kind: 'text' as const,
    key: 'main',
    vector: data === 'mixture' ? mixtureVector() : near(centres[Math.floor(random() * clusters)]!, noise),
  }));
}

function queryVector(rows: readonly VectorRow[]): Float32Array {
  return data === 'mixture'
    ? mixtureVector()
    : near(rows[Math.floor(random() * rows.length)]!.vector, noise / 2);
}

/** The slowest putVectors of the last `fill` in steps (the write that trained the stored IVF), ms. */
let slowestPut = 0;

async function fill(store: ArchiveStore, rows: readonly VectorRow[], inSteps = false): Promise<number> {
  const started = performance.now();
  slowestPut = 0;
  for (let from = 0; from < rows.length; from += 10_000) {
    const batch = rows.slice(from, from + 10_000);
    await store.writeMemories(
      'ctx',
      batch.map(
        (row, i): MemoryWrite => ({
          record: {
            id: row.memoryId,
            contextId: 'ctx',
            kind: 'message',
            sequence: from + i,
            text: '',
            assets: [],
          },
          views: [],
          contentHash: row.memoryId,
        }),
      ),
    );
    if (inSteps) {
      const put = performance.now();
      await store.putVectors('ctx', 'space', rows.slice(from, from + 10_000));
      slowestPut = Math.max(slowestPut, performance.now() - put);
    }
  }
  if (inSteps) return (performance.now() - started) / 1000;
  // One putVectors: one HNSW build (in steps of 10k every step past the threshold would rebuild the file,
  // ANN_INCREMENTAL_RATIO).
  await store.putVectors('ctx', 'space', rows);
  return (performance.now() - started) / 1000;
}

/** The optional package as missing (`--index stored-ivf`: the default install on Node 20). */
const missingUsearch = () =>
  Promise.reject(Object.assign(new Error("Cannot find package 'usearch'"), { code: 'ERR_MODULE_NOT_FOUND' }));

const lines: string[] = [];
for (const n of sizes) {
  const rows = stored(n);
  const exact = new VectorIndex(rows, { approximateAbove: Number.POSITIVE_INFINITY });
  const asked = Array.from({ length: queries }, () => queryVector(rows));
  const truth = asked.map((q) => new Set(exact.search(q, { limit: 10 }).map((hit) => hit.memoryId)));
  let exactMs = 0;
  for (const q of asked.slice(0, 20)) {
    const started = performance.now();
    exact.search(q, { limit: 10 });
    exactMs += (performance.now() - started) / 20;
  }
  const times: number[] = [];
  let hits = 0;
  let build = 0;
  let first = Number.NaN;
  let fileMiB = Number.NaN;
  if (kind === 'ivf') {
    const started = performance.now();
    const ivf = new VectorIndex(rows, { approximateAbove: 0 });
    build = (performance.now() - started) / 1000;
    for (const [i, q] of asked.entries()) {
      const t = performance.now();
      const found = ivf.search(q, { limit: 10 });
      times.push(performance.now() - t);
      hits += found.filter((hit) => truth[i]!.has(hit.memoryId)).length;
    }
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'graphmemix-ann-bench-'));
    try {
      const file = join(dir, 'archive.db');
      const ann =
        kind === 'stored-ivf'
          ? { ann: { load: missingUsearch }, ...(threshold === undefined ? {} : { ivf: { threshold } }) }
          : threshold === undefined
            ? {}
            : { ann: { threshold } };
      const store = createSqliteStore(file, ann);
      build = await fill(store, rows, kind === 'stored-ivf');
      if (kind === 'usearch' && store.vectorSupport !== 'usearch')
        throw new Error('usearch does not load: scripts/install-usearch.sh');
      await store.close();
      const reopened = createSqliteStore(file, ann);
      let started = performance.now();
      await reopened.searchVectors('ctx', 'space', asked[0]!, { limit: 10 });
      first = performance.now() - started;
      for (const [i, q] of asked.entries()) {
        started = performance.now();
        const found = await reopened.searchVectors('ctx', 'space', q, { limit: 10 });
        times.push(performance.now() - started);
        hits += found.filter((hit) => truth[i]!.has(hit.memoryId)).length;
      }
      await reopened.close();
      fileMiB = 0;
      if (kind === 'stored-ivf') fileMiB = statSync(file).size / 1024 / 1024;
      else {
        for (const entry of (await import('node:fs')).readdirSync(`${file}.vectors`)) {
          fileMiB += statSync(join(`${file}.vectors`, entry)).size / 1024 / 1024;
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  times.sort((x, y) => x - y);
  const q = (p: number) => times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)]!.toFixed(2);
  if (kind === 'stored-ivf')
    process.stderr.write(`${n}: slowest putVectors of 10k (training) ${slowestPut.toFixed(0)} ms\n`);
  lines.push(
    `| ${kind} | ${n} | ${dims} | ${data === 'mixture' ? 'mixture' : `clusters (noise ${noise})`} | ${(hits / (10 * queries)).toFixed(4)} | ${q(0.5)} / ${q(0.95)} | ${exactMs.toFixed(2)} | ${build.toFixed(1)} | ${Number.isNaN(first) ? 'n/a' : first.toFixed(0)} | ${Number.isNaN(fileMiB) ? 'n/a' : fileMiB.toFixed(0)} | ${loadavg()[0]!.toFixed(1)} |`,
  );
}
process.stdout.write(
  '| index | vectors | dims | data | recall@10 vs exact | ms / query p50 / p95 | exact scan ms / query | build s (writes incl.) | first search in a fresh store ms | index file MiB | load 1m |\n|---|---|---|---|---|---|---|---|---|---|---|\n',
);
process.stdout.write(`${lines.join('\n')}\n`);
