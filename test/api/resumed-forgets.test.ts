import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ingestItems } from '../../src/digest/ingest.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { ResumedForgets } from '../../src/graphmemix-forget.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { createMediaFolder } from '../../src/store/media-folder.ts';
import { createSqliteStore } from '../../src/store/sqlite-store.ts';
import { stoppedForget } from '../support/stopped-forget.ts';

/**
 * A forget a stopped process left (a server restarted half-way through a user's erasure) is finished in the
 * background by the next long-running writer (`resumeForgets`, set by `serve` and `mcp`), without the client
 * asking again; a shutdown stops it between two steps and the next open resumes it (src/graphmemix-forget.ts,
 * ResumedForgets).
 */
const dir = mkdtempSync(join(tmpdir(), 'gm-resumed-forgets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const notes = (user: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    id: `${user}-${i}`,
    text: `${user} remembers the ${['harbour', 'garden', 'lighthouse'][i % 3]} walk number ${i}`,
  }));

/** ann (120 memories) half forgotten by a process stopped after `steps` steps of 7 rows; bob untouched. */
async function halfForgotten(file: string, steps = 40): Promise<void> {
  const gm = await openGraphmemix({ db: file, readWorkers: false });
  await gm.addMemories('ann', notes('ann', 120));
  await gm.addMemories('bob', notes('bob', 30));
  await gm.close();
  const store = createSqliteStore(file, { forgetStepRows: 7 });
  await stoppedForget(store, 'ann', steps);
  expect(await store.isForgetting!('ann')).toBe(true);
  expect(await store.countMemories('ann')).toBeGreaterThan(0);
  await store.close();
}

/** A writer that resumes forgets, over a store whose forget steps are 7 rows (many steps; not closed by close). */
const resumingInSmallSteps = (file: string) =>
  openGraphmemix({
    db: file,
    readWorkers: false,
    resumeForgets: true,
    store: createSqliteStore(file, { forgetStepRows: 7 }),
  });

