/**
 * `npm run bench:scale [-- --sizes 10k,100k,1m] [--contexts 1000x1000] [--shape rounds|two-person] [--json] [--adds 200] [--add-warmup 0] [--add-steady 1000] [--queries 200] [--warmup 1000]`
 *
 * How the living archive scales: one context of 10k, 100k and 1M memories, and many contexts of 1k each
 * (default 1,000 x 1,000). Realistic generated chat (bench/support/realistic-chat.ts: Zipfian vocabulary of
 * 40k words, sessions, rounds, timestamps, some photos; `--shape two-person`: two named people without rounds, every
 * turn at its session's date, as LoCoMo). Offline (no model), SQLite file store, the public
 * library API (`openGraphmemix`, `addMemories`, `retrieve`, `compact`).
 *
 * Every scenario runs in its own child process, so its peak RSS is its own; "first retrieve" runs in yet
 * another fresh process (open the archive + one retrieve, measured inside it, Node start-up excluded).
 * Columns: ingest mem/s (bulk import of the whole scenario, relations included), DB MB per 1k memories,
 * peak RSS, add-1 p50/p99 (n = --adds, default 200: with 50 (until round 22) the p99 was the slowest add; each one
 * memory into the big context through addMemories), add-100
 * p50 (n = 10), first retrieve in a fresh process, warm retrieve p50/p95/p99 (n = --queries after --warmup
 * warm-up questions), compaction time (exact rebuild of the semantic graph), edges per memory by kind.
 * Warm means steady: the warm-up questions (same generator, seed 6; the timed ones are seed 5's, every one of
 * them counted) run until V8 has compiled the pipeline and the per-connection read caches hold what questions
 * keep meeting. At 10k the CPU median per block of 100 questions falls from ~15 ms (the first 100) to a flat
 * ~3-4 ms from about the 700th on (load ~8; docs/living-archive.md "Warm retrieve at 10k, fifth pass"), hence
 * 1,000 by default; `--warmup 10` gives the figure of earlier rounds (JIT warm-up measured with the engine).
 * `--add-warmup N` (default 0, as earlier rounds) runs N uncounted add-1s (other records, same generator) into
 * the same contexts before the timed ones: on PostgreSQL a fresh process's first adds run before V8 has
 * optimised the write path (bench/pg-add-probe.ts PROBE_SERIES: the first fifth of 400 adds ~1.5x the last
 * ones' p50); on SQLite at 10k it moved nothing (CPU per add 13.0 without, 13.6 after 100; load ~3).
 * `--add-steady N` (default 1000; `no` skips): after the add-100s, N more untimed add-1s, then --adds timed
 * ones: the "add-1 steady" column, what a long-running writer pays once V8, SQLite's page cache and the kept
 * posting lists hold the write path. In a process that only opened a 1M archive the first add-1s cost ~45% more than
 * those after 1,000 adds; here the process built the archive and asked its questions first, and the two
 * columns differ less (docs/living-archive.md "Round 26"). The add-1 column is measured as before.
 * `--recompact no` skips the separate timed compaction (exact; hours at 1M) and reports the semantic rebuild
 * that the bulk import ran (`compactionFrom: 'bulk-import'`: exact below 200k memories, the bounded pass from
 * 200k, see `knnApproximate`); `ingestSplit` gives the import's seconds for the records (validation, views,
 * lexical postings, keys), schema relations and that rebuild.
 * `knnApproximate` names the big context's approximate-kNN mark (a bulk import of APPROXIMATE_KNN_FROM or more
 * memories takes the bounded kNN pass; docs/semantic-knn.md), `peakRssByPhase` the peak RSS of each phase.
 * `--semantic-updates after-write` (the default since round 38, as the library's; `in-write` for the old mode)
 * opens the archive so (OpenGraphmemixOptions.semanticUpdates): the add columns are then the writes without their
 * kNN update, and `semanticLag` the time after each timed add until its update is in (its drain turn, waited out
 * untimed like a compaction: docs/living-archive.md "Round 37").
 * Targets (issue #10): add-1 at 1M p50 <= 10 ms, p99 <= 50 ms; add-100 <= 200 ms; first retrieve at 1M
 * <= 1 s; warm retrieve at 1M p50 <= 50 ms, p95 <= 150 ms; at 10k p50 <= 2 ms; ingest >= 10k mem/s; peak
 * RSS at 1M <= 1.5 GB.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readApproximateMark } from '../src/digest/incremental/approximate-knn-mark.ts';
import { readCompactionMark } from '../src/digest/incremental/semantic-compaction-mark.ts';
import { ingestItems } from '../src/digest/ingest.ts';
import { openGraphmemix } from '../src/graphmemix.ts';
import type { ImportItem } from '../src/importers/importer-spec.ts';
import { checkBenchFlags } from './support/probe-args.ts';
import {
  CHAT_SHAPES,
  type ChatShape,
  chatArchive,
  chatQuestions,
  chatRecords,
} from './support/realistic-chat.ts';
import { rssSampler } from './support/rss-sampler.ts';

checkBenchFlags(
  'npm run bench:scale [-- --sizes 10k,100k,1m] [--contexts 1000x1000|none] [--shape rounds|two-person] [--json] [--adds 200] [--add-warmup 0] [--add-steady 1000|no] [--queries 200] [--warmup 1000] [--recompact no] [--semantic-updates after-write|in-write]',
  [
    '--sizes',
    '--contexts',
    '--shape',
    '--json',
    '--adds',
    '--add-warmup',
    '--add-steady',
    '--queries',
    '--warmup',
    '--recompact',
    '--semantic-updates',
    '--child',
    '--first-retrieve',
  ],
);

interface ScenarioResult {
  scenario: string;
  /** The generated chat's shape (`--shape`). */
  shape: ChatShape;
  contexts: number;
  memories: number;
  ingestSeconds: number;
  ingestPerSecond: number;
  /** CPU seconds of this process for the import (user + system): the figure to compare on a busy machine. */
  ingestCpuSeconds: number;
  dbMiBPer1k: number;
  peakRssMiB: number;
  /** cpuMs: mean CPU time of this process per call (user + system): less sensitive to a busy machine. */
  /** warmup: add-1s before the timed ones (other records: see the header). */
  add1: { p50: number; p99: number; n: number; cpuMs: number; warmup: number };
  /**
   * As many add-1s as `add1`, timed after the add-100s and --add-steady more add-1s: `after` memories added by
   * this process before them. The steady cost of a long-running writer. Null with `--add-steady no`.
   */
  add1Steady: { p50: number; p99: number; n: number; cpuMs: number; after: number } | null;
  add100: { p50: number; n: number; cpuMs: number };
  semanticUpdates: 'in-write' | 'after-write';
  /** After-write: p50 ms from an add's return until its semantic update is in (add-1 and add-100). */
  semanticLag: { add1P50: number; add100P50: number } | null;
  firstRetrieveMs: number;
  /** warmup: questions asked before the timed ones (other questions: see the header). */
  warmRetrieve: { p50: number; p95: number; p99: number; n: number; cpuMs: number; warmup: number };
  compactionSeconds: number | null;
  /** Which run the compaction figure is: a separate `gm.compact` after the import, or the import's own. */
  compactionFrom: 'compact' | 'bulk-import';
  /** CPU seconds of the separate compaction (null when it was not run). */
  compactionCpuSeconds: number | null;
  /** Seconds of the bulk import: records written, schema relations, exact semantic rebuild (kNN). */
  ingestSplit: { records: number; schema: number; semantic: number };
  edgesPerMemory: Record<string, number>;
  /** 1-minute load average of the machine when the scenario started and ended (os.loadavg). */
  load: { start: number; end: number };
  /**
   * The big context's approximate-kNN mark after the run (docs/semantic-knn.md, "Bulk imports of large
   * contexts"): the bulk import took the bounded pass, or a drift compaction was deferred; null = exact.
   */
  knnApproximate: string | null;
  /**
   * Automatic compactions (the 5% rule, run in steps after the write) that the timed adds started: each is
   * waited for, untimed, before the next add, so every timed add is an ordinary one and not a write whose
   * semantic side went to the backlog of a run under way. `seconds`: each run's wall time after its add.
   */
  autoCompactions: { n: number; seconds: number[] };
  /** Peak RSS (MiB) per phase, sampled every 0.5 s by a worker thread (the phases are synchronous work). */
  peakRssByPhase: Record<string, number>;
}

