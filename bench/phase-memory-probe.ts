/**
 * `node --expose-gc --import tsx bench/phase-memory-probe.ts <archive.db> [--queries 200] [--adds 50] [--adds100 10]`
 *
 * Where the memory of bench:scale's later phases goes, on an archive built once (e.g. by
 * `npx tsx bench/knn-add-probe.ts build <archive.db> 300000`): a copy (<archive.db>.work, overwritten) is
 * opened, then the retrieve phase (10 warm-up + `--queries` questions), the add-1 phase and the add-100 phase
 * of bench:scale run in this one process. Prints per phase the peak RSS (a worker thread samples every
 * 0.2 s: the phases are synchronous SQLite work) and, at its end, process.memoryUsage() before and after a
 * full GC (retained heap vs garbage). The 1-minute load average is printed with it.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { openGraphmemix } from '../src/graphmemix.ts';
import { chatQuestions, chatRecords } from './support/realistic-chat.ts';
import { rssSampler } from './support/rss-sampler.ts';

const args = process.argv.slice(2);
const db = args[0];
if (db === undefined || !existsSync(db)) throw new Error('usage: phase-memory-probe.ts <archive.db> [...]');
const flag = (name: string, fallback: number): number => {
  const at = args.indexOf(name);
  return at < 0 ? fallback : Number(args[at + 1]);
};
const queries = flag('--queries', 200);
const adds = flag('--adds', 50);
const adds100 = flag('--adds100', 10);

const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);
const PHASES = ['open', 'retrieve', 'add-1', 'add-100', 'close'] as const;
const sampler = rssSampler(PHASES, 200);
const gc = (globalThis as { gc?: () => void }).gc;
const usage = (label: string): void => {
  const before = process.memoryUsage();
  gc?.();
  const after = process.memoryUsage();
  const line = (u: NodeJS.MemoryUsage) =>
    `rss ${mib(u.rss)} heap ${mib(u.heapUsed)}/${mib(u.heapTotal)} external ${mib(u.external)} buffers ${mib(u.arrayBuffers)}`;
  process.stdout.write(`${label}: ${line(before)}${gc ? ` | after gc: ${line(after)}` : ''}\n`);
};

const copy = `${db}.work`;
for (const suffix of ['', '-wal']) {
  rmSync(copy + suffix, { force: true });
  if (existsSync(db + suffix)) copyFileSync(db + suffix, copy + suffix);
}
const load = loadavg()[0]!;
const gm = await openGraphmemix({ db: copy });
const size = await gm.store.countMemories('big');
usage('open');
sampler.phase(1);
const archive = { contextId: 'big', count: size, seed: 11 };
const cpu = process.cpuUsage();
for (const question of chatQuestions(queries + 10, 5, archive)) await gm.retrieve('big', question);
usage('retrieve');
sampler.phase(2);
let next = size;
for (let i = 0; i < adds; i++) {
  const [record] = [...chatRecords({ contextId: 'big', count: 1, seed: 900 + i, start: next++ })];
  await gm.addMemories('big', [record!]);
}
usage('add-1');
sampler.phase(3);
for (let i = 0; i < adds100; i++) {
  const records = [...chatRecords({ contextId: 'big', count: 100, seed: 1900 + i, start: next })];
  next += 100;
  await gm.addMemories('big', records);
}
usage('add-100');
// The added memories' edges, hashed: two versions of the code must print the same digest (same archive).
const added = Array.from({ length: next - size }, (_, i) => `m${size + i}`);
const edges = await gm.store.neighbors('big', added);
const digest = createHash('sha256').update(JSON.stringify(edges)).digest('hex').slice(0, 16);
sampler.phase(4);
await gm.close();
usage('close');
const spent = process.cpuUsage(cpu);
const peaks = await sampler.stop();
process.stdout.write(
  `edges of the added memories: ${edges.length}, digest ${digest}\n` +
    `${size} memories, load ${load.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)}, CPU ${((spent.user + spent.system) / 1e6).toFixed(1)} s\n`,
);
for (const [phase, rss] of Object.entries(peaks)) process.stdout.write(`  ${phase}: peak RSS ${rss} MiB\n`);
process.stdout.write(`  process max RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB\n`);
