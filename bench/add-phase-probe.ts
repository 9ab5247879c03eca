/**
 * What the slow adds are: per add-1 its wall, CPU, the ingest report's step seconds (write, relations,
 * relations.schema, relations.semantic_knn, ...), the garbage collections that fell inside it (count and
 * pause) and the SQLite statements it ran (count and time inside them, Statement.run/get/all/iterate
 * wrapped). Prints the slowest adds with their phases and the mean of each phase over all adds and over
 * the slowest 5%, so a tail is explained by the phase that grows in it.
 *
 *   npx tsx bench/add-phase-probe.ts <file.db> [--adds 200] [--batch 1] [--seed 900] [--checkout dir] [--json out.json]
 *
 * `--semantic-updates after-write` (the default, as the library's; `in-write` for the other mode) opens the archive
 * so (OpenGraphmemixOptions.semanticUpdates): each add's wall is then the write without its kNN update, and `drain`
 * the time after it until its update is in (waitForCompactions).
 * `--batch n` adds n records per call (an add-100: --batch 100); the run's statement time by SQL is printed.
 * `--checkout dir` runs another worktree's code (e.g. /work/main) with this probe.
 * `--questions n` asks n questions (bench:scale's warm-up generator) before the adds, as bench:scale's add phase
 * follows its retrieve phase in one process. `--top-sql n` prints the n statements with the most time (12).
 *
 * <file.db>: one context 'big' (retrieve-probe.ts / knn-add-probe.ts build); it is WRITTEN TO: pass a copy.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { parseCount, probeFlags } from './support/probe-args.ts';
import { chatQuestions, chatRecords } from './support/realistic-chat.ts';

const file = process.argv[2];
if (!file || file.startsWith('--'))
  throw new Error('usage: <file.db> [--adds 200] [--seed 900] [--json out]');
const flag = probeFlags();
const adds = parseCount(flag('adds', '200'));
const seed = Number(flag('seed', '900'));
const batch = parseCount(flag('batch', '1'));
const checkout = flag('checkout', '..');
const jsonOut = flag('json', '');
const questions = parseCount(flag('questions', '0'));

// Statement time: every better-sqlite3 Statement call, wrapped before the store prepares any.
const statementStats = { calls: 0, ms: 0, commitMs: 0, slowest: [] as Array<{ sql: string; ms: number }> };
const bySql = new Map<string, { calls: number; ms: number; rows: number }>();
/** A statement's start and end (two reads of one table differ in their WHERE / ORDER BY / LIMIT). */
const shortSql = (sql: string) => (sql.length > 110 ? `${sql.slice(0, 70)} … ${sql.slice(-36)}` : sql);
const sqlOf = new WeakMap<object, string>();
const proto = (Database.prototype as unknown as { prepare: (sql: string) => object }).prepare;
const wrapped = new WeakSet<object>();
(Database.prototype as unknown as { prepare: (sql: string) => object }).prepare = function (
  this: unknown,
  sql: string,
) {
  const statement = proto.call(this, sql) as Record<string, unknown>;
  sqlOf.set(statement, sql);
  const statementProto = Object.getPrototypeOf(statement) as Record<string, unknown>;
  if (!wrapped.has(statementProto)) {
    wrapped.add(statementProto);
    for (const name of ['run', 'get', 'all', 'iterate']) {
      const original = statementProto[name] as (...args: unknown[]) => unknown;
      statementProto[name] = function (this: unknown, ...args: unknown[]) {
        const t = performance.now();
        let rows = 0;
        try {
          const out = original.apply(this, args);
          if (Array.isArray(out)) rows = out.length;
          return out;
        } finally {
          const ms = performance.now() - t;
          statementStats.calls++;
          statementStats.ms += ms;
          // Statements prepared before the wrapper (better-sqlite3's own BEGIN / COMMIT of db.transaction) by
          // their source.
          const text = (sqlOf.get(this as object) ?? (this as { source?: string }).source ?? '?').replace(
            /\s+/g,
            ' ',
          );
          if (text === 'COMMIT') statementStats.commitMs += ms;
          const key = shortSql(text);
          const total = bySql.get(key) ?? { calls: 0, ms: 0, rows: 0 };
          total.calls++;
          total.ms += ms;
          total.rows += rows;
          bySql.set(key, total);
          // The three slowest statements of the current add (what a tail add waited on).
          const slow = statementStats.slowest;
          if (slow.length < 3 || ms > slow[2]!.ms) {
            const sql = text.slice(0, 60);
            slow.push({ sql, ms });
            slow.sort((x, y) => y.ms - x.ms);
            slow.length = Math.min(slow.length, 3);
          }
        }
      };
    }
  }
  return statement;
};

