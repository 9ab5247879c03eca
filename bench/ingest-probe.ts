/**
 * `npx tsx bench/ingest-probe.ts --size 10k --db /tmp/x.db [--checkout /work/main] [--digest out.txt] [--shape two-person]`
 *
 * One bulk import into a fresh archive (removed first), for profiling (`node --cpu-prof --import tsx ...`)
 * and for comparing checkouts: the same one-context realistic chat as `bench:scale` (seed 11), through
 * `--checkout`'s own modules (default: this one). Prints mem/s, the process CPU of the import, the 1-minute
 * load and the ingest report's step seconds (write phase vs relation rebuild and its parts). Every record
 * gets the same `recordedAt` so that two runs store the same bytes; `--digest` then writes one sha256 per
 * table (every row, in primary-key order, read back from the file after close) and one over them all:
 * two checkouts that store the same rows and edges write the same file.
 */
import { createHash } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import Database from 'better-sqlite3';
import type { IngestReport } from '../src/digest/ingest-report.ts';
import type { Graphmemix } from '../src/graphmemix-api.ts';
import type { ImportItem } from '../src/importers/importer-spec.ts';
import type { ArchiveStore } from '../src/store/archive-store-spec.ts';
import { parseCount, probeFlags } from './support/probe-args.ts';

const args = process.argv.slice(2);
const flag = probeFlags(args);
const sizeText = flag('size', '10k');
const size = parseCount(sizeText);
const file = flag('db', `/tmp/graphmemix-ingest-${sizeText}.db`);
/** bench:scale's `--shape` (realistic-chat.ts); a checkout from before round 42 knows only the default. */
const shape = args.includes('--shape') ? flag('shape', 'rounds') : undefined;
const checkout = resolve(flag('checkout', resolve(import.meta.dirname, '..')));
const digestFile = args.includes('--digest') ? flag('digest', '') : undefined;

const { chatArchive } = (await import(`${checkout}/bench/support/realistic-chat.ts`)) as {
  chatArchive(options: {
    contextId: string;
    count: number;
    seed: number;
    shape?: string;
  }): Iterable<ImportItem>;
};
const { openGraphmemix } = (await import(`${checkout}/src/graphmemix.ts`)) as {
  openGraphmemix(options: { db: string }): Promise<Graphmemix & { store: ArchiveStore }>;
};
const { ingestItems } = (await import(`${checkout}/src/digest/ingest.ts`)) as {
  ingestItems(store: ArchiveStore, items: Iterable<ImportItem>): Promise<IngestReport>;
};

/** A fixed write time: `recordedAt` is otherwise the wall clock and no two runs would store the same row. */
function* stamped(items: Iterable<ImportItem>): Generator<ImportItem> {
  for (const item of items) {
    if (item.type === 'record')
      yield { ...item, record: { ...item.record, recordedAt: '2026-01-01T00:00:00.000Z' } };
    else yield item;
  }
}

for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
const gm = await openGraphmemix({ db: file });
/** Process CPU seconds inside the store's bulk writers (a phase split that other processes' load moves little). */
const storeCpu = new Map<string, number>();
function timeCpu(target: object, name: string, label: string): void {
  const host = target as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const original = host[name]!.bind(target);
  host[name] = async (...args: unknown[]) => {
    const before = process.cpuUsage();
    try {
      return await original(...args);
    } finally {
      const spent = process.cpuUsage(before);
      storeCpu.set(label, (storeCpu.get(label) ?? 0) + (spent.user + spent.system) / 1e6);
    }
  };
}
timeCpu(gm.store, 'writeMemories', 'writeMemories');
timeCpu(gm.store.semantic, 'replaceAll', 'semantic.replaceAll');
timeCpu(gm.store, 'replaceEdges', 'replaceEdges');
timeCpu(gm.store, 'changeEdges', 'changeEdges');
const usage = process.cpuUsage();
const started = performance.now();
const report = await ingestItems(
  gm.store,
  stamped(
    chatArchive({ contextId: 'big', count: size, seed: 11, ...(shape === undefined ? {} : { shape }) }),
  ),
);
const wall = (performance.now() - started) / 1000;
const spent = process.cpuUsage(usage);
await gm.close();
// Older checkouts have no collect-garbage module: their line says so.
const collected = await import(`${checkout}/src/digest/collect-garbage.ts`).then(
  (module: { garbageCollectionStats(): { collections: number; seconds: number } }) =>
    module.garbageCollectionStats(),
  () => undefined,
);
const cpu = (spent.user + spent.system) / 1e6;
const steps = Object.entries(report.stepSeconds)
  .map(([step, seconds]) => `${step} ${seconds.toFixed(2)}`)
  .join(', ');
