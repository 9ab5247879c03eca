/**
 * `npm run bench:postgres [-- --contexts 1000 --per-context 1000 --big 10000 --queries 200 --adds 100
 *   --db postgres://… --json]`
 *
 * The same archive in SQLite and in PostgreSQL, in one run: C contexts x M memories of realistic generated
 * chat (bench/support/realistic-chat.ts) plus one context of --big memories. Per backend: bulk ingest mem/s
 * (the one ingest path: views, keys, relations), warm retrieve p50/p95 over random contexts, warm retrieve
 * p50/p95 in the big context, add-1 p50/p95 into the big context (one memory through addMemories: views,
 * incremental relations). Offline (no model), the public library API, no worker threads. Ratios are
 * Postgres / SQLite. Targets (issue #11): retrieve p50 on Postgres within 2x of SQLite at 10k memories per
 * context; add-1 into a 10k context <= 20 ms p50.
 *
 * Postgres: --db, else $GRAPHMEMIX_BENCH_PG_URL, else a throwaway cluster started with scripts/pg-cluster.sh
 * (root, Postgres 15 installed) and stopped at the end. Without any, the Postgres column is skipped with the
 * reason. Figures depend on the machine's load: the header prints `uptime`'s load average.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ingestItems } from '../src/digest/ingest.ts';
import { openGraphmemix } from '../src/graphmemix.ts';
import type { Graphmemix } from '../src/graphmemix-api.ts';
import type { ImportItem } from '../src/importers/importer-spec.ts';
import { redactDbUrl } from '../src/store/store-location.ts';
import { chatArchive, chatQuestions, chatRecords } from './support/realistic-chat.ts';
import { percentile } from './support/replica-cluster.ts';
import { throwawayPostgres } from './support/throwaway-postgres.ts';

const { values } = parseArgs({
  options: {
    contexts: { type: 'string', default: '1000' },
    'per-context': { type: 'string', default: '1000' },
    big: { type: 'string', default: '10000' },
    queries: { type: 'string', default: '200' },
    adds: { type: 'string', default: '100' },
    db: { type: 'string' },
    backends: { type: 'string', default: 'sqlite,postgres' },
    json: { type: 'boolean', default: false },
  },
});
const count = (name: keyof typeof values, min = 0): number => {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer >= ${min}`);
  return value;
};
const contexts = count('contexts', 1);
const perContext = count('per-context', 1);
const big = count('big');
const queries = count('queries', 1);
const adds = count('adds', 1);
const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);

interface BackendFigures {
  backend: string;
  memories: number;
  ingestSeconds: number;
  ingestPerSecond: number;
  /** mem/s over the last tenth of the contexts: a rate that falls as the archive grows shows here. */
  ingestLastTenthPerSecond: number;
  retrieveRandom: { p50: number; p95: number; n: number };
  retrieveBig: { p50: number; p95: number; n: number };
  add1Big: { p50: number; p95: number; p99: number; n: number };
  /** This process's CPU ms per ingested memory (the Node side; the server's is not in it). */
  ingestNodeCpuMs: number;
}

const round = (x: number) => Math.round(x * 100) / 100;
const stats = (times: number[]) => ({
  p50: round(percentile(times, 50)),
  p95: round(percentile(times, 95)),
  n: times.length,
});

async function measure(backend: string, db: string): Promise<BackendFigures> {
  const gm = await openGraphmemix({ db });
  try {
    const ids = Array.from({ length: contexts }, (_, c) => `u${c}`);
    const started = performance.now();
    const cpu0 = process.cpuUsage();
    const lastTenth = Math.max(1, Math.floor(contexts / 10));
    let lastTenthStarted = started;
    for (const [c, contextId] of ids.entries()) {
      if (c === contexts - lastTenth) lastTenthStarted = performance.now();
      await ingestItems(
        gm.store,
        chatArchive({ contextId, count: perContext, seed: 11 + c }) as Iterable<ImportItem>,
      );
      if ((c + 1) % Math.max(1, Math.floor(contexts / 10)) === 0) {
        log(
          `  ${backend}: ${c + 1}/${contexts} contexts (${((performance.now() - started) / 1000).toFixed(0)} s)`,
        );
      }
    }
    const lastTenthSeconds = (performance.now() - lastTenthStarted) / 1000;
    if (big > 0)
      await ingestItems(
        gm.store,
        chatArchive({ contextId: 'big', count: big, seed: 7 }) as Iterable<ImportItem>,
      );
    const ingestSeconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const memories = contexts * perContext + big;
    log(
      `  ${backend}: ingested ${memories} memories in ${ingestSeconds.toFixed(1)} s (load ${loadavg()[0]!.toFixed(2)})`,
    );

    const questions = chatQuestions(queries + 10, 5, { contextId: 'u0', count: perContext, seed: 11 });
    const retrieveRandom = await timeRetrieves(gm, questions, (i) => ids[(i * 7919) % ids.length]!);
    const retrieveBig =
      big > 0
        ? await timeRetrieves(
            gm,
            chatQuestions(queries + 10, 6, { contextId: 'big', count: big, seed: 7 }),
            () => 'big',
          )
        : [];
    const add1: number[] = [];
    for (let i = 0; big > 0 && i < adds; i++) {
      const [record] = [...chatRecords({ contextId: 'big', count: 1, seed: 900 + i, start: big + i })];
      const t0 = performance.now();
      await gm.addMemories('big', [record!]);
      add1.push(performance.now() - t0);
    }
    const figures: BackendFigures = {
      backend,
      memories,
      ingestSeconds: round(ingestSeconds),
      ingestPerSecond: Math.round(memories / ingestSeconds),
      ingestLastTenthPerSecond: Math.round((lastTenth * perContext) / lastTenthSeconds),
      retrieveRandom: stats(retrieveRandom),
      retrieveBig: stats(retrieveBig),
      add1Big: { ...stats(add1), p99: round(percentile(add1, 99)) },
      ingestNodeCpuMs: round((cpu.user + cpu.system) / 1000 / memories),
    };
    // Each backend's figures as soon as they exist: a run stopped during the next backend keeps them.
    log(`  ${backend}: ${JSON.stringify(figures)} (load ${loadavg()[0]!.toFixed(2)})`);
    return figures;
  } finally {
    await gm.close();
  }
}