const gcStats = { count: 0, ms: 0, major: 0 };
/** GC pauses by kind over the whole run (1 minor, 4 major, 8 incremental marking, 16 weak callbacks). */
const gcByKind = new Map<number, { count: number; ms: number }>();
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcStats.count++;
    gcStats.ms += entry.duration;
    // kind 4 = major (mark-sweep-compact), 1 = minor (scavenge)
    const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
    if (kind === 4) gcStats.major++;
    const byKind = gcByKind.get(kind) ?? { count: 0, ms: 0 };
    byKind.count++;
    byKind.ms += entry.duration;
    gcByKind.set(kind, byKind);
  }
}).observe({ entryTypes: ['gc'] });

const { openGraphmemix } = (await import(
  `${checkout}/src/graphmemix.ts`
)) as typeof import('../src/graphmemix.ts');
const semanticUpdates = flag('semantic-updates', 'after-write');
if (semanticUpdates !== 'in-write' && semanticUpdates !== 'after-write')
  throw new Error('--semantic-updates: in-write or after-write');
const gm = await openGraphmemix({ db: file, semanticUpdates });
const size = await gm.store.countMemories('big');
const records = Array.from({ length: adds }, (_, i) => [
  ...chatRecords({ contextId: 'big', count: batch, seed: seed + i, start: size + i * batch }),
]);
for (const question of chatQuestions(questions, 5, { contextId: 'big', count: size, seed: 6 })) {
  await gm.retrieve('big', question);
}
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
const loadBefore = load();
gcByKind.clear();
const heapBefore = process.memoryUsage();

interface Row {
  at: number;
  wall: number;
  cpu: number;
  statements: number;
  statementMs: number;
  /** Time inside COMMIT statements (a writer's automatic checkpoint runs in the COMMIT that triggers it). */
  commitMs: number;
  gcs: number;
  gcMs: number;
  majorGcs: number;
  steps: Record<string, number>;
  /** After-write: ms from the add's return until its semantic update is in. */
  drain: number;
  warnings: number;
  slowest: Array<{ sql: string; ms: number }>;
}
const rows: Row[] = [];
for (let i = 0; i < adds; i++) {
  const statementsBefore = { ...statementStats };
  statementStats.slowest = [];
  const gcBefore = { ...gcStats };
  const started = process.cpuUsage();
  const t = performance.now();
  const report = await gm.addMemories('big', records[i]!);
  const wall = performance.now() - t;
  const used = process.cpuUsage(started);
  const drainStarted = performance.now();
  if (semanticUpdates === 'after-write') await gm.waitForCompactions();
  const drain = performance.now() - drainStarted;
  // GC entries arrive asynchronously: let the observer run before reading them.
  await new Promise((resolve) => setImmediate(resolve));
  rows.push({
    at: i,
    wall,
    cpu: (used.user + used.system) / 1000,
    statements: statementStats.calls - statementsBefore.calls,
    statementMs: statementStats.ms - statementsBefore.ms,
    commitMs: statementStats.commitMs - statementsBefore.commitMs,
    gcs: gcStats.count - gcBefore.count,
    gcMs: gcStats.ms - gcBefore.ms,
    majorGcs: gcStats.major - gcBefore.major,
    steps: Object.fromEntries(Object.entries(report.stepSeconds).map(([key, s]) => [key, s * 1000])),
    drain,
    warnings: report.warnings.length,
    slowest: statementStats.slowest,
  });
}
await gm.close();

