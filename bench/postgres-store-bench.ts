/**
 * The Postgres store against SQLite on one generated chat context (bench/support/realistic-chat.ts, views by
 * buildViews as ingest makes them): BM25 equality of the two backends (top 10 per view kind, ids and scores),
 * add-1 latency (one writeMemories of one new memory into the context) and retrieve-like searchLexical
 * latency (limit 48 per kind, all kinds: the pipeline's call), each as p50 / p95.
 *
 *   GRAPHMEMIX_PG_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:pg-store -- [--memories 10000]
 *
 * The URL names an admin database: a fresh database is created for the run and dropped after. Without a URL
 * (GRAPHMEMIX_PG_URL or GRAPHMEMIX_TEST_PG_URL) the bench prints why and exits 0.
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildViews } from '../src/digest/build-views.ts';
import { contentHash } from '../src/digest/content-hash.ts';
import { percentile } from '../src/eval/percentile.ts';
import type { ArchiveStore, MemoryWrite } from '../src/store/archive-store-spec.ts';
import { openStore } from '../src/store/open-store.ts';
import { postgresLexicalCounters } from '../src/store/postgres/postgres-lexical-search.ts';
import { openPostgresStore } from '../src/store/postgres/postgres-store.ts';
import type { MemoryRecord } from '../src/types/memory-record.ts';
import { checkBenchFlags } from './support/probe-args.ts';
import { chatQuestions, chatRecords } from './support/realistic-chat.ts';

checkBenchFlags('GRAPHMEMIX_PG_URL=postgres://... npm run bench:pg-store -- [--memories 10000]', [
  '--memories',
]);

const url = process.env.GRAPHMEMIX_PG_URL ?? process.env.GRAPHMEMIX_TEST_PG_URL;
const at = process.argv.indexOf('--memories');
const memories = at > 0 ? Number(process.argv[at + 1]) : 10_000;
const QUERIES = 200;
const ADDS = 200;
const CONTEXT = 'bench';

function writeOf(record: MemoryRecord): MemoryWrite {
  return { record, views: buildViews(record), contentHash: contentHash(record) };
}

async function timed<T>(times: number[], work: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const result = await work();
  times.push(performance.now() - start);
  return result;
}

function summary(times: number[]): string {
  return `p50 ${percentile(times, 50).toFixed(2)} ms, p95 ${percentile(times, 95).toFixed(2)} ms`;
}

async function main(): Promise<void> {
  if (!url) {
    console.log(
      'bench:pg-store skipped: set GRAPHMEMIX_PG_URL (an admin database URL of a PostgreSQL server)',
    );
    return;
  }
  const name = `gmx_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const dbUrl = new URL(url);
  dbUrl.pathname = `/${name}`;
  const dir = mkdtempSync(join(tmpdir(), 'graphmemix-pg-bench-'));
  const stores: [string, ArchiveStore][] = [
    ['sqlite', await openStore(join(dir, 'bench.db'))],
    ['postgres', await openPostgresStore({ url: dbUrl.toString() })],
  ];
  try {
    const options = { contextId: CONTEXT, count: memories, seed: 11 };
    const records = [...chatRecords(options)];
    for (const [backend, store] of stores) {
      const start = performance.now();
      for (let i = 0; i < records.length; i += 500) {
        await store.writeMemories(CONTEXT, records.slice(i, i + 500).map(writeOf));
      }
      const seconds = (performance.now() - start) / 1000;
      console.log(
        `${backend}: wrote ${records.length} memories in ${seconds.toFixed(1)} s (${(records.length / seconds).toFixed(0)}/s, batches of 500)`,
      );
    }
    // Steady state of a live database: autovacuum would have analysed the tables and set the visibility map
    // (index-only scans) within a minute of such a load; do it now instead of waiting for it.
    const maintenance = new pg.Client({ connectionString: dbUrl.toString() });
    await maintenance.connect();
    await maintenance.query('VACUUM ANALYZE');
    await maintenance.end();
    const questions = chatQuestions(QUERIES, 5, options);
    let maxDelta = 0;
    let sameLists = 0;
    let lists = 0;
    for (const question of questions) {
      const [sqliteHits, pgHits] = await Promise.all(
        stores.map(([, store]) => store.searchLexical(CONTEXT, question, { limit: 10 })),
      );
      const kinds = new Set([...sqliteHits!, ...pgHits!].map((hit) => hit.kind));
      for (const kind of kinds) {
        const x = sqliteHits!.filter((hit) => hit.kind === kind);
        const y = pgHits!.filter((hit) => hit.kind === kind);
        lists++;
        const same =
          x.length === y.length &&
          x.every((hit, i) => hit.memoryId === y[i]!.memoryId && hit.key === y[i]!.key);
        if (same) sameLists++;
        x.forEach((hit, i) => {
          if (y[i]) maxDelta = Math.max(maxDelta, Math.abs(hit.rawScore - y[i]!.rawScore));
        });
      }
    }
    console.log(
      `BM25 equality: ${sameLists}/${lists} top-10 lists (query x kind) identical, max |score delta| ${maxDelta}`,
    );
    for (const [backend, store] of stores) {
      const search: number[] = [];
      const before = { ...postgresLexicalCounters };
      for (const question of questions)
        await timed(search, () => store.searchLexical(CONTEXT, question, { limit: 48 }));
      if (backend === 'postgres') {
        const per = (name: keyof typeof before) =>
          ((postgresLexicalCounters[name] - before[name]) / questions.length).toFixed(1);
        console.log(
          `postgres pruning per search: ${per('rounds')} rounds, ${per('postingsRead')} of ${per('postingsInLists')} postings read, ${per('forwardLists')} forward lists`,
        );
      }
      const add: number[] = [];
      const extra = [...chatRecords({ ...options, start: memories, count: ADDS })];
      for (const record of extra) await timed(add, () => store.writeMemories(CONTEXT, [writeOf(record)]));
      console.log(
        `${backend}: searchLexical (limit 48, all kinds) ${summary(search)}; add-1 ${summary(add)}`,
      );
    }
    console.log(
      `load average (1/5/15 min): ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' / ')}`,
    );
  } finally {
    for (const [, store] of stores) await store.close();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
