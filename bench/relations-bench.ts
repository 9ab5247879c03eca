/**
 * Relations benchmark: offline TF-IDF mutual kNN (time and recall against exact) and the whole
 * buildRelations on a generated text context, through the in-memory store.
 *
 *   npx tsx bench/relations-bench.ts [--sizes 10000,100000] [--cap N] [--sample 300] [--json]
 *     [--mem-gallery ../shared/data/mem-gallery/dialog]   (real text: per-context recall and relation counts;
 *                                                        skipped when the path is absent)
 *
 * Times are wall-clock and CPU (user) seconds; on a shared machine CPU time is the steadier figure.
 * The generated text is Zipfian background vocabulary plus per-topic words, a rough stand-in for chat.
 */
import { existsSync } from 'node:fs';
import { buildRelations } from '../src/digest/build-relations.ts';
import { sparseMutualKnn } from '../src/digest/semantic/sparse-mutual-knn.ts';
import { buildTfidfSpace, type TfidfSpace } from '../src/digest/semantic/tfidf-space.ts';
import { TopKLists } from '../src/digest/semantic/top-k-lists.ts';
import { createMemGalleryImporter } from '../src/importers/mem-gallery-importer.ts';
import { openStore } from '../src/store/open-store.ts';
import type { MemoryRecord } from '../src/types/memory-record.ts';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const at = args.indexOf(`--${name}`);
  return at < 0 ? undefined : args[at + 1];
};
const sizes = (flag('sizes') ?? '10000,100000').split(',').map(Number);
const cap = flag('cap') === undefined ? undefined : Number(flag('cap'));
const sample = Number(flag('sample') ?? 300);
const k = 8;

const rows: Array<Record<string, number | string>> = [];
for (const n of sizes) {
  const records = generateRecords(n, 42);
  const space = measure(() => buildTfidfSpace(records));
  const knn = measure(() =>
    sparseMutualKnn(space.value, cap === undefined ? { k } : { k, maxPostings: cap }),
  );
  const listRecall = sampledListRecall(space.value, knn.value.lists, sample, k);
  const row: Record<string, number | string> = {
    records: n,
    tfidfSeconds: round(space.wall),
    knnSeconds: round(knn.wall),
    knnCpuSeconds: round(knn.cpu),
    mutualPairs: knn.value.pairs.length,
    prunedTerms: knn.value.prunedTerms,
    scoredPairs: knn.value.scoredPairs,
    sampledListRecall: round(listRecall, 4),
  };
  if (n <= 20_000) {
    const exact = sparseMutualKnn(space.value, { k, maxPostings: Number.POSITIVE_INFINITY });
    const key = (p: { a: number; b: number }): number => p.a * n + p.b;
    const exactKeys = new Set(exact.pairs.map(key));
    const hits = knn.value.pairs.filter((pair) => exactKeys.has(key(pair))).length;
    row.mutualPairRecall = round(hits / Math.max(1, exact.pairs.length), 4);
  }
  const store = await openStore('memory:');
  await store.writeMemories(
    'bench',
    records.map((record) => ({
      record: { ...record, contextId: 'bench' },
      views: [],
      contentHash: record.id,
    })),
  );
  const build = await measureAsync(() => buildRelations(store, 'bench'));
  row.buildRelationsSeconds = round(build.wall);
  row.buildRelationsCpuSeconds = round(build.cpu);
  row.edges = Object.values(build.value.counts).reduce((sum, count) => sum + count, 0);
  row.steps = JSON.stringify(build.value.seconds);
  await store.close();
  rows.push(row);
}

const memGallery = flag('mem-gallery');
if (memGallery !== undefined && !existsSync(memGallery)) {
  console.error(`mem-gallery path ${memGallery} not found: skipped`);
} else if (memGallery !== undefined) {
  const byContext = new Map<string, MemoryRecord[]>();
  for await (const item of createMemGalleryImporter().read(memGallery, {})) {
    if (item.type !== 'record') continue;
    const list = byContext.get(item.record.contextId) ?? [];
    list.push(item.record);
    byContext.set(item.record.contextId, list);
  }
  const store = await openStore('memory:');
  for (const [contextId, records] of byContext) {
    records.sort((x, y) => x.sequence - y.sequence);
    const space = buildTfidfSpace(records);
    const approx = sparseMutualKnn(space, cap === undefined ? { k } : { k, maxPostings: cap });
    const exact = sparseMutualKnn(space, { k, maxPostings: Number.POSITIVE_INFINITY });
    const key = (p: { a: number; b: number }): number => p.a * records.length + p.b;
    const exactKeys = new Set(exact.pairs.map(key));
    const hits = approx.pairs.filter((pair) => exactKeys.has(key(pair))).length;
    await store.writeMemories(
      contextId,
      records.map((record) => ({ record, views: [], contentHash: record.id })),
    );
    const build = await measureAsync(() => buildRelations(store, contextId));
    rows.push({
      records: records.length,
      context: contextId,
      mutualPairs: approx.pairs.length,
      mutualPairRecall: round(hits / Math.max(1, exact.pairs.length), 4),
      buildRelationsSeconds: round(build.wall),
      counts: JSON.stringify(build.value.counts),
    });
  }
  await store.close();
}

