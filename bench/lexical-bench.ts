/**
 * Lexical search at scale: the SQLite store's persistent index against the old in-memory Bm25Index.
 * A generated chat context (Zipfian vocabulary of 30k words plus stopwords, seeded mulberry32), each memory
 * with a text view and a metadata view, written in 500-record transactions. Prints per size:
 * - write throughput (memories/s, views/s, postings/s) of writeMemories, lexical index included;
 * - DB bytes per 1k views (file after close) and the lexical tables' share (dbstat);
 * - first search on a freshly opened store (open + search, same process) and warm p50/p95/p99 over
 *   --queries queries of 2-8 words drawn from the same distribution, limit 48 per kind (the pipeline's);
 * - the old path for comparison: SELECT all views + Bm25Index.build + search (what every first search
 *   after a write cost), then its warm percentiles; and a check that both return the same hits.
 *
 *   npm run bench:lexical -- [--sizes 10000,100000] [--million] [--queries 300] [--skip-old] [--keep dir [--reuse]]
 *     [--json]
 */

import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { mulberry32 } from '../src/digest/semantic/seeded-random.ts';
import { percentile } from '../src/eval/percentile.ts';
import { Bm25Index } from '../src/retrieval/bm25-index.ts';
import type { MemoryWrite } from '../src/store/archive-store-spec.ts';
import { openStore } from '../src/store/open-store.ts';
import type { MemoryRecord } from '../src/types/memory-record.ts';
import type { ViewHit } from '../src/types/view.ts';
import { checkBenchFlags } from './support/probe-args.ts';

checkBenchFlags(
  'npm run bench:lexical -- [--sizes 10000,100000] [--million] [--queries 300] [--skip-old] [--keep dir [--reuse]] [--json]',
  ['--sizes', '--million', '--queries', '--skip-old', '--keep', '--reuse', '--json'],
);

const args = process.argv.slice(2);
const json = args.includes('--json');
const flag = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const sizes = (flag('--sizes') ?? '10000,100000').split(',').map(Number);
if (args.includes('--million')) sizes.push(1_000_000);
const queryCount = Math.max(200, Number(flag('--queries') ?? 300));
const skipOld = args.includes('--skip-old');
/** Keep the generated database files in this folder (for inspection); temporary otherwise. */
const keep = flag('--keep');
/** With --keep: search an existing kept file instead of writing it again (write figures are then NaN). */
const reuse = args.includes('--reuse');
const BATCH = 500;
const LIMIT = 48;
const VOCABULARY = 30_000;

interface Row {
  memories: number;
  views: number;
  postings: number;
  ingestSeconds: number;
  memoriesPerSecond: number;
  viewsPerSecond: number;
  postingsPerSecond: number;
  bytesPer1kViews: number;
  lexicalBytesPer1kViews: number | null;
  firstSearchMs: number;
  warm: { p50: number; p95: number; p99: number };
  old: { firstSearchMs: number; warm: { p50: number; p95: number; p99: number }; mismatches: number } | null;
}

const STOPWORDS =
  'i you the a to and it is that of in for my we so but was me this have on just what with'.split(' ');
const MONTHS = 'January February March April May June July August September October November December'.split(
  ' ',
);
const DAYS = 'Monday Tuesday Wednesday Thursday Friday Saturday Sunday'.split(' ');

