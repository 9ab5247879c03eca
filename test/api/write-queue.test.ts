import { describe, expect, it } from 'vitest';
import { WriteQueue } from '../../src/graphmemix-write-queue.ts';

/** A piece of work that logs its start and end around one turn of the event loop. */
const piece = (log: string[], name: string) => async () => {
  log.push(`${name}:start`);
  await new Promise((resolve) => setImmediate(resolve));
  log.push(`${name}:end`);
  return name;
};

describe('WriteQueue', () => {
  it('runs one write at a time, in call order', async () => {
    const queue = new WriteQueue();
    const log: string[] = [];
    await Promise.all([queue.exclusive(piece(log, 'a')), queue.exclusive(piece(log, 'b'))]);
    expect(log).toEqual(['a:start', 'a:end', 'b:start', 'b:end']);
  });

  it("lets other contexts' writes between a holder's pieces; writes to the held context wait for all of it", async () => {
    const queue = new WriteQueue();
    const log: string[] = [];
    let other: Promise<string> | undefined;
    let same: Promise<string> | undefined;
    const holder = queue.holding('ann', async () => {
      await queue.exclusive(piece(log, 'ann batch 1'));
      // Issued while the import runs, as a server's other requests are.
      other = queue.forContext('bob', piece(log, 'bob add'));
      same = queue.forContext('ann', piece(log, 'ann add'));
      expect(queue.isHeld('ann')).toBe(true);
      await queue.exclusive(piece(log, 'ann batch 2'));
      await queue.exclusive(piece(log, 'ann relations'));
      return 'import';
    });
    expect(await holder).toBe('import');
    await Promise.all([other, same]);
    expect(log).toEqual([
      'ann batch 1:start',
      'ann batch 1:end',
      'bob add:start',
      'bob add:end',
      'ann batch 2:start',
      'ann batch 2:end',
      'ann relations:start',
      'ann relations:end',
      'ann add:start',
      'ann add:end',
    ]);
    expect(queue.isHeld('ann')).toBe(false);
  });

  it('a write that may touch any context waits for every holder, then takes one turn', async () => {
    const queue = new WriteQueue();
    const log: string[] = [];
    const holder = queue.holding('ann', async () => {
      await queue.exclusive(piece(log, 'ann batch 1'));
      await queue.exclusive(piece(log, 'ann batch 2'));
    });
    const any = queue.forAny(piece(log, 'import naming its users'));
    await Promise.all([holder, any]);
    expect(log).toEqual([
      'ann batch 1:start',
      'ann batch 1:end',
      'ann batch 2:start',
      'ann batch 2:end',
      'import naming its users:start',
      'import naming its users:end',
    ]);
  });

  it('a second holder of the same context waits for the first; a failed holder releases its context', async () => {
    const queue = new WriteQueue();
    const log: string[] = [];
    const first = queue.holding('ann', async () => {
      await queue.exclusive(piece(log, 'first'));
      throw new Error('the import failed');
    });
    const second = queue.holding('ann', () => queue.exclusive(piece(log, 'second')));
    await expect(first).rejects.toThrow('the import failed');
    expect(await second).toBe('second');
    expect(log).toEqual(['first:start', 'first:end', 'second:start', 'second:end']);
    expect(await queue.forContext('ann', async () => 'free')).toBe('free');
    expect(queue.isHeld('ann')).toBe(false);
  });
});
