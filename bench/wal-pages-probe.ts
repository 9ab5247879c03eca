/**
 * Which b-trees an add writes: the WAL frames of one measured add, mapped to tables and indexes by `dbstat`.
 *
 *   npx tsx bench/wal-pages-probe.ts <file.db> [--batch 100] [--warm 1] [--context big] [--seed 4242]
 *
 * `--warm N` untimed adds of `--batch` records go first (the first lets V8 and the page cache settle; more of
 * them show what a long-running writer pays once its inserts have split the packed leaves that compaction's
 * CREATE INDEX leaves: docs/living-archive.md "Round 35"). Then a read transaction on a second connection pins
 * the WAL (no checkpoint can restart it), one more add runs, and the frames it appended are counted: frames,
 * distinct pages, and pages per b-tree. The dbstat pass reads the whole file (~1 minute at 1M).
 *
 * <file.db>: a context of bench:scale text (retrieve-probe.ts / knn-add-probe.ts build 'big'); it is WRITTEN
 * TO: pass a copy.
 */
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { openGraphmemix } from '../src/graphmemix.ts';
import { parseCount, positionalArgs, probeFlags } from './support/probe-args.ts';
import { chatRecords } from './support/realistic-chat.ts';

const [file] = positionalArgs();
if (!file) throw new Error('usage: <file.db> [--batch 100] [--warm 1] [--context big] [--seed 4242]');
const flag = probeFlags();
const batch = parseCount(flag('batch', '100'));
const warm = parseCount(flag('warm', '1'));
const contextId = flag('context', 'big');
const seed = Number(flag('seed', '4242'));

const gm = await openGraphmemix({ db: file });
let next = await gm.store.countMemories(contextId);
const add = async (at: number) => {
  await gm.addMemories(contextId, [
    ...chatRecords({ contextId, count: batch, seed: seed + at, start: next }),
  ]);
  next += batch;
};
for (let at = 0; at < warm; at++) await add(at);

const reader = new Database(file, { readonly: true });
const pageSize = reader.pragma('page_size', { simple: true }) as number;
/** The page numbers of the WAL's current frames: those after its header whose salts are the header's. */
const walPages = (): number[] => {
  const wal = readFileSync(`${file}-wal`);
  const salts = wal.subarray(16, 24);
  const pages: number[] = [];
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (!wal.subarray(at + 8, at + 16).equals(salts)) break;
    pages.push(wal.readUInt32BE(at));
  }
  return pages;
};
// A read transaction that has read a page holds its snapshot: frames after it cannot be copied, so the WAL
// is not restarted under the count (a restart would overwrite frames from the start).
reader.exec('BEGIN');
reader.prepare('SELECT count(*) FROM sqlite_schema').get();
const before = walPages().length;
const started = performance.now();
await add(warm);
const wall = performance.now() - started;
const written = walPages().slice(before);
reader.exec('COMMIT');
const distinct = new Set(written);
console.log(
  `add of ${batch} into ${next - batch} memories after ${warm} warm-up adds: wall ${wall.toFixed(0)} ms, ` +
    `${written.length} frames (${((written.length * (24 + pageSize)) / 2 ** 20).toFixed(1)} MiB), ` +
    `${distinct.size} distinct pages`,
);
await gm.close();

const byTree = new Map<string, number>();
for (const row of reader.prepare('SELECT name, pageno FROM dbstat').iterate() as Iterable<{
  name: string;
  pageno: number;
}>) {
  if (distinct.has(row.pageno)) byTree.set(row.name, (byTree.get(row.name) ?? 0) + 1);
}
reader.close();
for (const [name, pages] of [...byTree].sort((a, b) => b[1] - a[1]))
  console.log(`${String(pages).padStart(7)}  ${name}`);
