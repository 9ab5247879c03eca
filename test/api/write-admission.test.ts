import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GraphmemixError } from '../../src/errors/graphmemix-error.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { WriteAdmission } from '../../src/graphmemix-write-admission.ts';

const dir = mkdtempSync(join(tmpdir(), 'gm-write-admission-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const note = (id: string) => ({ id, text: `note ${id} about the lake house`, sessionId: 's1' });

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    return error instanceof GraphmemixError ? error.code : String(error);
  }
}

describe('openGraphmemix({ maxPendingWrites }): a write backlog past the bound is BUSY', () => {
  for (const writeWorker of [false, true]) {
    it(`refuses the write past the bound, stores nothing of it, and admits again once one settles (${writeWorker ? 'write worker' : 'in-process'})`, async () => {
      const gm = await openGraphmemix({
        db: join(dir, `bound-${writeWorker}.db`),
        maxPendingWrites: 2,
        writeWorker,
      });
      try {
        // Issued in one synchronous turn: the first two are queued or running when the third is called.
        const first = gm.addMemories('ann', [note('a1')]);
        const second = gm.addMemories('bob', [note('b1')]);
        const third = gm.addMemories('ann', [note('a2')]);
        const deleted = gm.deleteMemory('ann', 'a1');
        expect(await codeOf(third)).toBe('BUSY');
        expect(await codeOf(deleted)).toBe('BUSY');
        const error = await third.catch((e: unknown) => e);
        expect((error as GraphmemixError).details).toMatchObject({ retryAfterS: 1, pending: 2 });
        await Promise.all([first, second]);
        expect(await gm.getMemory('ann', 'a2')).toBeUndefined();
        expect(await gm.getMemory('ann', 'a1')).toBeDefined();
        // Settled writes give their places back.
        await gm.addMemories('ann', [note('a2')]);
        expect(await gm.store.countMemories('ann')).toBe(2);
      } finally {
        await gm.close();
      }
    });
  }

  it('counts an update, a conversation and a compaction once each (the facade composes unwrapped calls)', async () => {
    const gm = await openGraphmemix({ db: 'memory:', maxPendingWrites: 1 });
    try {
      await gm.addMemories('ann', [note('a1')]);
      // updateMemory adds the new version: with a bound of 1 it would refuse itself if counted twice.
      const report = await gm.updateMemory('ann', 'a1', { text: 'the lake house was sold' });
      expect(report).toBeDefined();
      expect((await gm.getMemory('ann', 'a1'))?.text).toBe('the lake house was sold');
      const added = await gm.addMessages('ann', [{ role: 'user', content: 'we met at the pier' }]);
      expect(added.memoryIds).toHaveLength(1);
      await gm.compact('ann');
      // One in flight: the next write of any user, or a forget, waits for nothing: it is refused.
      const running = gm.addMemories('bob', [note('b1')]);
      expect(await codeOf(gm.forgetContext('ann'))).toBe('BUSY');
      await running;
      expect(await gm.store.countMemories('ann')).toBe(2);
    } finally {
      await gm.close();
    }
  });

  it('a write that throws at once still gives its place back', async () => {
    const admission = new WriteAdmission(1);
    const failing = admission.admit(() => {
      throw new GraphmemixError('INVALID_INPUT', 'bad record');
    });
    expect(await codeOf(failing)).toBe('INVALID_INPUT');
    expect(admission.inFlight).toBe(0);
    expect(await admission.admit(async () => 'ok')).toBe('ok');
    expect(() => new WriteAdmission(0)).toThrow(/maxPendingWrites/);
    expect(() => new WriteAdmission(1.5)).toThrow(/maxPendingWrites/);
  });
});
