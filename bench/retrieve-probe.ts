/**
 * `npx tsx bench/retrieve-probe.ts [--size 10k] [--db /tmp/probe-10k.db | postgres://...] [--queries 200] [--warmup 10] [--warmup-seed s] [--passes 1] [--blocks 0] [--digest out.json] [--profile out] [--heap-profile out]`
 *
 * The warm read path alone, for profiling (`node --cpu-prof --import tsx bench/retrieve-probe.ts ...`) and
 * for checking that a read-path change keeps every result identical. Builds the same one-context archive as
 * `bench:scale` (bench/support/realistic-chat.ts, seed 11) into `--db` once and reuses it afterwards, then
 * runs `--warmup` questions (10, as bench:scale) and `--queries` timed ones (`chatQuestions`, seed 5), printing
 * p50 / p95 / p99 wall and mean (and median) CPU per retrieve with the 1-minute load; `--warmup-seed s` takes
 * the warm-up questions from seed s instead (as bench:scale), so the timed ones are seed 5's first. `--passes n`
 * asks the timed questions n times and times the last pass (every cache warm: the read path's floor; the
 * digest has every pass). `--blocks n` also prints
 * the median CPU of every n questions, warm-up included (where it flattens, V8 has done compiling). `--digest` writes, per question,
 * the pool (ids, retrieval scores, verifier scores, prizes), the kept edges and the packet text: two runs
 * of different code on the same archive must write the same file. `--profile out` writes a CPU profile
 * (`out.cpuprofile`, 200 us sampling) of the timed questions alone (`--cpu-prof` also profiles the build and the
 * warm-up); `--heap-profile out` a sampling heap profile of them (`out.heapprofile`, collected objects counted).
 */
import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { ingestItems } from '../src/digest/ingest.ts';
import { openGraphmemix } from '../src/graphmemix.ts';
import type { ImportItem } from '../src/importers/importer-spec.ts';
import { parseCount, probeFlags } from './support/probe-args.ts';
import { chatArchive, chatQuestions } from './support/realistic-chat.ts';

const args = process.argv.slice(2);
const flag = probeFlags(args);
const sizeText = flag('size', '10k');
const size = parseCount(sizeText);
const file = flag('db', `/tmp/graphmemix-probe-${sizeText}.db`);
const queries = Number(flag('queries', '200'));
// V8 is still compiling the pipeline over the first ~100 questions (their CPU is ~2x the later ones' at 10k):
// a larger --warmup measures the steady state (the warm-up questions are other questions, not repeats).
const warmup = Number(flag('warmup', '10'));
const digestFile = args.includes('--digest') ? flag('digest', '') : undefined;
const block = Number(flag('blocks', '0'));

