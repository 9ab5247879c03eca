/**
 * `npx tsx bench/import-share-probe.ts [--records 20k] [--writer-every 50] [--worker] [--code dir] [--pg URL]
 * [--writers 1]`: how long
 * another user's writes wait while one user's import runs in the same process. Writes a JSONL of realistic chat
 * records (bench/support/realistic-chat.ts, seeded) and imports it into user `ann` of a fresh archive
 * (`gm.ingest(file, { format: 'unified', contextId: 'ann' })`: batches of 500, then the relation update;
 * a bulk import from 1,000 records) while the same handle adds one memory to user `bob` every `--writer-every`
 * ms. `--worker` opens the archive with the write worker (a server's path). Prints the import's wall time, the
 * process's peak RSS (all threads) and bob's add latencies during it (count, p50, p99, longest). `--code dir` runs another checkout's library.
 * `--pg URL` puts the archive in a fresh database of that PostgreSQL server (dropped after) instead of a SQLite
 * file; `--writers n` runs n other users (bob, bob2, ...) adding side by side, each every `--writer-every` ms.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { parseCount, probeFlags, rankPercentile } from './support/probe-args.ts';
import { writeChatJsonl } from './support/realistic-chat.ts';

const flag = probeFlags();
const count = parseCount(flag('records', '20k'));
const every = Number(flag('writer-every', '50'));
const worker = process.argv.includes('--worker');
const code = resolve(flag('code', join(import.meta.dirname, '..')));
const pgUrl = flag('pg', '');
const writers = Number(flag('writers', '1'));

const { openGraphmemix } = (await import(
  pathToFileURL(join(code, 'src/graphmemix.ts')).href
)) as typeof import('../src/graphmemix.ts');

const dir = mkdtempSync(join(tmpdir(), 'gm-import-share-'));
const pct = rankPercentile;
let created: string | undefined;
try {
  const file = join(dir, 'ann.jsonl');
  writeChatJsonl(file, count, 4242);
  const db = pgUrl === '' ? join(dir, 'a.db') : await freshDatabase(pgUrl);
  const gm = await openGraphmemix({ db, writeWorker: worker, readWorkers: false });
  const users = Array.from({ length: writers }, (_, i) => (i === 0 ? 'bob' : `bob${i + 1}`));
  for (const user of users) {
    await gm.addMemories(user, [{ id: 'warm', text: 'a first memory of the other user' }]);
  }
  const started = performance.now();
  let done = false;
  const imported = gm.ingest(file, { format: 'unified', contextId: 'ann' }).finally(() => {
    done = true;
  });
  const waits: number[] = [];
  await Promise.all(
    users.map(async (user) => {
      for (let n = 0; !done; n++) {
        const at = performance.now();
        await gm.addMemories(user, [{ id: `b${n}`, text: `${user} writes note ${n} during the import` }]);
        waits.push(performance.now() - at);
        await new Promise((resolve) => setTimeout(resolve, every));
      }
    }),
  );
  const report = await imported;
  const wall = performance.now() - started;
  const f = (v: number) => v.toFixed(0);
  console.log(
    `import of ${report.imported} records into ann${worker ? ' (write worker)' : ''}: ${f(wall)} ms wall, load ${loadavg()[0]!.toFixed(2)}, peak RSS ${f(process.resourceUsage().maxRSS / 1024)} MB`,
  );
  console.log(
    `${writers === 1 ? "bob's" : `${writers} other users'`} adds during the import: ${waits.length}, p50 ${f(pct(waits, 0.5))} ms, p99 ${f(pct(waits, 0.99))} ms, longest ${f(Math.max(0, ...waits))} ms`,
  );
  await gm.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
  if (created !== undefined) await admin(pgUrl, `DROP DATABASE IF EXISTS ${created}`);
}
process.exit(0);

/** A fresh database on the server of `url` (its name kept in `created`, dropped at the end). */
async function freshDatabase(url: string): Promise<string> {
  created = `gm_share_${process.pid}_${Date.now()}`;
  await admin(url, `CREATE DATABASE ${created}`);
  const target = new URL(url);
  target.pathname = `/${created}`;
  return target.toString();
}

async function admin(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
