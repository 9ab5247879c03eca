import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ingestItems } from '../../src/digest/ingest.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { stoppedForget } from '../support/stopped-forget.ts';

// Round 52 audit: an import killed between its records and its relation update left every memory without
// schema edges, and questions answered with no sign of it.
/** A chat of `n` turns in rounds of two, as import items. */
function items(contextId: string, n: number) {
  return Array.from({ length: n }, (_, i) => ({
    type: 'record' as const,
    record: {
      id: `m${i}`,
      contextId,
      role: i % 2 === 0 ? 'user' : 'assistant',
      sessionId: 's1',
      roundId: `r${Math.floor(i / 2)}`,
      text: `we talked about the garden and the train, turn ${i}`,
    } as never,
    source: { file: 'test', line: i + 1 },
  }));
}

const dir = mkdtempSync(join(tmpdir(), 'gmx-relations-pending-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A file archive whose users' records were written without their relation stage (what a process killed before it
 * leaves), `then` run on its store before the close.
 */
async function killedImport(
  name: string,
  users: Record<string, number>,
  then?: (store: ArchiveStore) => Promise<void>,
): Promise<string> {
  const file = join(dir, `${name}.db`);
  const killed = await openGraphmemix({ db: file });
  for (const [user, n] of Object.entries(users)) {
    await ingestItems(killed.store, items(user, n), { contextId: user, relations: false });
  }
  await then?.(killed.store);
  await killed.close();
  return file;
}

describe('relations_pending', () => {
  it('flags questions while journal entries wait, and not once a write applied them', async () => {
    const gm = await openGraphmemix({ db: 'memory:' });
    // The records' batches without the relation stage: what a process killed before it leaves.
    await ingestItems(gm.store, items('ann', 40), { contextId: 'ann', relations: false });
    expect(await gm.store.hasRelationWork('ann')).toBe(true);
    const before = await gm.retrieve('ann', 'what about the garden?');
    expect(before.trace.flags).toContain('relations_pending');
    await gm.addMemories('ann', [{ id: 'late', text: 'one more note about the garden' }]);
    expect(await gm.store.hasRelationWork('ann')).toBe(false);
    const after = await gm.retrieve('ann', 'what about the garden?');
    expect(after.trace.flags).not.toContain('relations_pending');
    expect((await gm.store.countEdges('ann')).same_round).toBeGreaterThan(0);
    await gm.close();
  });

  it("a writer's open applies a journal a stopped process left, in the background; a close stops it cleanly", async () => {
    const file = await killedImport('both', { ann: 300, bob: 300 });
    // Closed at once: stopped at its next turn, what it did not reach still journaled, the file sound.
    const early = await openGraphmemix({ db: file });
    await early.close();
    const reader = await openGraphmemix({ db: file, readonly: true });
    expect((await reader.store.integrityCheck()).ok).toBe(true);
    await reader.close();
    const reopened = await openGraphmemix({ db: file });
    await reopened.waitForCompactions();
    for (const user of ['ann', 'bob']) {
      expect(await reopened.store.hasRelationWork(user)).toBe(false);
      expect((await reopened.store.countEdges(user)).same_round).toBeGreaterThan(0);
      expect((await reopened.retrieve(user, 'what about the garden?')).trace.flags).not.toContain(
        'relations_pending',
      );
    }
    expect((await reopened.store.integrityCheck()).ok).toBe(true);
    await reopened.close();
  });

  it('leaves the journal of a user being forgotten to its forget', async () => {
    const file = await killedImport('forgetting', { ann: 100 }, (store) => stoppedForget(store, 'ann', 1));
    const reopened = await openGraphmemix({ db: file });
    await reopened.waitForCompactions();
    expect((await reopened.store.countEdges('ann')).same_round ?? 0).toBe(0);
    await reopened.forgetContext('ann');
    expect(await reopened.store.hasRelationWork('ann')).toBe(false);
    expect((await reopened.store.integrityCheck()).ok).toBe(true);
    await reopened.close();
  });

  it('through the write worker the worker recovers; recoverRelations: false leaves the journal', async () => {
    const file = await killedImport('worker', { ann: 100 });
    const oneShot = await openGraphmemix({ db: file, recoverRelations: false });
    await oneShot.waitForCompactions();
    expect(await oneShot.store.hasRelationWork('ann')).toBe(true);
    await oneShot.close();
    const server = await openGraphmemix({ db: file, writeWorker: true });
    await server.waitForCompactions();
    expect(await server.store.hasRelationWork('ann')).toBe(false);
    expect((await server.store.countEdges('ann')).same_round).toBe(50);
    await server.close();
  });
});
