/**
 * Where a warm retrieve's time goes, on either backend (issue #11's retrieve figures):
 *
 *   npx tsx bench/retrieve-stages-probe.ts <archive> [n] [--context big] [--pgss]
 *
 * <archive>: a file or postgres:// URL holding a context (default 'big') of 10,000 memories, e.g. from
 * `bench/pg-add-probe.ts build URL 10000` (and `graphmemix copy --from URL --to file.db` for SQLite).
 * Questions: bench:postgres's (chatQuestions seed 7, 6 words); 20 warm-up questions, then n (default 300).
 * Prints wall p50 / mean, each stage's p50 (RetrievalResult.trace.timings), this process's main-thread CPU per
 * question, and for PostgreSQL: client round trips and rows per question, the server's CPU per question
 * (postmaster children, when it runs on this machine) and, with --pgss and pg_stat_statements loaded in the
 * server, the statements by server time per question.
 */
import { existsSync } from 'node:fs';
import pg from 'pg';
import { openGraphmemix } from '../src/graphmemix.ts';
import { countPgStatements } from './support/pg-statement-counter.ts';
import { parseCount, probeFlags } from './support/probe-args.ts';
import { mainThreadCpuSeconds, postgresCpuSeconds } from './support/process-cpu.ts';
import { chatQuestions } from './support/realistic-chat.ts';

const argv = process.argv.slice(2);
const flag = probeFlags(argv);
const pgss = argv.includes('--pgss');
const contextAt = argv.indexOf('--context');
const positional = argv.filter((arg, i) => !arg.startsWith('--') && (contextAt < 0 || i !== contextAt + 1));
const [db, nText] = positional;
if (!db) throw new Error('usage: retrieve-stages-probe.ts <archive> [n] [--context big] [--pgss]');
const n = parseCount(nText ?? '300');
const contextId = flag('context', 'big');
const postgres = /^postgres(ql)?:\/\//.test(db);
// A probe reads an existing archive: a mistyped path must not become a new, empty one.
if (!postgres && !existsSync(db)) throw new Error(`no archive at ${db}`);
const counter = postgres ? countPgStatements() : undefined;
const admin = postgres && pgss ? new pg.Client({ connectionString: db }) : undefined;
await admin?.connect();
const gm = await openGraphmemix({ db });
try {
  const size = await gm.store.countMemories(contextId);
  const questions = chatQuestions(n + 20, 6, { contextId, count: size, seed: 7 });
  for (const question of questions.slice(0, 20)) await gm.retrieve(contextId, question);
  if (admin) await admin.query('SELECT pg_stat_statements_reset()');
  const start = {
    main: mainThreadCpuSeconds() ?? 0,
    server: postgres ? (postgresCpuSeconds() ?? 0) : 0,
    statements: counter?.statements ?? 0,
    rows: counter?.rows ?? 0,
  };
  const walls: number[] = [];
  const stages = new Map<string, number[]>();
  for (const question of questions.slice(20)) {
    const t0 = performance.now();
    const result = await gm.retrieve(contextId, question);
    walls.push(performance.now() - t0);
    for (const [stage, ms] of Object.entries(result.trace.timings)) {
      stages.set(stage, [...(stages.get(stage) ?? []), ms as number]);
    }
  }
  const per = (x: number) => (x / n).toFixed(2);
  const p50 = (x: number[]) => [...x].sort((a, b) => a - b)[x.length >> 1]!.toFixed(2);
  console.log(
    `${size} memories, ${n} questions: wall p50 ${p50(walls)} mean ${per(walls.reduce((a, b) => a + b, 0))} ms; main-thread CPU ${per(1000 * ((mainThreadCpuSeconds() ?? 0) - start.main))} ms per question`,
  );
  console.log(`stage p50 ms: ${[...stages].map(([stage, ms]) => `${stage} ${p50(ms)}`).join(', ')}`);
  if (counter) {
    console.log(
      `per question: round trips ${per(counter.statements - start.statements)}, rows ${per(counter.rows - start.rows)}, server CPU ${per(1000 * ((postgresCpuSeconds() ?? 0) - start.server))} ms`,
    );
  }
  if (admin) {
    const top = await admin.query<{ ms: number; calls: number; query: string }>(
      `SELECT (total_exec_time + total_plan_time) / $1 AS ms, calls, left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS query
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       ORDER BY total_exec_time + total_plan_time DESC LIMIT 8`,
      [n],
    );
    for (const row of top.rows)
      console.log(`  ${Number(row.ms).toFixed(3)} ms/q ${String(row.calls).padStart(5)} calls  ${row.query}`);
  }
} finally {
  await gm.close();
  await admin?.end();
}
