/**
 * `npx tsx bench/bulk-memory-probe.ts [--size 60k] [--every 1] [--base records.db]`
 *
 * Where a bulk import's memory goes: bench:scale's text (bench/support/realistic-chat.ts, seed 11) written into
 * a fresh SQLite file without relations, then the relation update of the whole journal (updateRelations: the
 * bulk rebuild), with process.memoryUsage sampled every `--every` seconds. Prints the peak RSS / heap / array
 * buffers of each phase (write, rebuild) and the rebuild's seconds per step, so a step's memory can be told
 * from the timeline (`--every` seconds, stderr). The machine's 1-minute load average is printed with it.
 * Run as `node --expose-gc --import tsx bench/bulk-memory-probe.ts ...` to also get the heap after a full GC
 * at the end (what the store keeps vs the garbage the import left). `--base FILE` keeps the records-only
 * archive in FILE (written on first use, copied on later runs) so runs compare the rebuild alone; `--live`
 * prints each sample at once (the peak is in the rebuild's first minute: the run can be stopped after it).
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ingestItems } from '../src/digest/ingest.ts';
import { updateRelations } from '../src/digest/update-relations.ts';
import type { ImportItem } from '../src/importers/importer-spec.ts';
import { openStore } from '../src/store/open-store.ts';
import { parseCount } from './support/probe-args.ts';
import { chatArchive } from './support/realistic-chat.ts';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const sizeText = flag('--size') ?? '60k';
const size = parseCount(sizeText);
const every = Number(flag('--every') ?? 1) * 1000;
const base = flag('--base');

const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);
// The rebuild is synchronous SQLite and typed-array work, so a timer in this thread would never run: a worker
// thread samples the process's RSS and reads the phase from shared memory.
const PHASES = ['write', 'rebuild'] as const;
const shared = new Int32Array(new SharedArrayBuffer(4));
const sampler = new Worker(
  `const { parentPort, workerData } = require('node:worker_threads');
  const phase = new Int32Array(workerData.shared);
  const started = Date.now();
  const peaks = {};
  const timeline = [];
  const timer = setInterval(() => {
    const rss = process.memoryUsage.rss();
    const p = Atomics.load(phase, 0);
    peaks[p] = Math.max(peaks[p] ?? 0, rss);
    const line = Math.round((Date.now() - started) / 1000) + 's phase ' + p + ' rss ' + Math.round(rss / 1048576);
    // --live: written at once (fs.writeSync: this worker's process.stderr would wait for the busy main thread).
    if (workerData.live) require('node:fs').writeSync(2, line + '\\n');
    else timeline.push(line);
  }, workerData.every);
  parentPort.on('message', () => { clearInterval(timer); parentPort.postMessage({ peaks, timeline }); });`,
  { eval: true, workerData: { shared: shared.buffer, every, live: args.includes('--live') } },
);
const samples = (): Promise<{ peaks: Record<number, number>; timeline: string[] }> =>
  new Promise((resolve) => {
    sampler.once('message', resolve);
    sampler.postMessage('stop');
  });

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-memprobe-'));
try {
  const file = join(dir, 'probe.db');
  if (base !== undefined && existsSync(base)) copyFileSync(base, file);
  let store = await openStore(file);
  const load = loadavg()[0]!;
  if (base === undefined || !existsSync(base)) {
    await ingestItems(
      store,
      chatArchive({ contextId: 'big', count: size, seed: 11 }) as Iterable<ImportItem>,
      {
        relations: false,
      },
    );
    if (base !== undefined) {
      // Closing the last connection checkpoints the WAL into the file.
      await store.close();
      copyFileSync(file, base);
      store = await openStore(file);
    }
  }
  Atomics.store(shared, 0, 1);
  const rebuildStarted = performance.now();
  const rebuildCpu = process.cpuUsage();
  const report = await updateRelations(store, 'big', {
    // The CPU of the rebuild up to its schema write (records loaded, schema rules, edges written), at once.
    afterStep: () => {
      const spent = process.cpuUsage(rebuildCpu);
      writeSync(2, `schema write done: CPU ${((spent.user + spent.system) / 1e6).toFixed(1)} s\n`);
    },
  });
  // What the store keeps after an import (caches, statements) vs the garbage the import left.
  const gc = (globalThis as { gc?: () => void }).gc;
  const before = process.memoryUsage();
  gc?.();
  const after = process.memoryUsage();
  process.stdout.write(
    `after the rebuild: heap used ${mib(before.heapUsed)} of ${mib(before.heapTotal)} MiB, RSS ${mib(before.rss)}` +
      (gc
        ? `; after a full GC: heap used ${mib(after.heapUsed)} of ${mib(after.heapTotal)}, RSS ${mib(after.rss)}`
        : '') +
      ' (node --expose-gc for the second part)\n',
  );
  await store.close();
  const { peaks, timeline } = await samples();
  await sampler.terminate();
  for (const line of timeline) process.stderr.write(`${line}\n`);
  process.stdout.write(
    `${size} memories (load ${load.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)}): rebuild ${report.mode} ` +
      `${((performance.now() - rebuildStarted) / 1000).toFixed(1)} s; steps ${JSON.stringify(
        Object.fromEntries(Object.entries(report.seconds).map(([k, v]) => [k, Math.round(v * 10) / 10])),
      )}\n`,
  );
  for (const [code, rss] of Object.entries(peaks)) {
    process.stdout.write(`  ${PHASES[Number(code)]}: peak RSS ${mib(rss)} MiB\n`);
  }
  process.stdout.write(`  process max RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