process.stdout.write(
  `${checkout}: ${size} memories in ${wall.toFixed(2)} s wall (${Math.round(size / wall)} mem/s), ` +
    `CPU ${cpu.toFixed(2)} s (${Math.round(size / cpu)} mem/CPU-s), load ${loadavg()[0]!.toFixed(2)}\n` +
    `  steps (s): ${steps}\n` +
    `  store CPU (s): ${[...storeCpu].map(([label, seconds]) => `${label} ${seconds.toFixed(2)}`).join(', ')}\n` +
    `  peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB; forced collections ${
      collected === undefined
        ? 'none (no collect-garbage module)'
        : `${collected.collections} (${collected.seconds.toFixed(2)} s)`
    }\n`,
);

const WALL_CLOCK_COLUMNS = new Set(['contexts.last_write', 'semantic_snapshots.created_at']);
/** The approximate-kNN mark's `since` (meta, a snapshot's creation time): masked like the columns above. */
const WALL_CLOCK_FIELD = /"since":"[^"]*"/g;

if (digestFile !== undefined) {
  if (!existsSync(file)) throw new Error(`no archive at ${file}`);
  const db = new Database(file, { readonly: true });
  const tables = (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
      name: string;
    }[]
  ).map((row) => row.name);
  const lines: string[] = [];
  const all = createHash('sha256');
  for (const table of tables) {
    // Wall-clock columns (the last write, the snapshot time) differ between any two runs: left out.
    const columns = (db.prepare(`PRAGMA table_info("${table}")`).all() as { name: string }[])
      .filter((c) => !WALL_CLOCK_COLUMNS.has(`${table}.${c.name}`))
      .map((c) => `"${c.name}"`);
    const hash = createHash('sha256');
    let rows = 0;
    // Ordered by every column: the digest does not depend on insertion order or rowids.
    for (const row of db
      .prepare(`SELECT ${columns.join(', ')} FROM "${table}" ORDER BY ${columns.join(', ')}`)
      .raw()
      .iterate()) {
      hash.update(
        JSON.stringify(row, (_k, v) =>
          Buffer.isBuffer(v)
            ? v.toString('base64')
            : table === 'meta' && typeof v === 'string'
              ? v.replace(WALL_CLOCK_FIELD, '"since":"-"')
              : v,
        ),
      );
      hash.update('\n');
      rows++;
    }
    const digest = hash.digest('hex').slice(0, 16);
    all.update(`${table} ${rows} ${digest}\n`);
    lines.push(`${table} ${rows} ${digest}`);
  }
  // The schema too (index definitions included), without root pages (where a table happens to start).
  const schema = createHash('sha256');
  for (const row of db
    .prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name')
    .raw()
    .iterate()) {
    schema.update(`${JSON.stringify(row)}\n`);
  }
  const schemaDigest = schema.digest('hex').slice(0, 16);
  all.update(`schema ${schemaDigest}\n`);
  lines.push(`schema ${schemaDigest}`);
  // Every index holds exactly its table's rows (a rebuilt index included).
  const integrity = (db.pragma('integrity_check') as { integrity_check: string }[])
    .map((row) => row.integrity_check)
    .join('; ');
  lines.push(`integrity ${integrity}`);
  db.close();
  lines.push(`all ${all.digest('hex').slice(0, 16)}`);
  writeFileSync(digestFile, `${lines.join('\n')}\n`);
}