async function untilForgotten(gm: Graphmemix, contextId: string): Promise<void> {
  for (let waited = 0; await gm.store.isForgetting?.(contextId); waited += 20) {
    if (waited > 30_000) throw new Error(`${contextId} is still being forgotten`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it('the store lists the users whose forget was interrupted, oldest first', async () => {
  const file = join(dir, 'list.db');
  const gm = await openGraphmemix({ db: file, readWorkers: false });
  await gm.addMemories('zed', notes('zed', 5));
  await gm.addMemories('amy', notes('amy', 5));
  await gm.addMemories('kim', notes('kim', 5));
  await gm.close();
  const store = createSqliteStore(file);
  expect(await store.forgettingContexts!()).toEqual([]);
  await stoppedForget(store, 'zed', 1);
  await new Promise((resolve) => setTimeout(resolve, 5));
  await stoppedForget(store, 'amy', 1);
  expect(await store.forgettingContexts!()).toEqual(['zed', 'amy']);
  await store.close();
});

describe.each([
  ['in the process', false],
  ['through the write worker', true],
])('an interrupted forget (%s)', (_, writeWorker) => {
  it('is finished after open by a writer that resumes forgets, and only by one', async () => {
    const file = join(dir, `resume-${writeWorker}.db`);
    await halfForgotten(file);
    // Without the option (one-shot commands) the user stays half forgotten until someone forgets it again.
    const plain = await openGraphmemix({ db: file, readWorkers: false, writeWorker });
    await plain.addMemories('bob', [{ id: 'bob-late', text: 'bob writes while ann waits' }]);
    expect(await plain.store.isForgetting?.('ann')).toBe(true);
    await plain.close();

    const gm = await openGraphmemix({ db: file, readWorkers: false, writeWorker, resumeForgets: true });
    try {
      await untilForgotten(gm, 'ann');
      expect(await gm.store.countMemories('ann')).toBe(0);
      expect(await gm.store.countMemories('bob')).toBe(31);
      expect((await gm.search('bob', 'lighthouse walk')).length).toBeGreaterThan(0);
      expect(await gm.search('ann', 'lighthouse walk')).toEqual([]);
      expect((await gm.store.integrityCheck()).ok).toBe(true);
      // The user id starts over.
      await gm.addMemories('ann', [{ id: 'new', text: 'ann is back' }]);
      expect(await gm.store.countMemories('ann')).toBe(1);
    } finally {
      await gm.close();
    }
  }, 60_000);
});

it("a client's forget of the same user gets the resumed forget's report", async () => {
  const file = join(dir, 'client.db');
  await halfForgotten(file, 3);
  const gm = await resumingInSmallSteps(file);
  try {
    expect(await gm.forgetContext('ann')).toMatchObject({ contextId: 'ann', deleted: true, memories: 120 });
    expect(await gm.store.isForgetting?.('ann')).toBe(false);
    expect(await gm.store.countMemories('ann')).toBe(0);
  } finally {
    await gm.close();
    await gm.store.close();
  }
}, 60_000);

it("close({ background: 'stop' }) stops a resumed forget between steps; the next open resumes it", async () => {
  const file = join(dir, 'stop.db');
  await halfForgotten(file, 3);
  const first = await resumingInSmallSteps(file);
  await first.close({ background: 'stop' });
  await first.store.close();
  const check = createSqliteStore(file);
  expect(await check.isForgetting!('ann')).toBe(true);
  expect(await check.countMemories('ann')).toBeGreaterThan(0);
  await check.close();

  const second = await openGraphmemix({ db: file, readWorkers: false, resumeForgets: true });
  try {
    await untilForgotten(second, 'ann');
    expect(await second.store.countMemories('ann')).toBe(0);
    expect((await second.store.integrityCheck()).ok).toBe(true);
  } finally {
    await second.close();
  }
}, 60_000);

describe('a resumed forget that fails', () => {
  /** ann half forgotten; a store whose next `failures` forgets fail before their first step. */
  async function failing(name: string, failures: number) {
    const file = join(dir, `${name}.db`);
    await halfForgotten(file, 3);
    const store = createSqliteStore(file, { forgetStepRows: 7 });
    let left = failures;
    const flaky = Object.create(store) as ArchiveStore;
    flaky.deleteContext = (contextId, options) =>
      left-- > 0 ? Promise.reject(new Error('disk full')) : store.deleteContext(contextId, options);
    const forgets = new ResumedForgets(
      flaky,
      createMediaFolder(join(dir, `${name}-media`)),
      () => (work) => work(),
      [5, 5],
    );
    return { store, forgets };
  }

  async function until(done: () => boolean | Promise<boolean>): Promise<void> {
    for (let waited = 0; !(await done()); waited += 5) {
      if (waited > 10_000) throw new Error('timed out waiting');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  it('is tried again after the delay and finishes the erasure', async () => {
    const { store, forgets } = await failing('retry', 2);
    forgets.start(['ann']);
    await forgets.idle();
    expect((forgets.failures.get('ann') as Error).message).toBe('disk full');
    expect(forgets.retriesPlanned()).toBe(1);
    expect(await store.isForgetting!('ann')).toBe(true);
    await until(async () => !(await store.isForgetting!('ann')));
    await forgets.idle();
    expect(await store.countMemories('ann')).toBe(0);
    expect(await store.countMemories('bob')).toBe(30);
    expect(forgets.failures.has('ann')).toBe(false);
    expect(forgets.retriesPlanned()).toBe(0);
    expect((await store.integrityCheck()).ok).toBe(true);
    await store.close();
  });

  it('does not forget a user that another process finished and that wrote again', async () => {
    const { store, forgets } = await failing('finished-elsewhere', 1);
    // The retry's timer fires when this test says (after the other process's work), not by the clock.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      forgets.start(['ann']);
      await forgets.idle();
      expect(forgets.retriesPlanned()).toBe(1);
      await store.deleteContext('ann');
      await ingestItems(
        store,
        [
          {
            type: 'record',
            record: { id: 'back', text: 'ann is back' } as never,
            source: { file: 't', line: 1 },
          },
        ],
        { contextId: 'ann' },
      );
      vi.advanceTimersByTime(5);
      expect(forgets.retriesPlanned()).toBe(0);
      await forgets.idle();
    } finally {
      vi.useRealTimers();
    }
    expect(await store.countMemories('ann')).toBe(1);
    expect(forgets.failures.has('ann')).toBe(false);
    await store.close();
  });

  it("leaves its retry to a client's forget, and close drops a planned one", async () => {
    const { store, forgets } = await failing('client', 1);
    forgets.start(['ann']);
    await forgets.idle();
    expect(forgets.retriesPlanned()).toBe(1);
    // A client's forget asks for the run under way: none, and the planned retry is its now.
    expect(forgets.running('ann')).toBeUndefined();
    expect(forgets.retriesPlanned()).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(await store.isForgetting!('ann')).toBe(true);

    const { store: other, forgets: closing } = await failing('closing', 1);
    closing.start(['ann']);
    await closing.idle();
    expect(closing.retriesPlanned()).toBe(1);
    await closing.close('finish');
    expect(closing.retriesPlanned()).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(await other.isForgetting!('ann')).toBe(true);
    await store.close();
    await other.close();
  });
});
