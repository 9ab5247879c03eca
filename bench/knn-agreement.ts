/**
 * Incremental mutual-kNN benchmark (docs/semantic-knn.md).
 *
 *   npm run bench:knn -- [--mem-gallery ../shared/data/mem-gallery/dialog] [--sizes 10000,100000] [--million]
 *     [--adds 20] [--drift-max 10000] [--topics N] [--store memory|sqlite] [--rules 0.1/32,0.05/16]
 *     [--reverse neighbourhood|exact] [--json]
 *
 * 1. Mem-Gallery (skipped with a message when the path is absent): each context is imported one session at a
 *    time; after each session updateSemanticKnn runs (the first one builds the snapshot; bulk compaction
 *    off, so the incremental path is what is measured), then compaction when semanticNeedsCompaction says so. Per context: Jaccard agreement of the semantic_knn pairs with a
 *    full exact rebuild (fresh IDF, no cap) after the last session and the lowest over all sessions, with the
 *    default rule (and each --rules ratio/minChanges) applied, and with the snapshot frozen after the first
 *    session (no compaction at all).
 * 2. Generated text (Zipfian vocabulary of 30k words plus per-topic words, mulberry32): mutual pairs per
 *    memory of the exact graph (compaction) vs the capped full rebuild (sparseMutualKnn, cap 256), the
 *    compaction time, and the cost of adding one memory (write + updateSemanticKnn, median ms over --adds).
 *    Up to --drift-max memories (default 10k) the table also shows the Jaccard agreement with a fresh exact
 *    rebuild after 5%, 10% and 20% growth without compaction. --million adds 1,000,000 (slow).
 */

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactSemantic } from '../src/digest/incremental/compact-semantic.ts';
import { exactKnnLists } from '../src/digest/incremental/exact-knn-lists.ts';
import { semanticNeedsCompaction } from '../src/digest/incremental/semantic-needs-compaction.ts';
import { updateSemanticKnn } from '../src/digest/incremental/update-semantic-knn.ts';
import { mulberry32 } from '../src/digest/semantic/seeded-random.ts';
import { sparseMutualKnn } from '../src/digest/semantic/sparse-mutual-knn.ts';
import { buildTfidfSpace } from '../src/digest/semantic/tfidf-space.ts';
import { createMemGalleryImporter } from '../src/importers/mem-gallery-importer.ts';
import type { ArchiveStore } from '../src/store/archive-store-spec.ts';
import { openStore } from '../src/store/open-store.ts';
import type { MemoryRecord } from '../src/types/memory-record.ts';
import { checkBenchFlags } from './support/probe-args.ts';
import { zipfSampler } from './support/realistic-chat.ts';

checkBenchFlags(
  'npm run bench:knn -- [--mem-gallery <dir>] [--sizes 10000,100000] [--million] [--adds 20] [--drift-max 10000] [--topics N] [--store memory|sqlite] [--rules 0.1/32,0.05/16] [--reverse neighbourhood|exact] [--json]',
  [
    '--mem-gallery',
    '--sizes',
    '--million',
    '--adds',
    '--drift-max',
    '--topics',
    '--store',
    '--rules',
    '--reverse',
    '--json',
  ],
);

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const at = args.indexOf(`--${name}`);
  return at < 0 ? undefined : args[at + 1];
};
const json = args.includes('--json');
const memGallery = flag('mem-gallery') ?? '../shared/data/mem-gallery/dialog';
const sizes = (flag('sizes') ?? '10000,100000')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
if (args.includes('--million')) sizes.push(1_000_000);
const adds = Number(flag('adds') ?? 20);
/** Up to this size, also the agreement after 5%, 10% and 20% growth under the frozen snapshot. */
const driftMax = Number(flag('drift-max') ?? 10_000);
const fixedTopics = flag('topics') === undefined ? undefined : Number(flag('topics'));
const backend = flag('store') ?? 'memory';
/** Reverse search of the incremental adds (SemanticUpdateOptions.reverse); the library default when absent. */
const reverse = flag('reverse') as 'neighbourhood' | 'exact' | undefined;
const reverseOption = reverse === undefined ? {} : { reverse };
/** Compaction rules replayed on Mem-Gallery: 'default' plus each --rules ratio/minChanges pair. */
const rules: Array<{ ratio?: number; minChanges?: number }> = [
  {},
  ...(flag('rules') ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => {
      const [ratio, minChanges] = pair.split('/').map(Number);
      return { ratio: ratio!, minChanges: minChanges ?? 0 };
    }),
];
const scratch = mkdtempSync(join(tmpdir(), 'graphmemix-knn-bench-'));
let files = 0;
const open = (): Promise<ArchiveStore> =>
  openStore(backend === 'sqlite' ? join(scratch, `bench-${files++}.db`) : 'memory:');

