import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readDrainFailure, writeDrainFailure } from '../../src/digest/incremental/drain-failure-mark.ts';
import {
  DRAIN_IDS_PER_TURN,
  drainSemanticBacklog,
} from '../../src/digest/incremental/drain-semantic-backlog.ts';
import {
  appendBacklog,
  backlogKeys,
  clearCompactionState,
  contextsWithBacklog,
  newCompactionMark,
  writeCompactionMark,
} from '../../src/digest/incremental/semantic-compaction-mark.ts';
import { ingestItems } from '../../src/digest/ingest.ts';
import { statsOf } from '../../src/graphmemix-memory-verbs.ts';
import { SemanticDrains } from '../../src/graphmemix-semantic-drains.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { openStore } from '../../src/store/open-store.ts';
import { dropTestDatabases } from '../store/postgres-test-db.ts';
import { storeBackends } from '../store/store-backends.ts';
import { deadPid } from '../support/dead-pid.ts';
import { stoppedForget } from '../support/stopped-forget.ts';

const dir = mkdtempSync(join(tmpdir(), 'gm-drains-'));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropTestDatabases();
});

/** A context of `n` memories with its relations built (semantic snapshot and lists), no backlog. */
async function storeWith(
  n: number,
  open: () => Promise<ArchiveStore> = () => openStore(':memory:'),
  contextId = 'ann',
): Promise<ArchiveStore> {
  const store = await open();
  await ingestItems(
    store,
    Array.from({ length: n }, (_, i) => ({
      type: 'record' as const,
      record: {
        id: `m${i}`,
        contextId,
        text: `note ${i} on the garden ${i % 7} and the train ${i % 5}`,
      } as never,
      source: { file: 'test', line: i + 1 },
    })),
    { contextId },
  );
  return store;
}

/** The ids waiting in the context's backlog rows. */
async function backlogIds(store: ArchiveStore, contextId = 'ann'): Promise<string[]> {
  const ids: string[] = [];
  for (const key of await backlogKeys(store, contextId))
    ids.push(...((await store.getMeta<string[]>(key)) ?? []));
  return ids;
}

