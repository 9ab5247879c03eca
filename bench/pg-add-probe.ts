/**
 * Add-1 into a large context on PostgreSQL, with what it costs (load-robust figures beside the wall time):
 *
 *   npx tsx bench/pg-add-probe.ts build <admin-url> <n>   database gmx_probe_<n>: one context 'big' of n memories
 *   npx tsx bench/pg-add-probe.ts adds <admin-url> <n> [adds] [--warmup W] [--digest FILE] [--semantic-updates M]
 *                                                        adds on a fresh copy (CREATE DATABASE ... TEMPLATE),
 *                                                        after W uncounted ones (default 5);
 *                                                        --digest writes the context's semantic lists and
 *                                                        edges after the adds (compare two checkouts' files)
 *
 * Prints add-1 wall p50/p90/p99/max (and the 1-minute load average), Node CPU ms per add, the server's CPU ms per add (the postmaster's children,
 * when the server runs on this machine), statements and transactions per add (a wrapper of pg.Client.query),
 * and the mean IngestReport.stepSeconds. PROBE_PGSS=1 resets pg_stat_statements once the store is open (a
 * cluster with it loaded): its figures are then the warm-up and measured adds'. PROBE_TRACE=1 prints the last
 * add's statements. PROBE_SERIES=1 prints the medians of each fifth of the measured adds in order (the first
 * adds of a fresh process run less optimised code: V8 is still compiling the path).
 * `--semantic-updates after-write` (the default, as the library's; `in-write` for the other mode): each add's wall
 * is then the write without its kNN update, which is waited out after it, untimed (`drain`: waitForCompactions),
 * so the next add does not queue behind it; the CPU, statement and transaction figures per add include it.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import pg from 'pg';
import { ingestItems } from '../src/digest/ingest.ts';
import { openGraphmemix } from '../src/graphmemix.ts';
import type { ImportItem } from '../src/importers/importer-spec.ts';
import { countPgStatements } from './support/pg-statement-counter.ts';
import { mainThreadCpuSeconds, processCpuSeconds } from './support/process-cpu.ts';
import { chatArchive, chatRecords } from './support/realistic-chat.ts';

const argv = process.argv.slice(2);
const digestAt = argv.indexOf('--digest');
const digestFile = digestAt >= 0 ? argv.splice(digestAt, 2)[1] : undefined;
const modeAt = argv.indexOf('--semantic-updates');
const semanticUpdates = modeAt >= 0 ? argv.splice(modeAt, 2)[1] : 'after-write';
if (semanticUpdates !== 'in-write' && semanticUpdates !== 'after-write')
  throw new Error('--semantic-updates: in-write or after-write');
const warmupAt = argv.indexOf('--warmup');
// Warm-up adds (connections, prepared statements, caches, V8's optimised code) are not counted: 5 by
// default (the figures of earlier rounds); a server's steady state needs ~100-200 (PROBE_SERIES shows where
// the p50 of each fifth flattens).
const warm = warmupAt >= 0 ? Number(argv.splice(warmupAt, 2)[1]) : 5;
if (!Number.isInteger(warm) || warm < 0) throw new Error('--warmup takes a count of adds');
const [mode, admin, nText, addsText] = argv;
if (!mode || !admin || !nText) throw new Error('usage: pg-add-probe.ts build|adds <admin-url> <n> [adds]');
const n = Number(nText);
const adds = Number(addsText ?? 60);
const dbUrl = (name: string) => {
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return u.toString();
};
const template = `gmx_probe_${n}`;

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

if (mode === 'build') {
  await adminQuery(`DROP DATABASE IF EXISTS ${template}`);
  await adminQuery(`CREATE DATABASE ${template}`);
  const gm = await openGraphmemix({ db: dbUrl(template) });
  const t = performance.now();
  await ingestItems(gm.store, chatArchive({ contextId: 'big', count: n, seed: 11 }) as Iterable<ImportItem>);
  const s = (performance.now() - t) / 1000;
  console.log('ingest', s.toFixed(1), 's', Math.round(n / s), 'mem/s');
  await gm.close();
  const c = new pg.Client({ connectionString: dbUrl(template) });
  await c.connect();
  await c.query('VACUUM ANALYZE');
  await c.end();
} else {
  const work = `gmx_probe_work`;
  await adminQuery(`DROP DATABASE IF EXISTS ${work}`);
  await adminQuery(`CREATE DATABASE ${work} TEMPLATE ${template}`);
  const counter = countPgStatements(150);
  const gm = await openGraphmemix({ db: dbUrl(work), semanticUpdates });
  if (process.env.PROBE_PGSS) await adminQuery('SELECT pg_stat_statements_reset()');
  const probe = new pg.Client({ connectionString: dbUrl(work) });
  await probe.connect();
  // The server's CPU for this database only (its backends: the store's pool), not the whole cluster's.
  const backendCpu = async (): Promise<Map<number, number>> => {
    const { rows } = await probe.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    return new Map(rows.map((row) => [row.pid, processCpuSeconds(row.pid) ?? 0]));
  };
  const size = await gm.store.countMemories('big');
  const phases: Record<string, number> = {};
  const times: number[] = [];
  const drains: number[] = [];
  // Records are generated before timing (the generator's vocabulary costs ~3 ms of CPU per call).
  const records = Array.from(
    { length: warm + adds },
    (_, i) => [...chatRecords({ contextId: 'big', count: 1, seed: 900 + i, start: size + i })][0]!,
  );
  let cpu0 = process.cpuUsage();
  let main0 = mainThreadCpuSeconds() ?? 0;
  let pg0 = new Map<number, number>();
  let s0 = counter.statements;
  let b0 = counter.begins;
  let r0 = counter.rows;
  for (let i = 0; i < warm + adds; i++) {
    if (i === warm) {
      cpu0 = process.cpuUsage();
      main0 = mainThreadCpuSeconds() ?? 0;
      pg0 = await backendCpu();
      s0 = counter.statements;
      b0 = counter.begins;
      r0 = counter.rows;
    }
    const record = records[i];
    const t = performance.now();
    if (process.env.PROBE_TRACE && i === warm + adds - 1) {
      counter.trace = [];
      counter.traceFrom = t;
      counter.traceCpu = process.cpuUsage();
    }
    const rep = await gm.addMemories('big', [record!]);
    if (counter.trace) {
      const used = process.cpuUsage(counter.traceCpu);
      console.log(
        `${counter.trace.join('\n')}\nend ${(performance.now() - t).toFixed(2)} ms, cpu ${((used.user + used.system) / 1000).toFixed(2)}`,
      );
    }
    const wall = performance.now() - t;
    const drainStarted = performance.now();
    if (semanticUpdates === 'after-write') await gm.waitForCompactions();
    if (i >= warm) {
      times.push(wall);
      drains.push(performance.now() - drainStarted);
      for (const [k, v] of Object.entries(rep.stepSeconds)) phases[k] = (phases[k] ?? 0) + (v * 1000) / adds;
    }
  }
  const cpu = process.cpuUsage(cpu0);
  const mainCpu = (mainThreadCpuSeconds() ?? 0) - main0;
  let pgCpu = 0;
  for (const [pid, seconds] of await backendCpu()) pgCpu += seconds - (pg0.get(pid) ?? 0);
  if (process.env.PROBE_SERIES) {
    const fifth = Math.ceil(adds / 5);
    const medians = [0, 1, 2, 3, 4].map((part) => {
      const slice = times.slice(part * fifth, (part + 1) * fifth).sort((a, b) => a - b);
      return slice.length > 0 ? slice[Math.floor(slice.length / 2)]!.toFixed(1) : '-';
    });
    console.log(`p50 by fifth of the adds, in order: ${medians.join(' / ')} ms`);
  }
  const s = [...times].sort((a, b) => a - b);
  console.log(
    `add1 into ${size} after ${warm} warm-up adds: n ${adds} p50 ${s[Math.floor(adds / 2)]!.toFixed(1)} p90 ${s[Math.floor(adds * 0.9)]!.toFixed(1)} p99 ${s[Math.floor(adds * 0.99)]!.toFixed(1)} max ${s.at(-1)!.toFixed(1)} ms, load ${loadavg()[0]!.toFixed(2)}`,
  );
  if (semanticUpdates === 'after-write') {
    const d = [...drains].sort((a, b) => a - b);
    console.log(
      `after-write: kNN update in p50 ${d[Math.floor(adds / 2)]!.toFixed(1)} / p99 ${d[Math.floor(adds * 0.99)]!.toFixed(1)} ms after the add returned`,
    );
  }
  console.log(
    `per add: node cpu ${((cpu.user + cpu.system) / 1000 / adds).toFixed(1)} ms (main thread ${((mainCpu * 1000) / adds).toFixed(1)}), postgres cpu ${((pgCpu * 1000) / adds).toFixed(1)} ms, statements ${((counter.statements - s0) / adds).toFixed(1)}, transactions ${((counter.begins - b0) / adds).toFixed(1)}, rows ${((counter.rows - r0) / adds).toFixed(0)}`,
  );
  console.log(
    'mean phases ms',
    JSON.stringify(Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, +v.toFixed(2)]))),
  );
  if (digestFile) {
    // Every memory's semantic list and every edge of the context, in a fixed order: equal files mean the
    // adds left the same relation state.
    const ids: string[] = [];
    for (let last: { sequence: number; id: string } | undefined; ; ) {
      const page = await gm.store.listMemories('big', {
        limit: 1000,
        ...(last ? { afterSequence: last.sequence, afterId: last.id } : {}),
      });
      ids.push(...page.map((record) => record.id));
      if (page.length < 1000) break;
      last = page.at(-1)!;
    }
    ids.sort();
    const lists = (await gm.store.semantic!.getDocs('big', ids)).map((doc) => [doc.memoryId, doc.neighbours]);
    const edges = (await gm.store.neighbors('big', ids))
      .map((e) => `${e.a} ${e.b} ${[...e.types].sort().join(',')} ${e.strength} ${e.similarity ?? ''}`)
      .sort();
    writeFileSync(digestFile, JSON.stringify({ memories: ids.length, lists, edges }));
    console.log(`digest ${digestFile}: ${ids.length} memories, ${edges.length} edges`);
  }
  await probe.end();
  await gm.close();
}
