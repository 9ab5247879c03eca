/**
 * Warm retrieve cost of two checkouts under the same load, in one process: each checkout opens its own copy
 * of one archive through its own modules, and every question runs on both (the order alternating question by
 * question), so a busy shared machine slows both alike. Also checks that both give the same pool (ids and
 * scores), kept edges and packet text for every question.
 *
 *   npx tsx bench/retrieve-interleave-probe.ts <file.db> <queries> <checkoutA> <checkoutB> [--size 10k] [--warmup 10] [--passes 1] [--db-b other.db]
 *
 * <file.db>: the bench:scale archive of bench/retrieve-probe.ts (one context 'big', seed 11; `--size` its
 * memory count, default 10k); copies <file.db>.<n>.ab are removed afterwards. Questions: chatQuestions seed 5
 * as retrieve-probe, 10 warm-up then <queries> timed. Prints per checkout: CPU mean / median (this process's
 * user + system per retrieve) and wall p50 / p95, with the 1-minute load. One heap: a checkout's garbage
 * may be collected during the other's retrieve, so GC is shared out between them. `--db-b`: checkout B reads a
 * copy of another build of the same archive (e.g. one checkout twice, FTS5 segments merged or not).
 */
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import type { Graphmemix } from '../src/graphmemix-api.ts';
import type { RetrievalResult } from '../src/pipeline/retrieval-result.ts';
import { parseCount, probeFlags } from './support/probe-args.ts';

interface Side {
  checkout: string;
  gm: Graphmemix;
  copy: string;
  /** Per pass, each timed question's CPU and wall ms. */
  cpu: number[][];
  wall: number[][];
}

const args = process.argv.slice(2);
const flag = probeFlags(args);
const sizeText = flag('size', '10k');
// Warm-up questions per checkout before the timed ones (V8 compiles the pipeline over the first ~100).
const warmup = Number(flag('warmup', '10'));
// The timed questions asked again (pass 2...): every cache warm, the read path's floor.
const passes = Math.max(1, Number(flag('passes', '1')));
const otherDb = args.includes('--db-b') ? flag('db-b', '') : undefined;
const [db, queriesText, ...checkouts] = args.filter(
  (arg, i) => !arg.startsWith('--') && !args[i - 1]?.startsWith('--'),
);
if (!db || checkouts.length !== 2)
  throw new Error(
    'usage: <file.db> <queries> <checkoutA> <checkoutB> [--size 10k] [--warmup 10] [--passes 1] [--db-b other.db]',
  );
const size = parseCount(sizeText);
const queries = Number(queriesText);
const { chatQuestions } = (await import(`${checkouts[0]}/bench/support/realistic-chat.ts`)) as {
  chatQuestions(
    count: number,
    seed: number,
    options: { contextId: string; count: number; seed: number },
  ): string[];
};
const sides: Side[] = [];
const perPass = (): number[][] => Array.from({ length: passes }, () => []);
for (const [n, checkout] of checkouts.entries()) {
  const source = n === 1 && otherDb !== undefined ? otherDb : db;
  const copy = `${source}.${n}.ab`;
  for (const suffix of ['', '-wal', '-shm']) {
    rmSync(copy + suffix, { force: true });
    if (existsSync(source + suffix)) copyFileSync(source + suffix, copy + suffix);
  }
  const { openGraphmemix } = (await import(`${checkout}/src/graphmemix.ts`)) as {
    openGraphmemix(options: { db: string }): Promise<Graphmemix>;
  };
  sides.push({ checkout, gm: await openGraphmemix({ db: copy }), copy, cpu: perPass(), wall: perPass() });
}

/** What a retrieve decides (as retrieve-probe's --digest): pool and scores, kept edges, packet text. */
const decided = (result: RetrievalResult): string =>
  JSON.stringify([
    result.pool.map((c) => [c.memoryId, c.retrievalScore, c.verifierScore, c.prize, c.origin.kind]),
    result.verifiedEdges.map((e) => [e.a, e.b, e.weight, e.kept]),
    result.packetText,
  ]);

const questions = chatQuestions(queries + warmup, 5, { contextId: 'big', count: size, seed: 11 });
const asked = [
  ...questions.entries(),
  ...Array.from({ length: passes - 1 }, () => [...questions.entries()].slice(warmup)).flat(),
];
let differences = 0;
for (const [at, [i, question]] of asked.entries()) {
  const pass = at < questions.length ? 0 : 1 + Math.floor((at - questions.length) / queries);
  const order = i % 2 === 0 ? sides : [...sides].reverse();
  const answers = new Map<Side, string>();
  for (const side of order) {
    const wall = performance.now();
    const usage = process.cpuUsage();
    const result = await side.gm.retrieve('big', question);
    const spent = process.cpuUsage(usage);
    if (i >= warmup) {
      side.wall[pass]!.push(performance.now() - wall);
      side.cpu[pass]!.push((spent.user + spent.system) / 1000);
    }
    answers.set(side, decided(result));
  }
  if (answers.get(sides[0]!) !== answers.get(sides[1]!)) differences++;
}
for (const side of sides) {
  await side.gm.close();
  for (const suffix of ['', '-wal', '-shm']) rmSync(side.copy + suffix, { force: true });
}

const sorted = (values: number[]) => [...values].sort((x, y) => x - y);
const quantile = (values: number[], p: number) =>
  sorted(values)[Math.min(values.length - 1, Math.ceil(p * values.length) - 1)]!;
for (const side of sides) {
  for (const [pass, cpu] of side.cpu.entries()) {
    const wall = side.wall[pass]!;
    const mean = cpu.reduce((sum, v) => sum + v, 0) / cpu.length;
    process.stdout.write(
      `${side.checkout}${passes > 1 ? ` pass ${pass + 1}` : ''}: CPU ${mean.toFixed(2)} ms (median ` +
        `${quantile(cpu, 0.5).toFixed(2)}), wall p50 ${quantile(wall, 0.5).toFixed(2)} / p95 ` +
        `${quantile(wall, 0.95).toFixed(2)} ms\n`,
    );
  }
}
process.stdout.write(
  `${size} memories, ${queries} questions each${passes > 1 ? ` x ${passes} passes` : ''}, ${differences} with ` +
    `different results, load ${loadavg()[0]!.toFixed(2)}\n`,
);