const SELF = fileURLToPath(import.meta.url);
/** Warm-up questions before the timed retrieves (see the header) and their generator seed. */
const WARMUP_QUESTIONS = 1000;
const WARMUP_SEED = 6;
const WARMUP_ADDS = 0;
/** Untimed add-1s between the add-100s and the steady add-1s (see the header). */
const STEADY_ADDS = 1000;
const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const shape = chatShape(flag('--shape'));

if (args[0] === '--child') {
  const result = await runScenario(
    args[1]!,
    args[2]!,
    Number(flag('--adds') ?? 200),
    Number(flag('--queries') ?? 200),
    flag('--recompact') !== 'no',
    Number(flag('--warmup') ?? WARMUP_QUESTIONS),
    Number(flag('--add-warmup') ?? WARMUP_ADDS),
    steadyAdds(flag('--add-steady')),
    semanticUpdatesFlag(flag('--semantic-updates')),
  );
  process.stdout.write(`\nRESULT ${JSON.stringify(result)}\n`);
} else if (args[0] === '--first-retrieve') {
  const started = performance.now();
  const gm = await openGraphmemix({ db: args[1]! });
  await gm.retrieve(args[2]!, args[3]!);
  const ms = performance.now() - started;
  await gm.close();
  process.stdout.write(`\nRESULT ${JSON.stringify({ ms })}\n`);
} else {
  await main();
}