/** A write queue that records each turn's context and asker and runs it when released. */
class HeldQueue {
  readonly turns: Array<{ contextId: string; asker: string | undefined; run: () => void }> = [];
  forContext<T>(contextId: string, work: () => Promise<T>, options?: { asker?: string }): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.turns.push({ contextId, asker: options?.asker, run: () => void work().then(resolve, reject) });
    });
  }
  /** Runs the oldest waiting turn. */
  next(): void {
    this.turns.shift()?.run();
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Waits (up to 2 s) until `done` holds. */
/** A new SemanticDrains' recover finds ann's backlog, queues one drain for it, and the drain empties it. */
async function recoverAnn(store: ArchiveStore, queue: HeldQueue): Promise<void> {
  const next = new SemanticDrains(store, queue, () => ({}));
  next.recover();
  for (let i = 0; i < 20 && queue.turns.length === 0; i++) await tick();
  expect(queue.turns.map((turn) => turn.contextId)).toEqual(['ann']);
  queue.next();
  await next.idle();
  expect(await backlogKeys(store, 'ann')).toEqual([]);
}

async function until(done: () => boolean): Promise<void> {
  const end = Date.now() + 2_000;
  while (!done()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/**
 * A context of 40 with `m1` in its backlog, and drains over a store whose record reads fail with `message`
 * while `broken()` holds (retry delays `delays`), queued on a HeldQueue.
 */
async function failingDrains(message: string, delays: number[], broken: () => boolean = () => true) {
  const store = await storeWith(40);
  const queue = new HeldQueue();
  const flaky = Object.create(store) as ArchiveStore;
  flaky.getMemories = (contextId, ids) =>
    broken() ? Promise.reject(new Error(message)) : store.getMemories(contextId, ids);
  const drains = new SemanticDrains(flaky, queue, () => ({}), DRAIN_IDS_PER_TURN, delays);
  await appendBacklog(store, 'ann', ['m1']);
  return { store, queue, drains };
}

describe.each(storeBackends(dir, 'drain'))('drainSemanticBacklog (%s)', (_, open) => {
  it('applies at most one turn of ids, oldest rows first, and says whether rows are left', async () => {
    const store = await storeWith(40, open);
    await appendBacklog(store, 'ann', ['m1', 'm2', 'm3']);
    await appendBacklog(store, 'ann', ['m4', 'm5']);
    const first = await drainSemanticBacklog(store, 'ann', {}, 4);
    expect(first).toMatchObject({ applied: 4, left: true });
    expect(await backlogIds(store)).toEqual(['m5']);
    const second = await drainSemanticBacklog(store, 'ann', {}, 4);
    expect(second).toMatchObject({ applied: 1, left: false });
    expect(await backlogKeys(store, 'ann')).toEqual([]);
  });

  it("takes nothing while a compaction run's mark is on the context (the backlog is the run's)", async () => {
    const store = await storeWith(40, open);
    await appendBacklog(store, 'ann', ['m1']);
    // A live run of another process of this machine (the test runner's parent stands in for it).
    await writeCompactionMark(store, 'ann', { ...newCompactionMark(), pid: process.ppid });
    expect(await drainSemanticBacklog(store, 'ann')).toMatchObject({ applied: 0, left: false });
    expect(await backlogIds(store)).toEqual(['m1']);
  });

  it('takes nothing from a user being forgotten', async () => {
    const store = await storeWith(40, open);
    if (store.isForgetting === undefined) return;
    await appendBacklog(store, 'ann', ['m1']);
    // A forget a stopped process left after its first step (the mark); the rows are still there.
    await stoppedForget(store, 'ann', 1);
    expect(await store.isForgetting('ann')).toBe(true);
    expect(await drainSemanticBacklog(store, 'ann')).toMatchObject({ applied: 0, left: false });
    expect(await backlogIds(store)).toEqual(['m1']);
  });

  it('applies an id no longer stored as a removal', async () => {
    const store = await storeWith(40, open);
    expect(await store.semantic.getDocs('ann', ['m7'])).toHaveLength(1);
    await store.deleteMemory('ann', 'm7');
    await store.clearRelationWork('ann', { through: Number.MAX_SAFE_INTEGER });
    await appendBacklog(store, 'ann', ['m7']);
    await drainSemanticBacklog(store, 'ann');
    expect(await store.semantic.getDocs('ann', ['m7'])).toEqual([]);
  });

  it('lists the contexts with rows from the rows alone', async () => {
    const store = await open();
    await appendBacklog(store, 'ann', ['a']);
    await appendBacklog(store, 'b"/x', ['b']);
    await appendBacklog(store, 'ann', ['c']);
    expect((await contextsWithBacklog(store)).sort()).toEqual(['ann', 'b"/x']);
  });
});

describe('SemanticDrains', () => {
  it('queues one drain per context in the asker lane; a write after it started queues the next', async () => {
    const store = await storeWith(40);
    const queue = new HeldQueue();
    const drains = new SemanticDrains(store, queue, () => ({}));
    await appendBacklog(store, 'ann', ['m1']);
    drains.schedule('ann', 'key-a');
    drains.schedule('ann', 'key-b');
    expect(queue.turns.map((turn) => [turn.contextId, turn.asker])).toEqual([['ann', 'key-a']]);
    queue.next();
    // Started: the next write's request queues another drain.
    drains.schedule('ann', 'key-b');
    expect(queue.turns.map((turn) => turn.asker)).toEqual(['key-b']);
    await tick();
    expect(await backlogKeys(store, 'ann')).toEqual([]);
    queue.next();
    await drains.idle();
    expect(drains.settled()).toBe(true);
  });

  it('queues the next turn while rows are left', async () => {
    const store = await storeWith(300);
    const queue = new HeldQueue();
    const drains = new SemanticDrains(store, queue, () => ({}), 4);
    await appendBacklog(
      store,
      'ann',
      Array.from({ length: 6 }, (_, i) => `m${i}`),
    );
    drains.schedule('ann', 'key-a');
    queue.next();
    for (let i = 0; i < 20 && queue.turns.length === 0; i++) await tick();
    // 4 ids a turn: 2 left for a second turn in the same lane.
    expect(await backlogIds(store)).toEqual(['m4', 'm5']);
    expect(queue.turns.map((turn) => turn.asker)).toEqual(['key-a']);
    queue.next();
    await drains.idle();
    expect(await backlogKeys(store, 'ann')).toEqual([]);
  });

  it('a failed drain keeps its rows, writes its failure to the store and is tried again after the delay', async () => {
    let broken = true;
    const { store, queue, drains } = await failingDrains('disk gone', [5, 5], () => broken);
    drains.schedule('ann', 'key-a');
    queue.next();
    await drains.idle();
    expect((drains.failures.get('ann') as Error).message).toBe('disk gone');
    expect(await backlogIds(store)).toEqual(['m1']);
    const mark = (await readDrainFailure(store, 'ann'))!;
    expect(mark).toMatchObject({ error: 'disk gone', attempts: 1, since: mark.at });
    expect(Date.parse(mark.nextRetryAt!) - Date.parse(mark.at)).toBe(5);
    expect(drains.retriesPlanned()).toBe(1);
    // After its delay the retry queues a turn in the failed drain's lane.
    await until(() => queue.turns.length === 1);
    expect(queue.turns.map((turn) => turn.asker)).toEqual(['key-a']);
    broken = false;
    queue.next();
    await drains.idle();
    expect(await backlogKeys(store, 'ann')).toEqual([]);
    expect(await readDrainFailure(store, 'ann')).toBeUndefined();
    expect(drains.failures.has('ann')).toBe(false);
    expect(drains.retriesPlanned()).toBe(0);
  });

  it('a lasting failure is tried once per delay, then waits for the next write', async () => {
    const { store, queue, drains } = await failingDrains('disk gone', [5, 5]);
    drains.schedule('ann');
    for (let attempt = 1; attempt <= 3; attempt++) {
      await until(() => queue.turns.length === 1);
      queue.next();
      await drains.idle();
      expect(await readDrainFailure(store, 'ann')).toMatchObject({ attempts: attempt });
    }
    const last = (await readDrainFailure(store, 'ann'))!;
    expect(last.nextRetryAt).toBeUndefined();
    expect(Date.parse(last.since)).toBeLessThan(Date.parse(last.at));
    expect(drains.retriesPlanned()).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(queue.turns).toEqual([]);
    // A write asks again: one more attempt, counted on.
    drains.schedule('ann');
    queue.next();
    await drains.idle();
    expect(await readDrainFailure(store, 'ann')).toMatchObject({ attempts: 4 });
    expect(await backlogIds(store)).toEqual(['m1']);
  });

  it("a write's drain request runs a planned retry now; close drops the planned ones", async () => {
    let broken = true;
    const { store, queue, drains } = await failingDrains('busy', [60_000, 30], () => broken);
    drains.schedule('ann');
    queue.next();
    await drains.idle();
    expect(drains.retriesPlanned()).toBe(1);
    drains.schedule('ann', 'key-b');
    expect(drains.retriesPlanned()).toBe(0);
    expect(queue.turns.map((turn) => turn.asker)).toEqual(['key-b']);
    queue.next();
    await drains.idle();
    // Second failure in a row: its retry is planned 30 ms on; closing drops it.
    expect(await readDrainFailure(store, 'ann')).toMatchObject({ attempts: 2 });
    expect(drains.retriesPlanned()).toBe(1);
    await drains.close('finish');
    expect(drains.retriesPlanned()).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(queue.turns).toEqual([]);
    // The next open finds the rows, drains them and drops the mark the failed process left.
    broken = false;
    const next = new SemanticDrains(store, queue, () => ({}));
    next.recover();
    await until(() => queue.turns.length === 1);
    queue.next();
    await next.idle();
    expect(await backlogKeys(store, 'ann')).toEqual([]);
    expect(await readDrainFailure(store, 'ann')).toBeUndefined();
  });

  it('stats show a failed drain while rows wait, not after; compaction and forget drop its mark', async () => {
    const store = await storeWith(40);
    const failure = {
      error: 'disk gone',
      since: '2026-01-01T00:00:00.000Z',
      at: '2026-01-01T00:00:01.000Z',
      attempts: 2,
    };
    expect((await statsOf(store, 'ann'))!.semanticPending).toBeUndefined();
    await appendBacklog(store, 'ann', ['m1']);
    expect((await statsOf(store, 'ann'))!.semanticPending).toEqual({});
    await writeDrainFailure(store, 'ann', failure);
    expect((await statsOf(store, 'ann'))!.semanticPending).toEqual({ drainFailure: failure });
    // Drained by another process, which did not know of the mark: stale, not shown.
    await drainSemanticBacklog(store, 'ann');
    expect(await readDrainFailure(store, 'ann')).toEqual(failure);
    expect((await statsOf(store, 'ann'))!.semanticPending).toBeUndefined();
    await clearCompactionState(store, 'ann');
    expect(await readDrainFailure(store, 'ann')).toBeUndefined();
  });

  it("recover drains a backlog a killed run's mark left (this machine, process gone), not a live run's", async () => {
    const store = await storeWith(40);
    const queue = new HeldQueue();
    await writeCompactionMark(store, 'ann', { ...newCompactionMark(), pid: process.ppid });
    await appendBacklog(store, 'ann', ['m1']);
    const live = new SemanticDrains(store, queue, () => ({}));
    live.recover();
    for (let i = 0; i < 20; i++) await tick();
    expect(queue.turns).toEqual([]);
    await writeCompactionMark(store, 'ann', { ...newCompactionMark(), pid: await deadPid() });
    await recoverAnn(store, queue);
    expect((await statsOf(store, 'ann'))!.semanticPending).toBeUndefined();
  });

  it("closed with 'stop', lets its queued drains pass without work; recover finds their rows", async () => {
    const store = await storeWith(40);
    const queue = new HeldQueue();
    const drains = new SemanticDrains(store, queue, () => ({}));
    await appendBacklog(store, 'ann', ['m1']);
    drains.schedule('ann');
    const closing = drains.close('stop');
    queue.next();
    await closing;
    expect(await backlogIds(store)).toEqual(['m1']);

    await recoverAnn(store, queue);
  });
});
