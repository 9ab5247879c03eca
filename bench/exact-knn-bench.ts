/**
 * `npx tsx bench/exact-knn-bench.ts [--sizes 10k,30k,100k] [--common-df 1024] [--tau 0.5]
 *   [--bounded] [--exact-max 100k] [--max-postings 1024] [--rescore 32] [--prune 0.4] [--sample 2000]
 *   [--shape two-person]`
 *
 * The all-pairs exact kNN of compaction (exactKnnLists) alone, in memory, on bench:scale's realistic chat
 * text (bench/support/realistic-chat.ts, seed 11): seconds (wall and CPU), mutual pairs per memory, and a hash
 * of the mutual pairs with their similarities, so two tunings (or two versions) can be checked to give the
 * same graph. The machine's 1-minute load average is printed next to the times.
 * `--bounded` also runs boundedKnnLists (the approximate pass of bulk imports into large contexts) and, up to
 * `--exact-max` memories (the exact pass is superlinear), its agreement with the exact lists: Jaccard of the
 * mutual pairs and list recall (share of exact list entries present in the bounded list).
 * `--sample S` (with `--bounded`) also checks the bounded lists against the exact lists of S sampled documents
 * (brute force over every posting of their terms, bench/support/sampled-knn-lists.ts) at any size: the
 * agreement figure where the exact all-pairs pass is out of reach (1M). `--shape` picks the chat shape.
 * `--prune R` sets the bounded pass's pruneRatio (0: every cut term read, as before round 50).
 */
import { loadavg } from 'node:os';
import { boundedKnnLists } from '../src/digest/incremental/bounded-knn-lists.ts';
import { exactKnnLists } from '../src/digest/incremental/exact-knn-lists.ts';
import { buildTfidfSpace } from '../src/digest/semantic/tfidf-space.ts';
import type { TopKLists } from '../src/digest/semantic/top-k-lists.ts';
import { CHAT_SHAPES, type ChatShape, chatRecords } from './support/realistic-chat.ts';
import { sampleDocuments, sampledExactLists, sampledListRecall } from './support/sampled-knn-lists.ts';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const parseSize = (text: string): number => {
  const match = /^(\d+)([km]?)$/i.exec(text.trim());
  if (!match) throw new Error(`bad size "${text}" (e.g. 10k, 30000, 1m)`);
  const unit = match[2]!.toLowerCase();
  return Number(match[1]) * (unit === 'k' ? 1000 : unit === 'm' ? 1_000_000 : 1);
};
const sizes = (flag('--sizes') ?? '10k,30k,100k').split(',').map(parseSize);
const bounded = args.includes('--bounded');
const exactMax = parseSize(flag('--exact-max') ?? '100k');
const sample = Number(flag('--sample') ?? 0);
if (!Number.isInteger(sample) || sample < 0) throw new Error('--sample must be a whole number of documents');
const shape = (flag('--shape') ?? 'rounds') as ChatShape;
if (!CHAT_SHAPES.includes(shape)) throw new Error(`--shape must be one of ${CHAT_SHAPES.join(', ')}`);
const bounds = {
  ...(flag('--max-postings') === undefined ? {} : { maxPostingsPerTerm: Number(flag('--max-postings')) }),
  ...(flag('--rescore') === undefined ? {} : { rescore: Number(flag('--rescore')) }),
  ...(flag('--prune') === undefined ? {} : { pruneRatio: Number(flag('--prune')) }),
};
const tuning = {
  ...(flag('--common-df') === undefined ? {} : { commonDf: Number(flag('--common-df')) }),
  ...(flag('--tau') === undefined ? {} : { tau: Number(flag('--tau')) }),
};

for (const n of sizes) {
  const space = buildTfidfSpace([...chatRecords({ contextId: 'big', count: n, seed: 11, shape })]);
  const sampled =
    bounded && sample > 0 ? sampledExactLists(space, 8, sampleDocuments(space, sample, 7)) : undefined;
  const exact =
    !bounded || n <= exactMax ? timed('exact', n, () => exactKnnLists(space, 8, tuning)) : undefined;
  if (!bounded) continue;
  const approximate = timed('bounded', n, () => boundedKnnLists(space, 8, bounds));
  if (sampled) {
    const { recall, complete } = sampledListRecall(approximate, sampled);
    process.stdout.write(
      `${n} memories: bounded vs exact lists of ${sampled.size} sampled documents: list recall ${recall.toFixed(5)}, ` +
        `lists complete ${complete.toFixed(4)}\n`,
    );
  }
  if (exact) {
    const pairsOf = (lists: TopKLists) => new Set(lists.mutualPairs().map((p) => `${p.a}:${p.b}`));
    const want = pairsOf(exact);
    const got = pairsOf(approximate);
    let both = 0;
    for (const pair of got) if (want.has(pair)) both++;
    let entries = 0;
    let found = 0;
    for (let i = 0; i < n; i++) {
      const have = new Set(approximate.neighbours(i).map((x) => x.index));
      for (const { index } of exact.neighbours(i)) {
        entries++;
        if (have.has(index)) found++;
      }
    }
    process.stdout.write(
      `${n} memories: bounded vs exact: mutual pairs Jaccard ${(both / (want.size + got.size - both)).toFixed(6)}, ` +
        `list recall ${(found / Math.max(1, entries)).toFixed(6)}\n`,
    );
  }
}

function timed(name: string, n: number, run: () => TopKLists): TopKLists {
  const load = loadavg()[0]!;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const lists = run();
  const used = process.cpuUsage(cpu);
  const seconds = (performance.now() - started) / 1000;
  const pairs = lists.mutualPairs();
  let hash = 0;
  for (const p of pairs) hash = (hash * 31 + p.a * 7 + p.b + Math.round(p.similarity * 1e6)) % 1e9;
  process.stdout.write(
    `${n} memories, ${name}: ${seconds.toFixed(2)} s wall, ${((used.user + used.system) / 1e6).toFixed(2)} s CPU, ` +
      `${((2 * pairs.length) / n).toFixed(3)} kNN edges per memory, pairs hash ${hash}, load ${load.toFixed(1)}\n`,
  );
  return lists;
}
