/**
 * Cost of adding memories to one large context, with the semantic port's reads counted (load-robust figures):
 *
 *   npx tsx bench/knn-add-probe.ts build <file.db> <n>    one context 'big' of n realistic chat memories
 *   npx tsx bench/knn-add-probe.ts adds <file.db> <n> [--no-counters]
 *                                                        n single adds, then one add of 100, on a copy
 *
 * Prints add-1 wall p50/p90/max, mean step seconds (IngestReport.stepSeconds), CPU ms per add, and per add:
 * calls, CPU ms and rows returned of store.semantic.postings / getDocs / writeDocs / termBounds / referrers.
 * The copy (<file.db>.work) is overwritten by every run, so the same archive can be probed again.
 */
import { copyFileSync, existsSync } from 'node:fs';
import { ingestItems } from '../src/digest/ingest.ts';
import { openGraphmemix } from '../src/graphmemix.ts';
import type { ImportItem } from '../src/importers/importer-spec.ts';
import { chatArchive, chatRecords } from './support/realistic-chat.ts';

const [mode, db, nText] = process.argv.slice(2);
const n = Number(nText);
if (mode === 'build') {
  const gm = await openGraphmemix({ db: db! });
  const t = performance.now();
  const r = await ingestItems(
    gm.store,
    chatArchive({ contextId: 'big', count: n, seed: 11 }) as Iterable<ImportItem>,
  );
  console.log(
    'ingest',
    ((performance.now() - t) / 1000).toFixed(1),
    's',
    Math.round(n / ((performance.now() - t) / 1000)),
    '/s',
    JSON.stringify(r.stepSeconds),
  );
  await gm.close();
} else {
  const copy = `${db}.work`;
  for (const s of ['', '-wal']) if (existsSync(db + s)) copyFileSync(db + s, copy + s);
  const gm = await openGraphmemix({ db: copy });
  const size = await gm.store.countMemories('big');
  const counters: Record<string, number> = {};
  const sem = gm.store.semantic as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  // `--no-counters`: the port calls unwrapped (the counters' own cpuUsage calls cost ~1 ms per add).
  const counted = process.argv.includes('--no-counters')
    ? []
    : ['postings', 'getDocs', 'writeDocs', 'termBounds', 'referrers'];
  for (const name of counted) {
    const original = sem[name]!.bind(sem);
    sem[name] = async (...a: unknown[]) => {
      const t0 = process.cpuUsage();
      const out = await original(...a);
      const d = process.cpuUsage(t0);
      counters[`${name}.calls`] = (counters[`${name}.calls`] ?? 0) + 1;
      counters[`${name}.cpums`] = (counters[`${name}.cpums`] ?? 0) + (d.user + d.system) / 1000;
      if (Array.isArray(out)) counters[`${name}.rows`] = (counters[`${name}.rows`] ?? 0) + out.length;
      return out;
    };
  }
  // Generated before the clock starts: the generator builds a vocabulary per call (CPU not an add's).
  const singles = Array.from(
    { length: n },
    (_, i) => [...chatRecords({ contextId: 'big', count: 1, seed: 900 + i, start: size + i })][0]!,
  );
  const cpu0 = process.cpuUsage();
  const times: number[] = [];
  const phases: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const record = singles[i];
    const t = performance.now();
    const rep = await gm.addMemories('big', [record!]);
    times.push(performance.now() - t);
    for (const [k, v] of Object.entries(rep.stepSeconds)) phases[k] = (phases[k] ?? 0) + (v * 1000) / n;
  }
  const s = [...times].sort((a, b) => a - b);
  console.log(
    'add1 n',
    n,
    'p50',
    s[Math.floor(n / 2)]!.toFixed(1),
    'p90',
    s[Math.floor(n * 0.9)]!.toFixed(1),
    'max',
    s.at(-1)!.toFixed(1),
  );
  console.log(
    'mean phases ms',
    JSON.stringify(Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, +v.toFixed(2)]))),
  );
  const cpu = process.cpuUsage(cpu0);
  console.log('cpu ms per add', ((cpu.user + cpu.system) / 1000 / n).toFixed(1));
  console.log(
    'per add',
    JSON.stringify(Object.fromEntries(Object.entries(counters).map(([k, v]) => [k, +(v / n).toFixed(1)]))),
  );
  for (const k of Object.keys(counters)) delete counters[k];
  const recs = [...chatRecords({ contextId: 'big', count: 100, seed: 1900, start: size + n })];
  const t = performance.now();
  const cpu100 = process.cpuUsage();
  const rep = await gm.addMemories('big', recs);
  const used100 = process.cpuUsage(cpu100);
  const cpu100ms = (used100.user + used100.system) / 1000;
  console.log(
    'add100',
    (performance.now() - t).toFixed(0),
    'ms, cpu',
    cpu100ms.toFixed(0),
    'ms',
    JSON.stringify(rep.stepSeconds),
  );
  console.log(
    'add100 totals',
    JSON.stringify(Object.fromEntries(Object.entries(counters).map(([k, v]) => [k, +v.toFixed(1)]))),
  );
  await gm.close();
}