if (args.includes('--json')) console.log(JSON.stringify(rows, null, 2));
else console.table(rows);

/** kNN recall on sampled documents: share of their exact top-k (brute force over all documents) found. */
function sampledListRecall(space: TfidfSpace, lists: TopKLists, count: number, kk: number): number {
  const postings = space.invertedIndex();
  const n = space.size;
  const step = Math.max(1, Math.floor(n / count));
  let found = 0;
  let wanted = 0;
  const scores = new Float64Array(n);
  for (let i = 0; i < n; i += step) {
    scores.fill(0);
    for (let e = space.docStart[i]!; e < space.docStart[i + 1]!; e++) {
      const term = space.docTerm[e]!;
      const weight = space.docWeight[e]!;
      for (let p = postings.start[term]!; p < postings.start[term + 1]!; p++) {
        scores[postings.doc[p]!] = scores[postings.doc[p]!]! + weight * postings.weight[p]!;
      }
    }
    scores[i] = 0;
    const exact = new TopKLists(1, kk);
    for (let j = 0; j < n; j++) exact.offer(0, j, Math.round(scores[j]! * 1e9) / 1e9);
    const approx = new Set(lists.neighbours(i).map((item) => item.index));
    for (const item of exact.neighbours(0)) {
      wanted++;
      if (approx.has(item.index)) found++;
    }
  }
  return wanted === 0 ? 1 : found / wanted;
}

function generateRecords(n: number, seed: number): MemoryRecord[] {
  let state = seed >>> 0;
  const rand = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const syllables = [
    'ka',
    'lo',
    'mi',
    'ra',
    'ne',
    'to',
    'su',
    'pe',
    'vi',
    'do',
    'an',
    'el',
    'or',
    'us',
    'ti',
    'ba',
  ];
  const word = (i: number): string => {
    let text = '';
    let x = i + 17;
    do {
      text += syllables[x % 16];
      x = Math.floor(x / 16);
    } while (x > 0);
    return `${text}x`;
  };
  const vocabulary = 30_000;
  const cdf: number[] = [];
  let total = 0;
  for (let r = 1; r <= vocabulary; r++) {
    total += 1 / r;
    cdf.push(total);
  }
  const zipf = (): number => {
    const u = rand() * total;
    let lo = 0;
    let hi = vocabulary - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const topics = Math.max(50, Math.round(n / 300));
  const records: MemoryRecord[] = [];
  for (let i = 0; i < n; i++) {
    const topic = Math.floor(rand() * topics);
    const length = 8 + Math.floor(rand() * 22);
    const words: string[] = [];
    for (let t = 0; t < length; t++) {
      words.push(rand() < 0.35 ? word(vocabulary + topic * 40 + Math.floor(rand() * 40)) : word(zipf()));
    }
    const session = Math.floor(i / 30);
    records.push({
      id: `m${String(i).padStart(7, '0')}`,
      contextId: 'bench',
      kind: 'message',
      sequence: i,
      sessionId: `s${session}`,
      roundId: `s${session}:r${Math.floor((i % 30) / 2)}`,
      text: words.join(' '),
      assets: [],
    });
  }
  return records;
}

function measure<T>(run: () => T): { value: T; wall: number; cpu: number } {
  const start = performance.now();
  const cpu = process.cpuUsage();
  const value = run();
  return { value, wall: (performance.now() - start) / 1000, cpu: process.cpuUsage(cpu).user / 1e6 };
}

async function measureAsync<T>(run: () => Promise<T>): Promise<{ value: T; wall: number; cpu: number }> {
  const start = performance.now();
  const cpu = process.cpuUsage();
  const value = await run();
  return { value, wall: (performance.now() - start) / 1000, cpu: process.cpuUsage(cpu).user / 1e6 };
}

function round(value: number, digits = 3): number {
  return Number(value.toFixed(digits));
}
