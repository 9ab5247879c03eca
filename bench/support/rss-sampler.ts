import { Worker } from 'node:worker_threads';

/**
 * Peak RSS per phase, sampled by a worker thread every `everyMs` (this thread's timers never run during
 * synchronous SQLite work). `phase(i)` switches to `names[i]`; `stop()` gives MiB per phase name.
 */
export function rssSampler(names: readonly string[], everyMs = 500) {
  const shared = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
    const phase = new Int32Array(workerData.shared);
    const peaks = {};
    const timer = setInterval(() => {
      const p = Atomics.load(phase, 0);
      peaks[p] = Math.max(peaks[p] ?? 0, process.memoryUsage.rss());
    }, workerData.everyMs);
    parentPort.on('message', () => { clearInterval(timer); parentPort.postMessage(peaks); });`,
    { eval: true, workerData: { shared: shared.buffer, everyMs } },
  );
  return {
    phase: (code: number) => Atomics.store(shared, 0, code),
    stop: async (): Promise<Record<string, number>> => {
      const peaks = await new Promise<Record<number, number>>((resolve) => {
        worker.once('message', resolve);
        worker.postMessage('stop');
      });
      await worker.terminate();
      return Object.fromEntries(
        Object.entries(peaks).map(([code, rss]) => [names[Number(code)]!, Math.round(rss / 1024 / 1024)]),
      );
    },
  };
}
