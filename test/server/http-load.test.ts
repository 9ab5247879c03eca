import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { ReadWorkerPool } from '../../src/read-workers/read-worker-pool.ts';
import { readPoolOf } from '../../src/read-workers/with-read-workers.ts';
import { type RunningServer, startServer } from '../../src/server/start-server.ts';
import { createFakeGraphmemix } from '../support/fake-graphmemix.ts';

const CLIENTS = 64;
const CALLS_PER_CLIENT = 3;

/**
 * Overload on a real listener: 64 clients against one read worker with a short queue. Every request must get
 * an HTTP answer (200, or 503 with Retry-After when the queue is full): no connection resets, and the health
 * check, served by the event loop and never queued behind questions, answers all along.
 */
describe('HTTP under load (real listener, read workers)', () => {
  let dir: string;
  let graphmemix: Graphmemix;
  let server: RunningServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gm-http-load-'));
    graphmemix = await openGraphmemix({
      db: join(dir, 'load.db'),
      writeWorker: true,
      readWorkers: { size: 1, concurrency: 2, maxQueue: 8 },
    });
    const topics = ['flight', 'hotel', 'bike', 'budget', 'recipe', 'marathon', 'roadmap', 'battery'];
    await graphmemix.addMemories(
      'bench',
      Array.from({ length: 1500 }, (_, i) => ({
        id: `m${i}`,
        text: `Sam talked about the ${topics[i % topics.length]} ${i % 41} in Lisbon with Marta, note ${i}`,
        sessionId: `s${Math.floor(i / 8)}`,
      })),
    );
    server = await startServer({ graphmemix, open: true, port: 0, host: '127.0.0.1' });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await graphmemix?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers every request (200 or 503 + Retry-After), never resets, and health answers throughout', async () => {
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let retryAfterMissing = 0;
    const health: { status: number; ms: number }[] = [];
    let loading = true;
    const prober = (async () => {
      while (loading) {
        const t0 = performance.now();
        const status = await fetch(`${server.url}/v1/health`)
          .then(async (r) => {
            await r.text();
            return r.status;
          })
          .catch(() => 0);
        health.push({ status, ms: performance.now() - t0 });
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        for (let call = 0; call < CALLS_PER_CLIENT; call++) {
          try {
            const response = await fetch(`${server.url}/v1/retrieve`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({
                user_id: 'bench',
                question: `what did Sam say about the flight ${(client + call) % 41}?`,
                verifiers: 'offline',
              }),
            });
            await response.text();
            statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
            if (response.status === 503 && response.headers.get('retry-after') === null) retryAfterMissing++;
          } catch (error) {
            failures.push(String((error as { cause?: unknown }).cause ?? error));
          }
        }
      }),
    );
    loading = false;
    await prober;
    const seconds = (performance.now() - started) / 1000;
    const healthMs = health.map((h) => h.ms).sort((a, b) => a - b);
    console.log(
      `${CLIENTS} clients x ${CALLS_PER_CLIENT}: ${JSON.stringify(Object.fromEntries(statuses))} in ` +
        `${seconds.toFixed(1)} s; health n=${health.length} p50=${healthMs[Math.floor(healthMs.length / 2)]?.toFixed(1)} ms ` +
        `max=${healthMs.at(-1)?.toFixed(1)} ms; pool ${JSON.stringify(readPoolOf(graphmemix)?.stats())}`,
    );
    expect(failures).toEqual([]);
    expect([...statuses.keys()].every((status) => status === 200 || status === 503)).toBe(true);
    expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBe(CLIENTS * CALLS_PER_CLIENT);
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect(retryAfterMissing).toBe(0);
    expect(health.length).toBeGreaterThan(0);
    expect(health.every((h) => h.status === 200)).toBe(true);
    // Generous bound (shared CI cores): the point is "answered while questions queue", not a latency target.
    expect(healthMs.at(-1)!).toBeLessThan(2_000);
  }, 120_000);
});

describe('a client disconnect reaches the read worker', () => {
  it('aborts the question in the worker when the HTTP client goes away', async () => {
    const pool = new ReadWorkerPool({
      db: 'unused.db',
      entry: new URL('../read-workers/fixtures/scripted-read-worker.mjs', import.meta.url),
      size: 1,
    });
    await pool.started();
    // The real routes over a stand-in whose retrieve is a scripted slow worker call.
    const fake = createFakeGraphmemix();
    const graphmemix: Graphmemix = {
      ...fake,
      retrieve: (contextId, _question, options) =>
        pool.run('retrieve', [contextId, 'slow', {}], options?.signal),
    };
    const server = await startServer({ graphmemix, open: true, port: 0, host: '127.0.0.1' });
    try {
      const client = new AbortController();
      const request = fetch(`${server.url}/v1/retrieve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user_id: 'u', question: 'anything' }),
        signal: client.signal,
      }).catch((error: unknown) => error);
      await expect.poll(() => pool.stats().running, { timeout: 5_000 }).toBe(1);
      client.abort();
      await request;
      await expect
        .poll(async () => (await pool.run<{ aborted: number[] }>('retrieve', ['u', 'stats', {}])).aborted, {
          timeout: 5_000,
        })
        .toHaveLength(1);
      expect(pool.stats().running).toBe(0);
    } finally {
      await server.close();
      await pool.close();
    }
  });
});
