/**
 * `node --expose-gc --import tsx bench/row-memory-probe.ts --size 100k [--db F] [--queries 200] [--adds 50] [--adds100 10]`
 *
 * Where the memory of one bench:scale single-context row goes, in ONE process as bench:scale runs it: the bulk
 * import (`ingestItems` of the seed-11 chat text), the retrieve phase, the add-1 and the add-100 phase. At each
 * phase's end it prints `process.memoryUsage()` (heap, external, array buffers), the V8 heap's committed and
 * physical sizes with its limit, the process's anonymous and file-backed RSS (/proc/self/status), and, with
 * --expose-gc, the same after a full GC (what is still referenced vs garbage and pages not given back). A worker
 * thread samples each phase's peak RSS every 0.2 s. `--gc-after-import` runs a full GC between the import and
 * the retrieve phase (the question: what is left once the import's garbage is collected). The 1-minute load
 * average is printed with it.
 */
import { readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { ingestItems } from '../src/digest/ingest.ts';
import { openGraphmemix } from '../src/graphmemix.ts';
import type { ImportItem } from '../src/importers/importer-spec.ts';
import { parseCount } from './support/probe-args.ts';
import { chatArchive, chatQuestions, chatRecords } from './support/realistic-chat.ts';
import { rssSampler } from './support/rss-sampler.ts';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const size = parseCount(flag('--size') ?? '100k');
const db = flag('--db') ?? `/tmp/row-memory-${size}.db`;
const queries = Number(flag('--queries') ?? 200);
const adds = Number(flag('--adds') ?? 50);
const adds100 = Number(flag('--adds100') ?? 10);

const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);
const status = (): string => {
  const text = readFileSync('/proc/self/status', 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(text)?.[1] ?? 0);
  return `anon ${Math.round(kb('RssAnon') / 1024)} file ${Math.round(kb('RssFile') / 1024)} shmem ${Math.round(kb('RssShmem') / 1024)}`;
};
const line = (): string => {
  const u = process.memoryUsage();
  const h = getHeapStatistics();
  return (
    `rss ${mib(u.rss)} (${status()}) heap used ${mib(u.heapUsed)} committed ${mib(h.total_heap_size)} ` +
    `physical ${mib(h.total_physical_size)} limit ${mib(h.heap_size_limit)} external ${mib(u.external)} ` +
    `buffers ${mib(u.arrayBuffers)} malloced ${mib(h.malloced_memory)}`
  );
};
const gc = (globalThis as { gc?: () => void }).gc;
const report = (label: string): void => {
  process.stdout.write(`${label}: ${line()}\n`);
  if (gc) {
    gc();
    process.stdout.write(`${label} after gc: ${line()}\n`);
  }
};

for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true });
const load = loadavg()[0]!;
const sampler = rssSampler(['import', 'retrieve', 'add-1', 'add-100'], 200);
const started = performance.now();
const gm = await openGraphmemix({ db });
const archive = { contextId: 'big', count: size, seed: 11 };
await ingestItems(gm.store, chatArchive(archive) as Iterable<ImportItem>);
const importSeconds = (performance.now() - started) / 1000;
// Without --gc-after-import the report's GC would change what the next phases start from: report without it.
if (args.includes('--gc-after-import')) report('import');
else process.stdout.write(`import: ${line()}\n`);
sampler.phase(1);
for (const question of chatQuestions(queries + 10, 5, archive)) await gm.retrieve('big', question);
process.stdout.write(`retrieve: ${line()}\n`);
sampler.phase(2);
let next = size;
for (let i = 0; i < adds; i++) {
  const [record] = [...chatRecords({ contextId: 'big', count: 1, seed: 900 + i, start: next++ })];
  await gm.addMemories('big', [record!]);
}
process.stdout.write(`add-1: ${line()}\n`);
sampler.phase(3);
for (let i = 0; i < adds100; i++) {
  const records = [...chatRecords({ contextId: 'big', count: 100, seed: 1900 + i, start: next })];
  next += 100;
  await gm.addMemories('big', records);
}
report('add-100');
await gm.close();
const peaks = await sampler.stop();
process.stdout.write(
  `${size} memories, import ${importSeconds.toFixed(1)} s (${Math.round(size / importSeconds)} mem/s), ` +
    `load ${load.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)}\n`,
);
for (const [phase, rss] of Object.entries(peaks)) process.stdout.write(`  ${phase}: peak RSS ${rss} MiB\n`);
process.stdout.write(`  process max RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB\n`);