/** Warm retrieves: the first 10 warm caches and connections and are not counted. */
async function timeRetrieves(gm: Graphmemix, questions: string[], contextOf: (i: number) => string) {
  const times: number[] = [];
  for (const [i, question] of questions.entries()) {
    const t0 = performance.now();
    await gm.retrieve(contextOf(i), question);
    if (i >= 10) times.push(performance.now() - t0);
  }
  return times;
}

async function main(): Promise<void> {
  const wanted = new Set(values.backends.split(','));
  const scratch = mkdtempSync(join(tmpdir(), 'graphmemix-pg-bench-'));
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  log(
    `bench:postgres ${contexts} contexts x ${perContext} + one context of ${big}; ${queries} retrieves, ${adds} adds; load average ${load} (${process.env.GRAPHMEMIX_BENCH_NOTE ?? 'shared machine'})`,
  );
  const results: BackendFigures[] = [];
  let skipped: string | undefined;
  let cluster: { url: string; stop: () => void } | undefined;
  try {
    if (wanted.has('sqlite')) results.push(await measure('sqlite', join(scratch, 'bench.db')));
    if (wanted.has('postgres')) {
      let db = values.db ?? process.env.GRAPHMEMIX_BENCH_PG_URL;
      if (db === undefined) {
        const started = throwawayPostgres(resolve(scratch, 'pg'));
        if (typeof started === 'string') skipped = started;
        else {
          cluster = started;
          db = started.url;
        }
      }
      if (db !== undefined) {
        log(`postgres: ${redactDbUrl(db)}`);
        results.push(await measure('postgres', db));
      } else log(`postgres skipped: ${skipped}`);
    }
  } finally {
    cluster?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
  const loadAfter = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  if (values.json) {
    process.stdout.write(
      `${JSON.stringify({ contexts, perContext, big, queries, adds, loadBefore: load, loadAfter, results, skipped }, null, 2)}\n`,
    );
    return;
  }
  printTable(results);
  log(`load average after: ${loadAfter}`);
}

function printTable(results: BackendFigures[]): void {
  const sqlite = results.find((r) => r.backend === 'sqlite');
  const pg = results.find((r) => r.backend === 'postgres');
  const rows: Array<[string, (r: BackendFigures) => number]> = [
    ['ingest mem/s', (r) => r.ingestPerSecond],
    ['ingest mem/s, last tenth of contexts', (r) => r.ingestLastTenthPerSecond],
    ['ingest Node CPU ms per memory', (r) => r.ingestNodeCpuMs],
    ['retrieve p50 ms (random contexts)', (r) => r.retrieveRandom.p50],
    ['retrieve p95 ms (random contexts)', (r) => r.retrieveRandom.p95],
    [`retrieve p50 ms (context of ${big})`, (r) => r.retrieveBig.p50],
    [`retrieve p95 ms (context of ${big})`, (r) => r.retrieveBig.p95],
    [`add-1 p50 ms (context of ${big})`, (r) => r.add1Big.p50],
    [`add-1 p95 ms (context of ${big})`, (r) => r.add1Big.p95],
    [`add-1 p99 ms (context of ${big})`, (r) => r.add1Big.p99],
  ];
  const cell = (value: number | undefined) => (value === undefined ? '-' : String(value)).padStart(10);
  log(`\n${'row'.padEnd(36)}${'sqlite'.padStart(10)}${'postgres'.padStart(10)}${'pg/sqlite'.padStart(10)}`);
  for (const [name, get] of rows) {
    const a = sqlite ? get(sqlite) : undefined;
    const b = pg ? get(pg) : undefined;
    const ratio = a !== undefined && b !== undefined && a > 0 ? round(b / a) : undefined;
    log(`${name.padEnd(36)}${cell(a)}${cell(b)}${cell(ratio)}`);
  }
}

await main();
