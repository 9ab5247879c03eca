/**
 * Ingest throughput of the write path alone (records, views, relation keys, lexical postings; no relations):
 *
 *   npx tsx bench/write-path-bench.ts [n = 20000]
 *
 * One context of n realistic chat memories (bench:scale's text, seed 11) into a fresh SQLite file under the
 * OS temp folder (removed afterwards). Prints wall and CPU (user + system of this process) with mem/s of each;
 * CPU is the steadier figure on a shared machine. docs/living-archive.md "Known limits" has the breakdown.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingestItems } from '../src/digest/ingest.ts';
import { openGraphmemix } from '../src/graphmemix.ts';
import type { ImportItem } from '../src/importers/importer-spec.ts';
import { chatArchive } from './support/realistic-chat.ts';

const n = Number(process.argv[2] ?? 20000);
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-write-path-'));
try {
  // Generated before the clock: the text generator is not part of the write path.
  const items = [...(chatArchive({ contextId: 'big', count: n, seed: 11 }) as Iterable<ImportItem>)];
  const gm = await openGraphmemix({ db: join(dir, 'archive.db') });
  const started = performance.now();
  const cpu = process.cpuUsage();
  await ingestItems(gm.store, items, { relations: false });
  const used = process.cpuUsage(cpu);
  const wall = (performance.now() - started) / 1000;
  const cpuSeconds = (used.user + used.system) / 1e6;
  console.log(
    `write path, ${n} memories: wall ${wall.toFixed(2)} s (${Math.round(n / wall)} mem/s), cpu ${cpuSeconds.toFixed(2)} s (${Math.round(n / cpuSeconds)} mem/s), load ${loadavg()[0]!.toFixed(1)}`,
  );
  await gm.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
