/**
 * A forget a stopped process left, finished by the next server-style open (issue #10, round 23):
 *
 *   npx tsx bench/resumed-forget-probe.ts <file.db> [context] [--steps 20] [--writer-every 50]
 *
 * Copies the archive (context default 'big', as bench/retrieve-probe.ts builds it), forgets the context there
 * and stops that forget after `--steps` store steps (as a killed process leaves it), then opens the copy as
 * `serve` does (write worker, `resumeForgets`) and, while the resumed forget runs in the background, adds one
 * memory to another user every `--writer-every` ms. Prints the open's time (it must not wait for the forget),
 * the time until the user is gone, and the other user's add latencies meanwhile (p50, p99, longest).
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openGraphmemix } from '../src/graphmemix.ts';
import { createSqliteStore } from '../src/store/sqlite-store.ts';
import { parseCount, positionalArgs, probeFlags, rankPercentile } from './support/probe-args.ts';

const [source, contextId = 'big'] = positionalArgs();
if (!source || !existsSync(source))
  throw new Error('usage: <file.db> [context] [--steps 20] [--writer-every ms]');
const flag = probeFlags();
const steps = parseCount(flag('steps', '20'));
const every = Number(flag('writer-every', '50'));
const dir = mkdtempSync(join(tmpdir(), 'gm-resumed-forget-'));
const file = join(dir, 'copy.db');
try {
  copyFileSync(source, file);
  const store = createSqliteStore(file);
  const memories = await store.countMemories(contextId);
  let ran = 0;
  await store
    .deleteContext(contextId, {
      schedule: async (step) => {
        if (++ran > steps) throw new Error('stopped');
        return step();
      },
    })
    .catch((error: unknown) => {
      if (!(error instanceof Error) || error.message !== 'stopped') throw error;
    });
  const left = await store.countMemories(contextId);
  await store.close();

  const opening = performance.now();
  const gm = await openGraphmemix({ db: file, writeWorker: true, readWorkers: false, resumeForgets: true });
  const openMs = performance.now() - opening;
  const started = performance.now();
  const waits: number[] = [];
  let n = 0;
  while (await gm.store.isForgetting?.(contextId)) {
    const due = performance.now();
    await gm.addMemories('probe-other', [{ id: `o${n++}`, text: `another user writes note ${n}` }]);
    waits.push(performance.now() - due);
    await new Promise((resolve) => setTimeout(resolve, every));
  }
  const forgetSeconds = (performance.now() - started) / 1000;
  const gone = await gm.store.countMemories(contextId);
  await gm.close();
  waits.sort((x, y) => x - y);
  console.log(
    `${memories} memories, stopped after ${steps} steps (${left} memories left); open with resumeForgets ` +
      `${openMs.toFixed(0)} ms; the user gone after ${forgetSeconds.toFixed(1)} s (${gone} left); ` +
      `another user's ${waits.length} adds meanwhile p50 ${rankPercentile(waits, 0.5).toFixed(0)} / p99 ` +
      `${rankPercentile(waits, 0.99).toFixed(0)} / longest ${(waits.at(-1) ?? 0).toFixed(0)} ms; ` +
      `load ${loadavg()[0]!.toFixed(2)}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