/** Chat-like text: ~45% stopwords, content words Zipf(1) over a pronounceable vocabulary. */
function generator(seed: number) {
  const random = mulberry32(seed);
  const syllables =
    'ba be bi bo ka ke ki ko la le li lo ma me mi mo na ne ni no ra re ri ro ta te ti to va ve vi vo za ze'.split(
      ' ',
    );
  const vocabulary = new Set<string>();
  while (vocabulary.size < VOCABULARY) {
    const count = 2 + Math.floor(random() * 3);
    let word = '';
    for (let i = 0; i < count; i++) word += syllables[Math.floor(random() * syllables.length)];
    vocabulary.add(word);
  }
  const words = [...vocabulary];
  const cumulative = new Float64Array(words.length);
  let sum = 0;
  for (let i = 0; i < words.length; i++) {
    sum += 1 / (i + 1);
    cumulative[i] = sum;
  }
  const content = () => {
    const r = random() * sum;
    let lo = 0;
    let hi = words.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < r) lo = mid + 1;
      else hi = mid;
    }
    return words[lo]!;
  };
  const places = Array.from({ length: 200 }, content);
  const speakers = ['Ann', 'Ben', 'Chloe', 'Dev', 'Eli', 'Fay', 'Gus', 'Hana'];
  return {
    message(): string {
      const length = Math.min(80, 2 + Math.floor(-Math.log(1 - random()) * 12));
      const tokens: string[] = [];
      for (let i = 0; i < length; i++) {
        tokens.push(random() < 0.45 ? STOPWORDS[Math.floor(random() * STOPWORDS.length)]! : content());
      }
      return tokens.join(' ');
    },
    metadata(sequence: number): string {
      const day = Math.floor(sequence / 40);
      return `${MONTHS[day % 12]} ${2020 + ((day / 365) | 0)} ${DAYS[day % 7]} ${places[day % places.length]} ${
        speakers[sequence % speakers.length]
      }`;
    },
    query(): string {
      const length = 2 + Math.floor(random() * 7);
      return Array.from({ length }, content).join(' ');
    },
  };
}

function writesFor(gen: ReturnType<typeof generator>, from: number, count: number): MemoryWrite[] {
  const writes: MemoryWrite[] = [];
  for (let sequence = from; sequence < from + count; sequence++) {
    const id = `m${sequence.toString().padStart(8, '0')}`;
    const text = gen.message();
    const record: MemoryRecord = {
      id,
      contextId: 'bench',
      kind: 'message',
      sequence,
      text,
      assets: [],
      speaker: 'Ann',
    };
    writes.push({
      record,
      views: [
        { memoryId: id, kind: 'text', key: 'main', text },
        { memoryId: id, kind: 'metadata', key: 'main', text: gen.metadata(sequence) },
      ],
      contentHash: `h${sequence}`,
    });
  }
  return writes;
}

function percentiles(times: number[]) {
  return { p50: percentile(times, 50), p95: percentile(times, 95), p99: percentile(times, 99) };
}

function sameHits(x: ViewHit[], y: ViewHit[]): boolean {
  return (
    x.length === y.length &&
    x.every((h, i) => {
      const o = y[i]!;
      return (
        h.memoryId === o.memoryId &&
        h.kind === o.kind &&
        h.key === o.key &&
        Math.abs(h.rawScore - o.rawScore) <= 1e-9
      );
    })
  );
}

