/**
 * `npx tsx bench/forget-probe.ts <file.db> [context] [--code dir] [--writer-every ms]` (context default 'big',
 * as bench/retrieve-probe.ts): copies the archive to a temporary file and forgets one user there
 * (`deleteUser`) while this process adds one memory to another user every `--writer-every` ms (default 50)
 * through the same library handle, as a server's write worker does for other clients. Prints the forget's
 * wall and CPU time, its store steps (each one transaction holding the file's write lock: count, p50 and
 * longest), and the other user's add latencies during the forget (p50, p99, longest): how long another writer
 * waits. FORGET_PROBE_TRACE=1 prints each step's and each add's time to stderr. `--code dir` runs another
 * checkout's library (e.g. a worktree of an older commit; its store may forget in one step). The source file
 * is not changed.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { positionalArgs, probeFlags, rankPercentile } from './support/probe-args.ts';

const [source, contextId = 'big'] = positionalArgs();
if (!source || !existsSync(source))
  throw new Error('usage: <file.db> [context] [--code dir] [--writer-every ms]');
const flag = probeFlags();
const code = resolve(flag('code', join(import.meta.dirname, '..')));
const every = Number(flag('writer-every', '50'));
const { openGraphmemix } = (await import(
  pathToFileURL(join(code, 'src/graphmemix.ts')).href
)) as typeof import('../src/graphmemix.ts');
const { createSqliteStore } = (await import(
  pathToFileURL(join(code, 'src/store/sqlite-store.ts')).href
)) as typeof import('../src/store/sqlite-store.ts');

const dir = mkdtempSync(join(tmpdir(), 'gm-forget-'));
const file = join(dir, 'copy.db');
copyFileSync(source, file);
const pct = rankPercentile;
try {
  const store = createSqliteStore(file);
  // Each step's time inside the store (the write lock is held for about that long).
  const steps: number[] = [];
  const deleteContext = store.deleteContext.bind(store);
  store.deleteContext = (id, options = {}) => {
    const schedule = options.schedule ?? (<T>(step: () => Promise<T>) => step());
    return deleteContext(id, {
      ...options,
      schedule: (step) =>
        schedule(async () => {
          const started = performance.now();
          try {
            return await step();
          } finally {
            steps.push(performance.now() - started);
            if (process.env.FORGET_PROBE_TRACE)
              console.error(`step ${steps.length} ${(performance.now() - started).toFixed(0)} ms`);
          }
        }),
    });
  };
  const gm = await openGraphmemix({ db: file, store, readWorkers: false });
  const memories = (await gm.userStats(contextId))?.memories ?? 0;
  await gm.addMemories('forget-probe-other', [{ id: 'warm', text: 'a first memory of the other user' }]);
  const started = performance.now();
  const cpu = process.cpuUsage();
  let done = false;
  const forgetting = gm.deleteUser(contextId).finally(() => {
    done = true;
  });
  const waits: number[] = [];
  for (let n = 0; !done; n++) {
    const at = performance.now();
    await gm.addMemories('forget-probe-other', [{ id: `m${n}`, text: `the other user writes note ${n}` }]);
    // Every add started before the forget ended counts (one waiting through a one-transaction forget too).
    waits.push(performance.now() - at);
    if (process.env.FORGET_PROBE_TRACE)
      console.error(`add ${n} ${(performance.now() - at).toFixed(0)} ms after step ${steps.length}`);
    await new Promise((resolve) => setTimeout(resolve, every));
  }
  const report = await forgetting;
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const f = (v: number) => v.toFixed(0);
  console.log(
    `forget ${contextId} (${memories} memories): ${f(wall)} ms wall, ${f((used.user + used.system) / 1000)} ms CPU ` +
      `(with the other user's adds), deleted ${report.deleted}, load ${loadavg()[0]!.toFixed(2)}`,
  );
  console.log(
    `store steps: ${steps.length}, p50 ${f(pct(steps, 0.5))} ms, longest ${f(Math.max(0, ...steps))} ms`,
  );
  console.log(
    `other user's adds during the forget: ${waits.length}, p50 ${f(pct(waits, 0.5))} ms, p99 ${f(pct(waits, 0.99))} ms, longest ${f(Math.max(0, ...waits))} ms`,
  );
  await gm.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
// An older checkout's handle may leave a worker thread referenced after close (seen with eb99a24 after a
// one-transaction forget of 100k memories): the figures are printed, so end here.
process.exit(0);