async function main(): Promise<void> {
  const json = args.includes('--json');
  // `--sizes none` (or 0) runs no single-context scenario.
  const sizes = (flag('--sizes') ?? '10k,100k,1m')
    .split(',')
    .filter((size) => size !== '' && size !== 'none' && parseSize(size) > 0);
  const contexts = flag('--contexts') ?? '1000x1000';
  const scenarios = [
    ...sizes.map((size) => `single:${size}`),
    ...(contexts === 'none' ? [] : [`many:${contexts}`]),
  ];
  const dir = mkdtempSync(join(tmpdir(), 'graphmemix-scale-'));
  const results: ScenarioResult[] = [];
  try {
    for (const scenario of scenarios) {
      if (!json) process.stderr.write(`running ${scenario} ...\n`);
      const child = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          SELF,
          '--child',
          scenario,
          join(dir, `${scenario.replace(/\W/g, '_')}.db`),
          ...forwarded(),
        ],
        { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const line = child.stdout.split('\n').find((l) => l.startsWith('RESULT '));
      if (child.status !== 0 || !line) throw new Error(`scenario ${scenario} failed (exit ${child.status})`);
      results.push(JSON.parse(line.slice(7)) as ScenarioResult);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (json) process.stdout.write(`${JSON.stringify({ results }, null, 2)}\n`);
  else printTable(results);
}

function forwarded(): string[] {
  const out: string[] = [];
  for (const name of [
    '--adds',
    '--queries',
    '--recompact',
    '--warmup',
    '--add-warmup',
    '--add-steady',
    '--semantic-updates',
    '--shape',
  ]) {
    const value = flag(name);
    if (value !== undefined) out.push(name, value);
  }
  return out;
}

async function runScenario(
  scenario: string,
  file: string,
  adds: number,
  queries: number,
  recompact: boolean,
  warmup: number,
  addWarmup: number,
  addSteady: number | null,
  semanticUpdates: 'in-write' | 'after-write',
): Promise<ScenarioResult> {
  const loadStart = loadavg()[0]!;
  const [layout, spec] = scenario.split(':') as [string, string];
  const [contextCount, perContext] =
    layout === 'single' ? [1, parseSize(spec)] : (spec.split('x').map(parseSize) as [number, number]);
  const contextIds = Array.from({ length: contextCount }, (_, c) => (contextCount === 1 ? 'big' : `u${c}`));
  const archive = (contextId: string, c: number) => ({ contextId, count: perContext, seed: 11 + c, shape });

  const sampler = rssSampler(['ingest', 'compaction', 'retrieve', 'add']);
  const gm = await openGraphmemix({ db: file, semanticUpdates });
  const ingestStarted = performance.now();
  const ingestCpu = process.cpuUsage();
  const split = { records: 0, schema: 0, semantic: 0 };
  let firstSemantic = 0;
  for (const [c, contextId] of contextIds.entries()) {
    const report = await ingestItems(gm.store, chatArchive(archive(contextId, c)) as Iterable<ImportItem>);
    const steps = report.stepSeconds;
    const semantic = steps['relations.semantic_knn'] ?? 0;
    if (c === 0) firstSemantic = semantic;
    split.semantic += semantic;
    split.schema += (steps.relations ?? 0) - semantic;
  }
  const ingestSeconds = (performance.now() - ingestStarted) / 1000;
  const ingestCpuSeconds = cpuMs(process.cpuUsage(ingestCpu)) / 1000;
  split.records = ingestSeconds - split.schema - split.semantic;
  const memories = contextCount * perContext;

  sampler.phase(1);
  const compactionCpu = process.cpuUsage();
  const compactionSeconds = recompact ? await timeCompaction(gm, contextIds[0]!) : firstSemantic;
  const compactionCpuSeconds = recompact ? cpuMs(process.cpuUsage(compactionCpu)) / 1000 : null;

  const questions = chatQuestions(queries, 5, archive(contextIds[0]!, 0));
  const contextFor = (i: number) => contextIds[(i * 7919) % contextIds.length]!;
  sampler.phase(2);
  for (const [i, question] of chatQuestions(warmup, WARMUP_SEED, archive(contextIds[0]!, 0)).entries())
    await gm.retrieve(contextFor(i), question);
  const retrieveTimes: number[] = [];
  let retrieveCpu = 0;
  for (const [i, question] of questions.entries()) {
    const started = performance.now();
    const cpu = process.cpuUsage();
    await gm.retrieve(contextFor(i), question);
    retrieveTimes.push(performance.now() - started);
    retrieveCpu += cpuMs(process.cpuUsage(cpu));
  }

  sampler.phase(3);
  // An add that reaches the 5% rule hands its context to a run in steps; adds during that run defer their
  // semantic side to its backlog and cost a fraction of an ordinary add. Timing those would flatter the add
  // figures (round 22: add-100 at 10k 0.4 s -> 43 ms), so each run is waited out, untimed, and reported.
  const autoCompactions: number[] = [];
  /** After-write: ms from each timed add's return until its semantic update is in, by kind of add. */
  const lag = { add1: [] as number[], add100: [] as number[] };
  const settle = async (contextId: string, lagOf?: number[]): Promise<void> => {
    if (semanticUpdates === 'after-write') {
      const started = performance.now();
      await gm.waitForCompactions();
      lagOf?.push(performance.now() - started);
      return;
    }
    if (!(await readCompactionMark(gm.store, contextId))) return;
    const started = performance.now();
    await gm.waitForCompactions();
    autoCompactions.push((performance.now() - started) / 1000);
  };
  let next = perContext;
  /** Add-1s into the contexts in turn (records after every earlier one); timed when `times` is given. */
  const addOnes = async (count: number, seed: number, times?: { wall: number[]; cpu: number }) => {
    for (let i = 0; i < count; i++) {
      const contextId = contextFor(i);
      const [record] = [...chatRecords({ contextId, count: 1, seed: seed + i, start: next++, shape })];
      const started = performance.now();
      const cpu = process.cpuUsage();
      await gm.addMemories(contextId, [record!]);
      if (times) {
        times.wall.push(performance.now() - started);
        times.cpu += cpuMs(process.cpuUsage(cpu));
      }
      await settle(contextId, times === add1 ? lag.add1 : undefined);
    }
  };
  await addOnes(addWarmup, 5900);
  const add1 = { wall: [] as number[], cpu: 0 };
  await addOnes(adds, 900, add1);
  const add100: number[] = [];
  let add100Cpu = 0;
  for (let i = 0; i < 10; i++) {
    const contextId = contextFor(i);
    const records = [...chatRecords({ contextId, count: 100, seed: 1900 + i, start: next, shape })];
    next += 100;
    const started = performance.now();
    const cpu = process.cpuUsage();
    await gm.addMemories(contextId, records);
    add100.push(performance.now() - started);
    add100Cpu += cpuMs(process.cpuUsage(cpu));
    await settle(contextId, lag.add100);
  }
  // Last, so the add-100s above run where they always did (after the first add-1s): the same process after
  // `addSteady` more adds, what a long-running server's writes cost once V8, SQLite's page cache and the kept
  // posting lists hold the write path ("Round 26" in docs/living-archive.md).
  const steady = { wall: [] as number[], cpu: 0 };
  const before = next - perContext;
  if (addSteady !== null) {
    await addOnes(addSteady, 7900);
    await addOnes(adds, 3900, steady);
  }
  const edges = await gm.store.countEdges(contextIds[0]!);
  const contextSize = await gm.store.countMemories(contextIds[0]!);
  const mark = await readApproximateMark(gm.store, contextIds[0]!);
  await gm.close();
  const peakRssByPhase = await sampler.stop();

  const first = spawnSync(
    process.execPath,
    ['--import', 'tsx', SELF, '--first-retrieve', file, contextIds[0]!, questions[0]!],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const firstLine = first.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  const firstRetrieveMs = firstLine ? (JSON.parse(firstLine.slice(7)) as { ms: number }).ms : Number.NaN;

  return {
    scenario,
    shape,
    contexts: contextCount,
    memories,
    ingestSeconds: round(ingestSeconds),
    ingestPerSecond: Math.round(memories / ingestSeconds),
    ingestCpuSeconds: round(ingestCpuSeconds),
    dbMiBPer1k: round(fileBytes(file) / 1024 / 1024 / (memories / 1000)),
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    add1: { ...addFigures(add1), warmup: addWarmup },
    add1Steady: addSteady === null ? null : { ...addFigures(steady), after: before + addSteady },
    add100: {
      p50: round(quantile(add100, 0.5)),
      n: add100.length,
      cpuMs: round(add100Cpu / Math.max(1, add100.length)),
    },
    semanticUpdates,
    semanticLag:
      semanticUpdates === 'after-write'
        ? { add1P50: round(quantile(lag.add1, 0.5)), add100P50: round(quantile(lag.add100, 0.5)) }
        : null,
    firstRetrieveMs: round(firstRetrieveMs),
    warmRetrieve: {
      p50: round(quantile(retrieveTimes, 0.5)),
      p95: round(quantile(retrieveTimes, 0.95)),
      p99: round(quantile(retrieveTimes, 0.99)),
      n: retrieveTimes.length,
      cpuMs: round(retrieveCpu / Math.max(1, retrieveTimes.length)),
      warmup,
    },
    compactionSeconds: compactionSeconds === null ? null : round(compactionSeconds),
    compactionFrom: recompact ? 'compact' : 'bulk-import',
    compactionCpuSeconds: compactionCpuSeconds === null ? null : round(compactionCpuSeconds),
    ingestSplit: {
      records: round(split.records),
      schema: round(split.schema),
      semantic: round(split.semantic),
    },
    edgesPerMemory: Object.fromEntries(
      Object.entries(edges).map(([type, count]) => [type, round((2 * count) / contextSize)]),
    ),
    load: { start: round(loadStart), end: round(loadavg()[0]!) },
    knnApproximate: mark === undefined ? null : `${mark.reason} since ${mark.since} (${mark.documents})`,
    autoCompactions: { n: autoCompactions.length, seconds: autoCompactions.map(round) },
    peakRssByPhase,
  };
}

/** Exact rebuild of the semantic graph of one context, when the library offers it. */
async function timeCompaction(gm: object, contextId: string): Promise<number | null> {
  const compact = (gm as { compact?: (contextId: string) => Promise<unknown> }).compact;
  if (typeof compact !== 'function') return null;
  const started = performance.now();
  await compact.call(gm, contextId);
  return (performance.now() - started) / 1000;
}

function printTable(results: readonly ScenarioResult[]): void {
  const header = [
    'scenario',
    'memories',
    'ingest mem/s (s: records, schema, kNN)',
    'MB/1k',
    'peak RSS MB',
    'add-1 p50/p99 ms (cpu; warm-up)',
    'add-1 steady p50/p99 ms (cpu; after)',
    'add-100 p50 ms (cpu)',
    'first retrieve ms',
    'warm retrieve p50/p95/p99 ms (cpu; warm-up)',
    'compaction s (auto during adds: n, median s)',
    'edges/memory (knn, schema)',
    'load 1m start-end',
  ];
  const rows = results.map((r) => [
    r.shape === 'rounds' ? r.scenario : `${r.scenario} ${r.shape}`,
    String(r.memories),
    `${r.ingestPerSecond} (${r.ingestSplit.records}, ${r.ingestSplit.schema}, ${r.ingestSplit.semantic}; cpu ${r.ingestCpuSeconds})`,
    String(r.dbMiBPer1k),
    String(r.peakRssMiB),
    `${r.add1.p50} / ${r.add1.p99} (${r.add1.cpuMs}; ${r.add1.warmup})`,
    r.add1Steady
      ? `${r.add1Steady.p50} / ${r.add1Steady.p99} (${r.add1Steady.cpuMs}; ${r.add1Steady.after})`
      : 'n/a',
    `${r.add100.p50} (${r.add100.cpuMs})${
      r.semanticLag ? `; after-write, kNN in after ${r.semanticLag.add1P50} / ${r.semanticLag.add100P50}` : ''
    }`,
    String(r.firstRetrieveMs),
    `${r.warmRetrieve.p50} / ${r.warmRetrieve.p95} / ${r.warmRetrieve.p99} (${r.warmRetrieve.cpuMs}; ${r.warmRetrieve.warmup})`,
    (r.compactionSeconds === null
      ? 'n/a'
      : `${r.compactionSeconds}${r.compactionFrom === 'bulk-import' ? ' (import)' : ` (cpu ${r.compactionCpuSeconds})`}`) +
      (r.autoCompactions.n > 0
        ? `; auto ${r.autoCompactions.n}, ${round(quantile(r.autoCompactions.seconds, 0.5))}`
        : ''),
    `${r.edgesPerMemory.semantic_knn ?? 0}, ${round(
      Object.entries(r.edgesPerMemory)
        .filter(([type]) => type !== 'semantic_knn')
        .reduce((sum, [, n]) => sum + n, 0),
    )}`,
    `${r.load.start}-${r.load.end}`,
  ]);
  process.stdout.write(`| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|\n`);
  for (const row of rows) process.stdout.write(`| ${row.join(' | ')} |\n`);
}

function parseSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text.trim());
  if (!match) throw new Error(`bad size "${text}" (e.g. 10k, 1m, 500)`);
  const unit = match[2]!.toLowerCase();
  return Math.round(Number(match[1]) * (unit === 'k' ? 1e3 : unit === 'm' ? 1e6 : 1));
}

function fileBytes(file: string): number {
  let total = 0;
  for (const suffix of ['', '-wal']) {
    try {
      total += statSync(file + suffix).size;
    } catch {
      // no WAL file after a clean close
    }
  }
  return total;
}

function cpuMs(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1000;
}

function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function addFigures(times: { wall: readonly number[]; cpu: number }) {
  return {
    p50: round(quantile(times.wall, 0.5)),
    p99: round(quantile(times.wall, 0.99)),
    n: times.wall.length,
    cpuMs: round(times.cpu / Math.max(1, times.wall.length)),
  };
}

/** `--shape`: the generated chat's shape (default rounds). */
function chatShape(value: string | undefined): ChatShape {
  if (value === undefined) return 'rounds';
  if ((CHAT_SHAPES as readonly string[]).includes(value)) return value as ChatShape;
  throw new Error(`--shape: ${CHAT_SHAPES.join(' or ')}, not ${value}`);
}

/** `--add-steady`: 'no' (no steady column) or a count of untimed adds. */
function steadyAdds(value: string | undefined): number | null {
  if (value === 'no') return null;
  const count = Number(value ?? STEADY_ADDS);
  if (!Number.isInteger(count) || count < 0)
    throw new Error(`--add-steady: "${value}" is not 'no' or a count`);
  return count;
}

/** `--semantic-updates`: after-write (default, as the library's) or in-write. */
function semanticUpdatesFlag(value: string | undefined): 'in-write' | 'after-write' {
  if (value === undefined || value === 'in-write' || value === 'after-write') return value ?? 'after-write';
  throw new Error(`--semantic-updates: in-write or after-write, not ${value}`);
}
