import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';

const dir = mkdtempSync(join(tmpdir(), 'gm-take-turns-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const batch = (user: string, n: number, size: number) =>
  Array.from({ length: size }, (_, i) => ({
    id: `${user}${n}-${i}`,
    text: `${user} note ${n}.${i} about the lake house and the train ticket ${i % 17}`,
    sessionId: `s${n}`,
  }));

describe('users take turns at the single writer (SQLite)', () => {
  for (const writeWorker of [false, true]) {
    it(`a small write of one user waits for the write running, not for another user's backlog (${writeWorker ? 'write worker' : 'in-process'})`, async () => {
      const gm = await openGraphmemix({ db: join(dir, `turns-${writeWorker}.db`), writeWorker });
      try {
        const done: string[] = [];
        const backlog = Array.from({ length: 5 }, (_, n) =>
          gm.addMemories('ann', batch('a', n, 300)).then(() => done.push(`ann ${n}`)),
        );
        const bob = gm.addMemories('bob', batch('b', 0, 1)).then(() => done.push('bob'));
        await Promise.all([...backlog, bob]);
        // Before: bob's add ran after all five of ann's. Now after the one running when it came (at most two:
        // in the worker ann's first may not have reached the library's queue yet).
        expect(done.indexOf('bob')).toBeLessThanOrEqual(2);
        // One user's own writes stay in call order.
        expect(done.filter((name) => name !== 'bob')).toEqual(['ann 0', 'ann 1', 'ann 2', 'ann 3', 'ann 4']);
        expect(await gm.store.countMemories('ann')).toBe(1500);
        expect(await gm.store.countMemories('bob')).toBe(1);
      } finally {
        await gm.close();
      }
    });
  }

  for (const writeWorker of [false, true]) {
    it(`a key's write waits for one of another key's, not for its adds to every user (${writeWorker ? 'write worker' : 'in-process'})`, async () => {
      const gm = await openGraphmemix({ db: join(dir, `keys-${writeWorker}.db`), writeWorker });
      try {
        // One key bound to many users adds to six of them at once, then another key adds one line. Without
        // lanes the second is the control: the same writes in call order.
        const race = async (lanes: boolean, round: number) => {
          const done: string[] = [];
          const lane = (name: string) => (lanes ? { lane: name } : undefined);
          const flood = Array.from({ length: 6 }, (_, n) =>
            gm
              .addMemories(`u${n}`, batch(`u${n}r${round}`, round, 200), lane('many'))
              .then(() => done.push(`u${n}`)),
          );
          const zed = gm
            .addMemories('zed', batch(`z${round}`, round, 1), lane('one'))
            .then(() => done.push('zed'));
          await Promise.all([...flood, zed]);
          return done.indexOf('zed');
        };
        // Call order puts zed's add after all six (in the worker, the first may not have reached the queue).
        expect(await race(false, 0)).toBeGreaterThanOrEqual(5);
        // The first round's semantic updates (after-write drains in no lane) settle before the lanes race: zed's
        // next write would otherwise wait for its own drain behind the six users'.
        await gm.waitForCompactions();
        // In its own lane it waits for the one running (two in the worker), not for the six.
        expect(await race(true, 1)).toBeLessThanOrEqual(2);
        for (let n = 0; n < 6; n++) expect(await gm.store.countMemories(`u${n}`)).toBe(400);
        expect(await gm.store.countMemories('zed')).toBe(2);
        // A forget in a lane (through the worker its options cross the thread, onStarted stays behind).
        let started = false;
        const forgot = await gm.deleteUser('zed', { lane: 'one', onStarted: () => (started = true) });
        expect(forgot).toMatchObject({ deleted: true, memories: 2 });
        expect(started).toBe(true);
      } finally {
        await gm.close();
      }
    });
  }
});
