import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
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
