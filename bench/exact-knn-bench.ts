/**
 * `npx tsx bench/exact-knn-bench.ts [--sizes 10k,30k,100k] [--common-df 1024] [--tau 0.5]`
 *
 * The all-pairs exact kNN of compaction (exactKnnLists) alone, in memory, on bench:scale's realistic chat
 * text (bench/support/realistic-chat.ts, seed 11): seconds (wall and CPU), mutual pairs per memory, and a hash
 * of the mutual pairs with their similarities, so two tunings (or two versions) can be checked to give the
 * same graph. The machine's 1-minute load average is printed next to the times.
 */
import { loadavg } from 'node:os';
import { exactKnnLists } from '../src/digest/incremental/exact-knn-lists.ts';
import { buildTfidfSpace } from '../src/digest/semantic/tfidf-space.ts';
import { chatRecords } from './support/realistic-chat.ts';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const sizes = (flag('--sizes') ?? '10k,30k,100k').split(',').map((text) => {
  const match = /^(\d+)(k?)$/i.exec(text.trim());
  if (!match) throw new Error(`bad size "${text}" (e.g. 10k, 30000)`);
  return Number(match[1]) * (match[2] ? 1000 : 1);
});
const tuning = {
  ...(flag('--common-df') === undefined ? {} : { commonDf: Number(flag('--common-df')) }),
  ...(flag('--tau') === undefined ? {} : { tau: Number(flag('--tau')) }),
};

for (const n of sizes) {
  const space = buildTfidfSpace([...chatRecords({ contextId: 'big', count: n, seed: 11 })]);
  const load = loadavg()[0]!;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const lists = exactKnnLists(space, 8, tuning);
  const used = process.cpuUsage(cpu);
  const seconds = (performance.now() - started) / 1000;
  const pairs = lists.mutualPairs();
  let hash = 0;
  for (const p of pairs) hash = (hash * 31 + p.a * 7 + p.b + Math.round(p.similarity * 1e6)) % 1e9;
  process.stdout.write(
    `${n} memories: ${seconds.toFixed(2)} s wall, ${((used.user + used.system) / 1e6).toFixed(2)} s CPU, ` +
      `${((2 * pairs.length) / n).toFixed(3)} kNN edges per memory, pairs hash ${hash}, load ${load.toFixed(1)}\n`,
  );
}
