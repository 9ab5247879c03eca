/**
 * Warm retrieve p50 of the same archive on two backends, their questions alternating in blocks (issue #11's
 * retrieve ratio under the same load; this machine's speed drifts by ~20% within an hour):
 *
 *   npx tsx bench/pg-ratio-probe.ts <archive A> <archive B> [n] [--block 25]
 *
 * Both archives hold context 'big' of 10,000 memories (`bench/pg-add-probe.ts build URL 10000`, then
 * `graphmemix copy --from URL --to file.db` for the SQLite copy); questions are bench:postgres's
 * (chatQuestions seed 7, 6 words), 50 warm-up questions each, then n (default 400) timed. Prints each p50 and
 * B / A. Both stores live in this one process, so the shared pipeline code sees two store classes (as it does
 * not in a deployment): compare ratios of runs of this probe, not its times with bench:postgres.
 */
import { existsSync } from 'node:fs';
import { openGraphmemix } from '../src/graphmemix.ts';
import { parseCount, probeFlags } from './support/probe-args.ts';
import { chatQuestions } from './support/realistic-chat.ts';

const argv = process.argv.slice(2);
const flag = probeFlags(argv);
const blockAt = argv.indexOf('--block');
const [a, b, nText] = blockAt >= 0 ? argv.filter((_, i) => i !== blockAt && i !== blockAt + 1) : argv;
if (!a || !b) throw new Error('usage: pg-ratio-probe.ts <archive A> <archive B> [n] [--block 25]');
const n = parseCount(nText ?? '400');
const block = parseCount(flag('block', '25'));
if (!(n > 0 && block > 0)) throw new Error('n and --block must be positive counts');
for (const archive of [a, b]) {
  // A probe reads existing archives: a mistyped path must not become a new, empty one.
  if (!/^postgres(ql)?:\/\//.test(archive) && !existsSync(archive))
    throw new Error(`no archive at ${archive}`);
}
const sides = [await openGraphmemix({ db: a }), await openGraphmemix({ db: b })];
try {
  const questions = chatQuestions(n + 50, 6, { contextId: 'big', count: 10000, seed: 7 });
  for (const question of questions.slice(0, 50)) for (const gm of sides) await gm.retrieve('big', question);
  const times: number[][] = [[], []];
  const timed = questions.slice(50);
  for (let from = 0; from < timed.length; from += block) {
    for (const [at, gm] of sides.entries()) {
      for (const question of timed.slice(from, from + block)) {
        const t0 = performance.now();
        await gm.retrieve('big', question);
        times[at]!.push(performance.now() - t0);
      }
    }
  }
  const p50 = (x: number[]) => [...x].sort((p, q) => p - q)[x.length >> 1]!;
  const [pa, pb] = [p50(times[0]!), p50(times[1]!)];
  console.log(
    `A p50 ${pa.toFixed(2)} ms, B p50 ${pb.toFixed(2)} ms, B / A ${(pb / pa).toFixed(2)} (n ${n}, blocks of ${block})`,
  );
} finally {
  for (const gm of sides) await gm.close();
}
