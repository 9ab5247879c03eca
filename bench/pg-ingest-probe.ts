/**
 * Bulk ingest into PostgreSQL with what it costs (load-robust figures beside the rate):
 *
 *   npx tsx bench/pg-ingest-probe.ts <admin-url> <contexts> <per-context> [postmaster-pid]
 *
 * Ingests C contexts x M memories of generated chat (the one ingest path: views, keys, relations) into a fresh
 * database `gmx_ingest_probe`, and prints mem/s, Node CPU per memory, the server's CPU per memory (the
 * postmaster `postmaster-pid` and its children, when given: `head -1 DATA/postmaster.pid`) and statements
 * per memory (a wrapper of pg.Client.query). With PROBE_TOP=n and pg_stat_statements loaded in the server,
 * the n statements with the most server time.
 */
import pg from 'pg';
import { ingestItems } from '../src/digest/ingest.ts';
import { openGraphmemix } from '../src/graphmemix.ts';
import type { ImportItem } from '../src/importers/importer-spec.ts';
import { postgresCpuSeconds } from './support/process-cpu.ts';
import { chatArchive } from './support/realistic-chat.ts';

const [admin, cText, mText, pidText] = process.argv.slice(2);
if (!admin || !cText || !mText)
  throw new Error('usage: pg-ingest-probe.ts <admin-url> <contexts> <per-context> [pid]');
const contexts = Number(cText);
const perContext = Number(mText);
const postmaster = pidText === undefined ? undefined : Number(pidText);
const db = 'gmx_ingest_probe';
const adminClient = new pg.Client({ connectionString: admin });
await adminClient.connect();
await adminClient.query(`DROP DATABASE IF EXISTS ${db}`);
await adminClient.query(`CREATE DATABASE ${db}`);
const url = new URL(admin);
url.pathname = `/${db}`;
let statements = 0;
const original = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  statements++;
  return (original as (...a: unknown[]) => unknown).apply(this, args);
} as typeof original;
const gm = await openGraphmemix({ db: url.toString() });
const top = Number(process.env.PROBE_TOP ?? 0);
if (top > 0) await adminClient.query('SELECT pg_stat_statements_reset()');
const cpu0 = process.cpuUsage();
const server0 = postmaster === undefined ? undefined : postgresCpuSeconds(postmaster);
const statements0 = statements;
const started = performance.now();
for (let c = 0; c < contexts; c++) {
  await ingestItems(
    gm.store,
    chatArchive({ contextId: `u${c}`, count: perContext, seed: c + 1 }) as Iterable<ImportItem>,
  );
}
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpu0);
const server1 = postmaster === undefined ? undefined : postgresCpuSeconds(postmaster);
const n = contexts * perContext;
const serverMs =
  server0 === undefined || server1 === undefined ? '-' : (((server1 - server0) * 1000) / n).toFixed(2);
console.log(
  `ingest ${n} in ${seconds.toFixed(1)} s = ${Math.round(n / seconds)} mem/s; per memory: node cpu ${((cpu.user + cpu.system) / 1000 / n).toFixed(2)} ms, server cpu ${serverMs} ms, statements ${((statements - statements0) / n).toFixed(2)}`,
);
await gm.close();
if (top > 0) {
  const rows = await adminClient.query(
    `SELECT calls, round(total_exec_time::numeric, 0) AS exec_ms, round(total_plan_time::numeric, 0) AS plan_ms,
       rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 150) AS q
     FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)
     ORDER BY total_exec_time + total_plan_time DESC LIMIT $2`,
    [db, top],
  );
  for (const row of rows.rows) console.log(row.calls, row.exec_ms, row.plan_ms, row.rows, row.q);
}
await adminClient.end();
