/**
 * Add cost of two checkouts under the same load: one process adds the same records to two copies of an
 * archive, alternating the checkouts add by add, so a busy shared machine slows both alike.
 *
 *   npx tsx bench/add-interleave-probe.ts <file.db> <adds> <batches> <checkoutA> <checkoutB>
 *
 * <file.db>: one context 'big' (`knn-add-probe.ts build`); each checkout (a worktree path, e.g. main and a
 * branch) opens its own copy (<file.db>.<n>.ab, removed afterwards) through its own modules. Prints per
 * checkout: add-1 CPU mean / p50 and wall p50 / p99, then each add-100's CPU and wall (CPU = this process's
 * user + system per call). `--digest` then hashes each copy's resulting state (every row of `edges`,
 * `edge_counts`, `semantic_snapshots`, `semantic_docs` and the lists of `semantic_neighbours` in list order,
 * not by slot): an optimisation must print the same digest for both checkouts. `--migrate` first runs each
 * checkout's `graphmemix migrate` (migrateArchive) on its copy, untimed: what an upgraded archive holds
 * before its first add (e.g. the kept top lists of SQLite migration 12).
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Graphmemix } from '../src/graphmemix-api.ts';
import type { MemoryRecord } from '../src/types/memory-record.ts';

interface Side {
  checkout: string;
  gm: Graphmemix;
  copy: string;
  cpu1: number[];
  wall1: number[];
  cpu100: number[];
  wall100: number[];
}

const args = process.argv.slice(2);
const digest = args.includes('--digest');
const migrateFirst = args.includes('--migrate');
const [db, addsText, batchesText, ...checkouts] = args.filter(
  (arg) => arg !== '--digest' && arg !== '--migrate',
);
if (!db || checkouts.length < 1)
  throw new Error('usage: <file.db> <adds> <batches> <checkoutA> [<checkoutB>]');
const adds = Number(addsText);
const batchCount = Number(batchesText);
const { chatRecords } = (await import(`${checkouts[0]}/bench/support/realistic-chat.ts`)) as {
  chatRecords(options: {
    contextId: string;
    count: number;
    seed: number;
    start: number;
  }): Iterable<MemoryRecord>;
};
const sides: Side[] = [];
for (const [at, checkout] of checkouts.entries()) {
  const copy = `${db}.${at}.ab`;
  // A stale -shm of an earlier copy (a killed run) would not match the new WAL.
  rmSync(`${copy}-shm`, { force: true });
  for (const suffix of ['', '-wal']) {
    if (existsSync(db + suffix)) copyFileSync(db + suffix, copy + suffix);
    else rmSync(copy + suffix, { force: true });
  }
  if (migrateFirst) {
    const { migrateArchive } = (await import(`${checkout}/src/store/migrate-archive.ts`)) as {
      migrateArchive(db: string): Promise<unknown>;
    };
    const t = performance.now();
    await migrateArchive(copy);
    console.log(`${checkout}: migrate ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  const { openGraphmemix } = (await import(`${checkout}/src/graphmemix.ts`)) as {
    openGraphmemix(options: { db: string }): Promise<Graphmemix>;
  };
  const gm = await openGraphmemix({ db: copy });
  sides.push({ checkout, gm, copy, cpu1: [], wall1: [], cpu100: [], wall100: [] });
}
const size = await sides[0]!.gm.store.countMemories('big');
// Generated before the clock (the generator builds a vocabulary per call).
const singles = Array.from(
  { length: adds },
  (_, i) => [...chatRecords({ contextId: 'big', count: 1, seed: 900 + i, start: size + i })][0]!,
);
const batches = Array.from({ length: batchCount }, (_, r) => [
  ...chatRecords({ contextId: 'big', count: 100, seed: 1900 + r, start: size + adds + 100 * r }),
]);
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
const loadBefore = load();
const timed = async (side: Side, records: MemoryRecord[], cpu: number[], wall: number[]) => {
  const started = process.cpuUsage();
  const t = performance.now();
  await side.gm.addMemories('big', records);
  wall.push(performance.now() - t);
  const used = process.cpuUsage(started);
  cpu.push((used.user + used.system) / 1000);
};
// Alternating which side goes first, so neither always follows the other's writes.
for (let i = 0; i < adds; i++) {
  for (const side of i % 2 === 0 ? sides : [...sides].reverse())
    await timed(side, [singles[i]!], side.cpu1, side.wall1);
}
for (let r = 0; r < batchCount; r++) {
  for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
    await timed(side, batches[r]!, side.cpu100, side.wall100);
  }
}
const quantile = (values: number[], p: number) =>
  [...values].sort((x, y) => x - y)[Math.min(values.length - 1, Math.floor(values.length * p))]!;
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
console.log(
  `${size} memories, ${adds} add-1 + ${batchCount} add-100 per checkout, 1-min load ${loadBefore} -> ${load()}`,
);
for (const side of sides) {
  console.log(
    side.checkout,
    `\n  add-1 CPU mean ${mean(side.cpu1).toFixed(2)} / p50 ${quantile(side.cpu1, 0.5).toFixed(2)} ms,` +
      ` wall p50 ${quantile(side.wall1, 0.5).toFixed(1)} / p99 ${quantile(side.wall1, 0.99).toFixed(1)} ms` +
      `\n  add-100 CPU ${side.cpu100.map((x) => x.toFixed(0)).join(', ')} ms, wall ${side.wall100.map((x) => x.toFixed(0)).join(', ')} ms`,
  );
  await side.gm.close();
  if (digest) console.log(`  state digest ${stateDigest(side.copy)}`);
  for (const suffix of ['', '-wal', '-shm']) rmSync(side.copy + suffix, { force: true });
}

/** sha256 of the relation state a write produces (see the header); list rows in list order, not by slot. */
function stateDigest(file: string): string {
  const reader = new Database(file, { readonly: true });
  const hash = createHash('sha256');
  for (const sql of [
    'SELECT context_id, a, b, types, strength, similarity FROM edges ORDER BY context_id, a, b',
    'SELECT context_id, type, n FROM edge_counts ORDER BY context_id, type',
    'SELECT context_id, space, documents, k, changes FROM semantic_snapshots ORDER BY context_id',
    'SELECT context_id, memory_id, threshold, vector FROM semantic_docs ORDER BY context_id, memory_id',
    `SELECT context_id, memory_id, neighbour_id, score FROM semantic_neighbours
      ORDER BY context_id, memory_id, score DESC, neighbour_id`,
  ]) {
    hash.update(sql);
    for (const row of reader.prepare(sql).raw().iterate()) hash.update(`${JSON.stringify(row)}\n`);
  }
  reader.close();
  return hash.digest('hex').slice(0, 16);
}