const quantile = (values: number[], p: number) =>
  [...values].sort((x, y) => x - y)[Math.min(values.length - 1, Math.floor(values.length * p))]!;
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
const phases = (row: Row): Record<string, number> => ({
  cpu: row.cpu,
  statements: row.statements,
  statementMs: row.statementMs,
  commitMs: row.commitMs,
  drain: row.drain,
  gcs: row.gcs,
  gcMs: row.gcMs,
  majorGcs: row.majorGcs,
  ...row.steps,
});
const describe = (set: Row[]) => {
  const keys = new Set(set.flatMap((row) => Object.keys(phases(row))));
  return [...keys]
    .map((key) => `${key} ${mean(set.map((row) => phases(row)[key] ?? 0)).toFixed(2)}`)
    .join(', ');
};
const walls = rows.map((row) => row.wall);
const cpus = rows.map((row) => row.cpu);
console.log(
  `${size} memories, ${adds} add-${batch}, 1-min load ${loadBefore} -> ${load()}: wall p50 ${quantile(walls, 0.5).toFixed(1)}` +
    ` / p99 ${quantile(walls, 0.99).toFixed(1)} ms, CPU p50 ${quantile(cpus, 0.5).toFixed(1)} / p99 ${quantile(cpus, 0.99).toFixed(1)} ms`,
);
if (semanticUpdates === 'after-write') {
  const drains = rows.map((row) => row.drain);
  const lag = rows.map((row) => row.wall + row.drain);
  console.log(
    `after-write: drain p50 ${quantile(drains, 0.5).toFixed(1)} / p99 ${quantile(drains, 0.99).toFixed(1)} ms; ` +
      `add + drain p50 ${quantile(lag, 0.5).toFixed(1)} / p99 ${quantile(lag, 0.99).toFixed(1)} ms`,
  );
}
const commits = rows.map((row) => row.commitMs);
console.log(
  `COMMIT per add: p50 ${quantile(commits, 0.5).toFixed(1)} / max ${Math.max(...commits).toFixed(1)} ms,` +
    ` adds with a COMMIT over 50 ms: ${commits.filter((ms) => ms > 50).length}`,
);
const slowest = [...rows].sort((x, y) => y.wall - x.wall);
const tail = slowest.slice(0, Math.max(1, Math.ceil(adds * 0.05)));
console.log(`mean of all: wall ${mean(walls).toFixed(2)}, ${describe(rows)}`);
console.log(`mean of slowest 5%: wall ${mean(tail.map((row) => row.wall)).toFixed(2)}, ${describe(tail)}`);
for (const row of slowest.slice(0, 10)) {
  console.log(
    `  add #${row.at}: wall ${row.wall.toFixed(1)} ms, ${Object.entries(phases(row))
      .map(([key, value]) => `${key} ${value.toFixed(1)}`)
      .join(', ')}${row.warnings > 0 ? `, ${row.warnings} warnings` : ''}` +
      `\n    slowest statements: ${row.slowest.map(({ sql, ms }) => `${ms.toFixed(1)} ms ${sql}`).join(' | ')}`,
  );
}
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
console.log(
  `heap before the adds: used ${mib(heapBefore.heapUsed)} / total ${mib(heapBefore.heapTotal)} MiB, rss ${mib(heapBefore.rss)} MiB; ` +
    `GC during the adds by kind: ${[...gcByKind]
      .sort((x, y) => x[0] - y[0])
      .map(([kind, { count, ms }]) => `kind ${kind} ${count}x ${ms.toFixed(0)} ms`)
      .join(', ')}`,
);
console.log('statement time by SQL (whole run):');
for (const [sql, { calls, ms, rows }] of [...bySql]
  .sort((x, y) => y[1].ms - x[1].ms)
  .slice(0, parseCount(flag('top-sql', '12')))) {
  console.log(`  ${ms.toFixed(1)} ms, ${calls} calls, ${rows} rows: ${sql}`);
}
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ size, load: loadBefore, rows }, null, 1));
