/**
 * What a scoped transaction's settings cost on PostgreSQL (issue #11: "what the RLS SET LOCAL costs"):
 *   npx tsx bench/pg-begin-cost.ts <url> [n]
 * On one connection, n empty transactions of each form, alternating, one round trip each (the begin and
 * COMMIT in one simple query, as scopedOne sends them): plain BEGIN; the store's read begin (isolation,
 * work_mem, SET LOCAL ROLE graphmemix_rls, plan_cache_mode, the context's set_config); the same plus the
 * write lock. Prints wall and the backend's CPU per transaction, with the 1-minute load.
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { scopedBeginSql } from '../src/store/postgres/postgres-session.ts';
import { processCpuSeconds } from './support/process-cpu.ts';

const [url, nText] = process.argv.slice(2);
if (!url) throw new Error('usage: pg-begin-cost.ts <url> [n]');
const n = Number(nText ?? 2000);
const client = new pg.Client({ connectionString: url });
await client.connect();
const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
const forms: Record<string, string> = {
  'BEGIN; COMMIT': 'BEGIN; COMMIT',
  'scoped read begin; COMMIT': `${scopedBeginSql('big', 'read', true)} COMMIT`,
  'scoped write begin (lock); COMMIT': `${scopedBeginSql('big', 'write', true)} COMMIT`,
};
const totals = new Map<string, { wall: number; cpu: number }>();
for (let round = 0; round < 10; round++) {
  for (const [name, text] of Object.entries(forms)) {
    const cpu0 = processCpuSeconds(pid) ?? 0;
    const t0 = performance.now();
    for (let i = 0; i < n / 10; i++) await client.query(text);
    const wall = performance.now() - t0;
    const cpu = ((processCpuSeconds(pid) ?? 0) - cpu0) * 1000;
    const total = totals.get(name) ?? { wall: 0, cpu: 0 };
    totals.set(name, { wall: total.wall + wall, cpu: total.cpu + cpu });
  }
}
for (const [name, { wall, cpu }] of totals) {
  console.log(
    `${name}: ${((wall * 1000) / n).toFixed(0)} us wall, ${((cpu * 1000) / n).toFixed(0)} us backend CPU per transaction`,
  );
}
console.log(`n ${n} each, load ${loadavg()[0]!.toFixed(2)}`);
await client.end();