async function bench(memories: number): Promise<Row> {
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'graphmemix-lexbench-'));
  const file = join(dir, `bench-${memories}.db`);
  const reused = reuse && existsSync(file);
  if (!reused) rmSync(file, { force: true });
  try {
    const gen = generator(42);
    let store = await openStore(file);
    const started = performance.now();
    for (let from = 0; from < memories; from += BATCH) {
      const writes = writesFor(gen, from, Math.min(BATCH, memories - from));
      // Reusing a kept file: the writes are still generated so the queries drawn after them are the same.
      if (!reused) await store.writeMemories('bench', writes);
    }
    const ingestSeconds = reused ? Number.NaN : (performance.now() - started) / 1000;
    await store.close();

    const raw = new Database(file, { readonly: true });
    const views = (raw.prepare('SELECT COUNT(*) AS n FROM views').get() as { n: number }).n;
    const postings = (raw.prepare('SELECT SUM(docs) AS n FROM lex_term_stats').get() as { n: number }).n;
    let lexicalBytes: number | null = null;
    try {
      lexicalBytes = (
        raw
          .prepare(
            `SELECT SUM(pgsize) AS bytes FROM dbstat WHERE name LIKE 'lex_%' OR name LIKE 'sqlite_autoindex_lex_%'`,
          )
          .get() as { bytes: number }
      ).bytes;
    } catch {
      // dbstat is optional in SQLite builds.
    }
    raw.close();
    const bytes = statSync(file).size;

    const queries = Array.from({ length: queryCount }, () => gen.query());
    let t = performance.now();
    store = await openStore(file);
    const firstHits = await store.searchLexical('bench', queries[0]!, { limit: LIMIT });
    const firstSearchMs = performance.now() - t;
    const times: number[] = [];
    const hits: ViewHit[][] = [];
    for (const query of queries) {
      t = performance.now();
      hits.push(await store.searchLexical('bench', query, { limit: LIMIT }));
      times.push(performance.now() - t);
    }
    await store.close();

    let old: Row['old'] = null;
    if (!skipOld) {
      const db = new Database(file, { readonly: true });
      t = performance.now();
      const documents = db
        .prepare(`SELECT memory_id AS memoryId, kind, key, text FROM views WHERE context_id = ? AND text != ''
          ORDER BY memory_id, position`)
        .all('bench') as { memoryId: string; kind: 'text'; key: string; text: string }[];
      const index = Bm25Index.build(documents);
      const oldFirst = index.search(queries[0]!, { limit: LIMIT });
      const oldFirstMs = performance.now() - t;
      db.close();
      let mismatches = sameHits(oldFirst, firstHits) ? 0 : 1;
      const oldTimes: number[] = [];
      queries.forEach((query, i) => {
        const start = performance.now();
        const result = index.search(query, { limit: LIMIT });
        oldTimes.push(performance.now() - start);
        if (!sameHits(result, hits[i]!)) mismatches++;
      });
      old = { firstSearchMs: oldFirstMs, warm: percentiles(oldTimes), mismatches };
    }
    return {
      memories,
      views,
      postings,
      ingestSeconds,
      memoriesPerSecond: memories / ingestSeconds,
      viewsPerSecond: views / ingestSeconds,
      postingsPerSecond: postings / ingestSeconds,
      bytesPer1kViews: (bytes / views) * 1000,
      lexicalBytesPer1kViews: lexicalBytes === null ? null : (lexicalBytes / views) * 1000,
      firstSearchMs,
      warm: percentiles(times),
      old,
    };
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

const rows: Row[] = [];
for (const size of sizes) {
  rows.push(await bench(size));
  if (!json) printRow(rows[rows.length - 1]!);
}
if (json) console.log(JSON.stringify(rows, null, 2));

function printRow(row: Row): void {
  const ms = (x: number) => x.toFixed(x < 10 ? 2 : 0);
  const k = (x: number) => `${(x / 1000).toFixed(1)}k`;
  console.log(
    `\n${row.memories} memories, ${row.views} views, ${row.postings} postings (limit ${LIMIT} per kind, ${queryCount} queries)`,
  );
  console.log(
    `  write      ${k(row.memoriesPerSecond)} memories/s  ${k(row.viewsPerSecond)} views/s  ${k(row.postingsPerSecond)} postings/s  (${row.ingestSeconds.toFixed(1)} s, ${BATCH}-record transactions)`,
  );
  console.log(
    `  size       ${(row.bytesPer1kViews / 1024).toFixed(0)} KiB per 1k views (lexical tables ${
      row.lexicalBytesPer1kViews === null ? 'n/a' : `${(row.lexicalBytesPer1kViews / 1024).toFixed(0)} KiB`
    })`,
  );
  console.log('  search (ms)                 first    p50     p95     p99');
  console.log(
    `  sqlite persistent index   ${ms(row.firstSearchMs).padStart(7)} ${ms(row.warm.p50).padStart(6)} ${ms(row.warm.p95).padStart(7)} ${ms(row.warm.p99).padStart(7)}`,
  );
  if (row.old) {
    console.log(
      `  old in-memory Bm25Index   ${ms(row.old.firstSearchMs).padStart(7)} ${ms(row.old.warm.p50).padStart(6)} ${ms(row.old.warm.p95).padStart(7)} ${ms(row.old.warm.p99).padStart(7)}   (first = SELECT views + build + search; ${row.old.mismatches} result mismatches)`,
    );
  }
}
