/**
 * `npx tsx bench/knn-threads-probe.ts <size> <steps>`: the all-pairs kNN passes of compaction on bench:scale's
 * text (seed 11), one after another in THIS process, with wall and process CPU (all threads) and a hash of the
 * mutual pairs. Steps, comma-separated: `e` exactKnnLists, `b` boundedKnnLists, `pN` the exact pass through
 * parallelKnnLists on N threads, `qN` the bounded one. Run one step per process to compare passes: a second
 * exact pass in one process runs 30-90% slower than the first (V8), so `e,p2` in one process favours `p2`'s
 * helper threads (fresh isolates).
 *
 *   for s in e p2 e p2; do npx tsx bench/knn-threads-probe.ts 100k $s; done
 */
import { loadavg } from 'node:os';
import { boundedKnnLists } from '../src/digest/incremental/bounded-knn-lists.ts';
import { exactKnnLists } from '../src/digest/incremental/exact-knn-lists.ts';
import { parallelKnnLists } from '../src/digest/incremental/parallel-knn-lists.ts';
import { buildTfidfSpace } from '../src/digest/semantic/tfidf-space.ts';
import type { TopKLists } from '../src/digest/semantic/top-k-lists.ts';
import { parseCount } from './support/probe-args.ts';
import { chatRecords } from './support/realistic-chat.ts';

const n = parseCount(process.argv[2] ?? '50k');
const steps = (process.argv[3] ?? 'e').split(',');
const space = buildTfidfSpace([...chatRecords({ contextId: 'big', count: n, seed: 11 })]);
for (const step of steps) {
  const load = loadavg()[0]!;
  const started = performance.now();
  const cpu = process.cpuUsage();
  let lists: TopKLists;
  let threads = 1;
  if (step === 'e') lists = exactKnnLists(space, 8);
  else if (step === 'b') lists = boundedKnnLists(space, 8);
  else if (/^[pq]\d+$/.test(step)) {
    const result = await parallelKnnLists(
      space,
      8,
      { kind: step[0] === 'p' ? 'exact' : 'bounded' },
      {
        threads: Number(step.slice(1)),
      },
    );
    lists = result.lists;
    threads = result.threads;
  } else throw new Error(`unknown step "${step}" (e, b, pN, qN)`);
  const used = process.cpuUsage(cpu);
  let hash = 0;
  for (const p of lists.mutualPairs())
    hash = (hash * 31 + p.a * 7 + p.b + Math.round(p.similarity * 1e6)) % 1e9;
  process.stdout.write(
    `${n} memories, ${step}: ${((performance.now() - started) / 1000).toFixed(2)} s wall, ` +
      `${((used.user + used.system) / 1e6).toFixed(2)} s CPU, ${threads} thread(s) searched, pairs hash ${hash}, ` +
      `load ${load.toFixed(1)}\n`,
  );
}
