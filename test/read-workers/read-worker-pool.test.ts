import { afterEach, describe, expect, it } from 'vitest';
import { ReadWorkerPool, type ReadWorkerPoolOptions } from '../../src/read-workers/read-worker-pool.ts';

const SCRIPTED = new URL('./fixtures/scripted-read-worker.mjs', import.meta.url);

describe('ReadWorkerPool (scripted worker)', () => {
  const pools: ReadWorkerPool[] = [];
  const open = async (options: Omit<ReadWorkerPoolOptions, 'db' | 'entry'>) => {
    const pool = new ReadWorkerPool({ db: 'unused.db', entry: SCRIPTED, ...options });
    pools.push(pool);
    await pool.started();
    return pool;
  };
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.close()));
  });

  it('runs calls in every worker and returns cloneable results', async () => {
    const pool = await open({ size: 2, concurrency: 1 });
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        pool.run<{ contextId: string; threadId: number; vector: Float32Array }>('retrieve', [
          `u${i}`,
          'echo',
          {},
        ]),
      ),
    );
    expect(results.map((r) => r.contextId)).toEqual(['u0', 'u1', 'u2', 'u3']);
    expect(new Set(results.map((r) => r.threadId)).size).toBe(2);
    expect(results[0]!.vector).toBeInstanceOf(Float32Array);
  });

  it('refuses calls with BUSY at once when the queue is full, and serves the queue afterwards', async () => {
    const pool = await open({ size: 1, concurrency: 1, maxQueue: 2 });
    const running = pool.run('retrieve', ['u', 'slow', { ms: 300 }]);
    const queued = [pool.run('retrieve', ['u', 'echo', {}]), pool.run('retrieve', ['u', 'echo', {}])];
    expect(pool.stats()).toMatchObject({ running: 1, queued: 2 });
    const t0 = performance.now();
    await expect(pool.run('retrieve', ['u', 'echo', {}])).rejects.toMatchObject({
      code: 'BUSY',
      details: { retryAfterS: 1 },
    });
    expect(performance.now() - t0).toBeLessThan(100);
    await expect(running).resolves.toMatchObject({ input: 'slow' });
    await expect(Promise.all(queued)).resolves.toHaveLength(2);
    expect(pool.stats()).toMatchObject({ running: 0, queued: 0 });
  });

  it('hands waiting calls out one lane at a time: a caller with many queued delays another by one turn', async () => {
    const pool = await open({ size: 1, concurrency: 1, maxQueue: 20 });
    const order: string[] = [];
    const ask = (lane: string, id: string) =>
      pool.run<{ contextId: string }>('retrieve', [id, 'echo', {}], undefined, lane).then((r) => {
        order.push(r.contextId);
      });
    const running = pool.run('retrieve', ['first', 'slow', { ms: 200 }], undefined, 'A');
    const calls = [1, 2, 3, 4, 5].map((i) => ask('A', `a${i}`));
    calls.push(ask('B', 'b1'), ask('B', 'b2'), ask('C', 'c1'), ask('A', 'a6'));
    expect(pool.stats()).toMatchObject({ running: 1, queued: 9 });
    await running;
    await Promise.all(calls);
    // FIFO would give a1..a5, b1, b2, c1, a6: B's first question waited behind all five of A's.
    expect(order).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4', 'a5', 'a6']);
    // An aborted waiting call leaves its lane's turn to the others; BUSY still counts every lane together.
    const small = await open({ size: 1, concurrency: 1, maxQueue: 2 });
    const hold = small.run('retrieve', ['u', 'slow', { ms: 200 }], undefined, 'A');
    const abort = new AbortController();
    const dropped = small.run('retrieve', ['x', 'echo', {}], abort.signal, 'A');
    const kept = small.run<{ contextId: string }>('retrieve', ['y', 'echo', {}], undefined, 'B');
    await expect(small.run('retrieve', ['z', 'echo', {}], undefined, 'C')).rejects.toMatchObject({
      code: 'BUSY',
    });
    abort.abort();
    await expect(dropped).rejects.toMatchObject({ name: 'AbortError' });
    expect(small.stats()).toMatchObject({ queued: 1 });
    await hold;
    await expect(kept).resolves.toMatchObject({ contextId: 'y' });
  });

  it('drops an aborted queued call before it reaches a worker, and aborts a running one in the worker', async () => {
    const pool = await open({ size: 1, concurrency: 1 });
    const runningAbort = new AbortController();
    const queuedAbort = new AbortController();
    const running = pool.run('retrieve', ['u', 'slow', {}], runningAbort.signal);
    const queued = pool.run('retrieve', ['u', 'echo', {}], queuedAbort.signal);
    queuedAbort.abort();
    await expect(queued).rejects.toMatchObject({ name: 'AbortError' });
    const t0 = performance.now();
    runningAbort.abort(new Error('client went away'));
    await expect(running).rejects.toThrow('client went away');
    // The worker got the abort and stopped (the slow call would hold the only slot for 10 s otherwise).
    const stats = await pool.run<{ received: number[]; aborted: number[] }>('retrieve', ['u', 'stats', {}]);
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(stats.received).toHaveLength(2); // 'slow' and 'stats': the aborted queued call never arrived
    expect(stats.aborted).toEqual([stats.received[0]]);
    // A signal aborted before the call never queues.
    await expect(pool.run('retrieve', ['u', 'echo', {}], AbortSignal.abort())).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('fails only the crashed worker’s in-flight calls and replaces the worker', async () => {
    const pool = await open({ size: 2, concurrency: 2 });
    // Fill both workers so the crash lands beside a slow call on one of them.
    const slow = [
      pool.run('retrieve', ['u', 'slow', { ms: 400 }]),
      pool.run('retrieve', ['u', 'slow', { ms: 400 }]),
    ];
    const crash = pool.run('retrieve', ['u', 'crash', {}]);
    await expect(crash).rejects.toMatchObject({ code: 'INTERNAL', message: expect.stringMatching(/exit/) });
    const settled = await Promise.allSettled(slow);
    // Exactly one slow call shared the crashed worker; the other worker's call was untouched.
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(1);
    expect(settled.filter((s) => s.status === 'rejected')[0]).toMatchObject({
      reason: { code: 'INTERNAL' },
    });
    await expect(pool.run('retrieve', ['u', 'echo', {}])).resolves.toMatchObject({ input: 'echo' });
    await expect.poll(() => pool.stats().ready, { timeout: 10_000 }).toBe(2);
    expect(pool.stats().replaced).toBe(1);
  });

  it('fails with STORE when workers cannot start, instead of respawning forever', async () => {
    const pool = new ReadWorkerPool({
      db: 'unused.db',
      entry: SCRIPTED,
      size: 1,
      modelConfig: { failStart: true } as never,
    });
    pools.push(pool);
    await expect(pool.started()).rejects.toMatchObject({ code: 'STORE' });
    await expect(pool.run('retrieve', ['u', 'echo', {}])).rejects.toMatchObject({ code: 'STORE' });
  });

  it('rejects queued and later calls once closed', async () => {
    const pool = await open({ size: 1, concurrency: 1 });
    const running = expect(pool.run('retrieve', ['u', 'slow', {}])).rejects.toMatchObject({ code: 'STORE' });
    const queued = expect(pool.run('retrieve', ['u', 'echo', {}])).rejects.toMatchObject({ code: 'STORE' });
    await pool.close();
    await running;
    await queued;
    await expect(pool.run('retrieve', ['u', 'echo', {}])).rejects.toMatchObject({ code: 'STORE' });
  });
});