const archive = { contextId: 'big', count: size, seed: 11 };
// A PostgreSQL URL names a database built beforehand (bench/pg-add-probe.ts build <admin-url> <n>).
if (!/^postgres(ql)?:\/\//.test(file) && !existsSync(file)) {
  const gm = await openGraphmemix({ db: file });
  const started = performance.now();
  await ingestItems(gm.store, chatArchive(archive) as Iterable<ImportItem>);
  process.stderr.write(`built ${size} memories in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  await gm.close();
}

const openedAt = performance.now();
const gm = await openGraphmemix({ db: file });
const warmupSeed = args.includes('--warmup-seed') ? Number(flag('warmup-seed', '')) : undefined;
const questions =
  warmupSeed === undefined
    ? chatQuestions(queries + warmup, 5, archive)
    : [...chatQuestions(warmup, warmupSeed, archive), ...chatQuestions(queries, 5, archive)];
const passes = Math.max(1, Number(flag('passes', '1')));
for (let pass = 1; pass < passes; pass++) questions.push(...questions.slice(-queries));
// Timed: the last pass's questions.
const timedFrom = questions.length - queries;
const times: number[] = [];
const cpus: number[] = [];
const everyCpu: number[] = [];
let cpu = 0;
const digest: unknown[] = [];
const stages = new Map<string, number>();
// Each stage's wall per timed question (its median moves less with preemption than the mean).
const stageTimes = new Map<string, number[]>();
const profileFile = args.includes('--profile') ? flag('profile', '') : undefined;
const heapFile = args.includes('--heap-profile') ? flag('heap-profile', '') : undefined;
const profiler = profileFile === undefined && heapFile === undefined ? undefined : new Session();
for (const [i, question] of questions.entries()) {
  if (profiler !== undefined && i === timedFrom) {
    profiler.connect();
    if (heapFile !== undefined) {
      await profiler.post('HeapProfiler.enable');
      await profiler.post('HeapProfiler.startSampling', {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
    }
    if (profileFile !== undefined) {
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.setSamplingInterval', { interval: 200 });
      await profiler.post('Profiler.start');
    }
  }
  const started = performance.now();
  const usage = process.cpuUsage();
  const result = await gm.retrieve('big', question);
  const spent = process.cpuUsage(usage);
  const wall = performance.now() - started;
  if (i === 0)
    process.stderr.write(`first retrieve (open + 1): ${(performance.now() - openedAt).toFixed(1)} ms\n`);
  everyCpu.push((spent.user + spent.system) / 1000);
  if (i >= timedFrom) {
    times.push(wall);
    cpu += (spent.user + spent.system) / 1000;
    cpus.push((spent.user + spent.system) / 1000);
    for (const [stage, ms] of Object.entries(result.trace.timings))
      stages.set(stage, (stages.get(stage) ?? 0) + ms);
    for (const [stage, ms] of Object.entries(result.trace.timings)) {
      const list = stageTimes.get(stage) ?? [];
      list.push(ms);
      stageTimes.set(stage, list);
    }
  }
  if (digestFile !== undefined) {
    digest.push({
      pool: result.pool.map((c) => [c.memoryId, c.retrievalScore, c.verifierScore, c.prize, c.origin.kind]),
      edges: result.verifiedEdges.map((e) => [e.a, e.b, e.weight, e.kept]),
      packet: createHash('sha256').update(result.packetText).digest('hex').slice(0, 16),
    });
  }
}
if (profiler !== undefined) {
  if (profileFile !== undefined) {
    const { profile } = await profiler.post('Profiler.stop');
    writeFileSync(`${profileFile}.cpuprofile`, JSON.stringify(profile));
  }
  if (heapFile !== undefined) {
    const { profile } = await profiler.post('HeapProfiler.stopSampling');
    writeFileSync(`${heapFile}.heapprofile`, JSON.stringify(profile));
  }
  profiler.disconnect();
}
await gm.close();
const sorted = [...times].sort((x, y) => x - y);
// The median CPU per retrieve moves least with other processes' load (the mean takes every preemption's misses).
const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] ?? 0;
const cpuMedian = median(cpus);
const q = (p: number): string =>
  sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!.toFixed(2);
process.stdout.write(
  `${size} memories, ${times.length} warm retrieves: p50 ${q(0.5)} / p95 ${q(0.95)} / p99 ${q(0.99)} ms, ` +
    `CPU ${(cpu / times.length).toFixed(2)} ms (median ${cpuMedian.toFixed(2)}), load ${loadavg()[0]!.toFixed(2)}\n`,
);
process.stdout.write(
  `mean wall per stage: ${[...stages].map(([stage, ms]) => `${stage} ${(ms / times.length).toFixed(2)}`).join(', ')} ms\n`,
);
process.stdout.write(
  `median wall per stage: ${[...stageTimes].map(([stage, list]) => `${stage} ${median(list).toFixed(3)}`).join(', ')} ms\n`,
);
if (block > 0) {
  const medians: string[] = [];
  for (let at = 0; at < everyCpu.length; at += block)
    medians.push(median(everyCpu.slice(at, at + block)).toFixed(2));
  process.stdout.write(`CPU median per block of ${block} (warm-up included): ${medians.join(' ')} ms\n`);
}
if (digestFile !== undefined) writeFileSync(digestFile, `${JSON.stringify(digest, null, 0)}\n`);