const output: { memGallery: Array<Record<string, unknown>>; generated: Array<Record<string, unknown>> } = {
  memGallery: [],
  generated: [],
};
try {
  if (existsSync(memGallery)) output.memGallery = await memGalleryAgreement(memGallery);
  else console.error(`mem-gallery: ${memGallery} not found, skipped (pass --mem-gallery <dir>)`);
  for (const n of sizes) output.generated.push(await generatedRow(n));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
if (json) console.log(JSON.stringify(output, null, 2));
else {
  if (output.memGallery.length > 0) console.table(output.memGallery);
  console.table(output.generated);
}

async function memGalleryAgreement(path: string): Promise<Array<Record<string, unknown>>> {
  const byContext = new Map<string, MemoryRecord[]>();
  for await (const item of createMemGalleryImporter().read(path, {})) {
    if (item.type !== 'record') continue;
    const list = byContext.get(item.record.contextId) ?? [];
    list.push(item.record);
    byContext.set(item.record.contextId, list);
  }
  const rows: Array<Record<string, unknown>> = [];
  for (const [contextId, records] of byContext) {
    records.sort((x, y) => x.sequence - y.sequence || (x.id < y.id ? -1 : 1));
    const sessions = groupBySession(records);
    const frozen = await replaySessions(contextId, sessions, undefined);
    for (const rule of rules) {
      const replay = await replaySessions(contextId, sessions, rule);
      rows.push({
        context: contextId,
        memories: records.length,
        sessions: sessions.length,
        rule: rule.ratio === undefined ? 'default' : `${rule.ratio}/${rule.minChanges}`,
        exactPairs: replay.exactPairs,
        jaccardFinal: round(replay.final, 4),
        jaccardMin: round(replay.min, 4),
        compactions: replay.compactions,
        frozenJaccardFinal: round(frozen.final, 4),
        frozenJaccardMin: round(frozen.min, 4),
        addMsMedian: round(replay.medianMs, 2),
      });
    }
  }
  return rows;
}

/** Sessions in order of first appearance; records without a session (the profile) join the first one. */
function groupBySession(records: readonly MemoryRecord[]): MemoryRecord[][] {
  const order: string[] = [];
  const groups = new Map<string, MemoryRecord[]>();
  for (const record of records) {
    const key = record.sessionId ?? order[0] ?? '';
    if (!groups.has(key)) {
      order.push(key);
      groups.set(key, []);
    }
    groups.get(key)!.push(record);
  }
  return order.map((key) => groups.get(key)!);
}

async function replaySessions(
  contextId: string,
  sessions: readonly MemoryRecord[][],
  rule: { ratio?: number; minChanges?: number } | undefined,
): Promise<{ final: number; min: number; compactions: number; exactPairs: number; medianMs: number }> {
  const store = await open();
  const seen: MemoryRecord[] = [];
  let min = 1;
  let final = 1;
  let compactions = 0;
  let exactPairs = 0;
  const times: number[] = [];
  for (const session of sessions) {
    await store.writeMemories(
      contextId,
      session.map((record) => ({ record, views: [], contentHash: record.id })),
    );
    seen.push(...session);
    const started = performance.now();
    // Bulk compaction off: a session is often above the limit in these small contexts, and the point is
    // the agreement of the incremental path between compactions (the frozen replay never compacts).
    const result = await updateSemanticKnn(
      store,
      contextId,
      { upserted: session.map((after) => ({ after })), removed: [] },
      rule ? { rule, compactBulk: false, ...reverseOption } : { compactBulk: false, ...reverseOption },
    );
    if (result.mode === 'incremental') times.push((performance.now() - started) / session.length);
    if (rule && (await semanticNeedsCompaction(store, contextId, rule)).needed) {
      await compactSemantic(store, contextId);
      compactions++;
    }
    const exact = exactPairKeys(seen);
    exactPairs = exact.size;
    final = jaccard(await storedPairKeys(store, contextId, seen), exact);
    min = Math.min(min, final);
  }
  await store.close();
  return { final, min, compactions, exactPairs, medianMs: median(times) };
}

function exactPairKeys(records: readonly MemoryRecord[]): Set<string> {
  const space = buildTfidfSpace([...records].sort((x, y) => (x.id < y.id ? -1 : 1)));
  // exactKnnLists equals sparseMutualKnn with no cap (test/digest/incremental), without its df^2 work.
  const pairs = exactKnnLists(space, 8).mutualPairs();
  return new Set(pairs.map((p) => `${space.ids[p.a]}\u0000${space.ids[p.b]}`));
}

async function storedPairKeys(
  store: ArchiveStore,
  contextId: string,
  records: readonly MemoryRecord[],
): Promise<Set<string>> {
  const edges = await store.neighbors(
    contextId,
    records.map((r) => r.id),
  );
  return new Set(edges.filter((e) => e.types.includes('semantic_knn')).map((e) => `${e.a}\u0000${e.b}`));
}

async function generatedRow(n: number): Promise<Record<string, unknown>> {
  const records = generateRecords(n + adds + (n <= driftMax ? Math.round(0.2 * n) : 0), 42);
  const base = records.slice(0, n);
  const store = await open();
  for (let at = 0; at < n; at += 5000) {
    await store.writeMemories(
      'bench',
      base.slice(at, at + 5000).map((record) => ({ record, views: [], contentHash: record.id })),
    );
  }
  const cpu = process.cpuUsage();
  const compaction = await compactSemantic(store, 'bench');
  const compactCpu = process.cpuUsage(cpu).user / 1e6;
  const capped = sparseMutualKnn(buildTfidfSpace(base));
  const times: number[] = [];
  for (const record of records.slice(n, n + adds)) {
    const started = performance.now();
    await store.writeMemories('bench', [{ record, views: [], contentHash: record.id }]);
    await updateSemanticKnn(store, 'bench', { upserted: [{ after: record }], removed: [] }, reverseOption);
    times.push(performance.now() - started);
  }
  // Drift: keep adding under the frozen snapshot, compare with a fresh exact rebuild at each checkpoint.
  const drift: Record<string, number> = {};
  if (n <= driftMax) {
    let at = n + adds;
    for (const share of [0.05, 0.1, 0.2]) {
      const until = n + Math.round(share * n);
      for (; at < until; at++) {
        const record = records[at]!;
        await store.writeMemories('bench', [{ record, views: [], contentHash: record.id }]);
        await updateSemanticKnn(
          store,
          'bench',
          { upserted: [{ after: record }], removed: [] },
          reverseOption,
        );
      }
      const seen = records.slice(0, until);
      drift[`jaccardAfter${share * 100}pct`] = round(
        jaccard(await storedPairKeys(store, 'bench', seen), exactPairKeys(seen)),
        4,
      );
    }
  }
  await store.close();
  return {
    store: backend,
    reverse: reverse ?? 'default',
    topics: fixedTopics ?? 'n/300',
    memories: n,
    exactPairsPerMemory: round(compaction.edges / n, 3),
    cappedPairsPerMemory: round(capped.pairs.length / n, 3),
    compactSeconds: round(compaction.seconds, 2),
    compactCpuSeconds: round(compactCpu, 2),
    add1MsMedian: round(median(times), 2),
    add1MsMax: round(Math.max(...times), 2),
    ...drift,
  };
}

/** Zipfian background words (30k-word vocabulary, exponent 1) plus 35% words of one topic (40 words each). */
function generateRecords(n: number, seed: number): MemoryRecord[] {
  const random = mulberry32(seed);
  const syllables = 'ka lo mi ra ne to su pe vi do an el or us ti ba'.split(' ');
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
  const zipf = zipfSampler(vocabulary, 1, random);
  // Topics: n / 300 by default (each topic's size constant); --topics N fixes their number, so topic words
  // get more common as the archive grows (one person's interests do not multiply with the archive).
  const topics = fixedTopics ?? Math.max(50, Math.round(n / 300));
  return Array.from({ length: n }, (_, i) => {
    const topic = Math.floor(random() * topics);
    const length = 8 + Math.floor(random() * 22);
    const words = Array.from({ length }, () =>
      random() < 0.35 ? word(vocabulary + topic * 40 + Math.floor(random() * 40)) : word(zipf()),
    );
    return {
      id: `m${String(i).padStart(7, '0')}`,
      contextId: 'bench',
      kind: 'message' as const,
      sequence: i,
      text: words.join(' '),
      assets: [],
    };
  });
}

function jaccard(x: Set<string>, y: Set<string>): number {
  if (x.size === 0 && y.size === 0) return 1;
  let both = 0;
  for (const key of x) if (y.has(key)) both++;
  return both / (x.size + y.size - both);
}

function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function round(value: number, digits = 3): number {
  return Number(value.toFixed(digits));
}
