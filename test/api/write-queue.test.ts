import { describe, expect, it } from 'vitest';
import { FairWaiting, type WriteLanes } from '../../src/graphmemix-write-lanes.ts';
import { WriteQueue } from '../../src/graphmemix-write-queue.ts';

/** A piece of work that logs its start and end around one turn of the event loop. */
const piece = (log: string[], name: string) => async () => {
  log.push(`${name}:start`);
  await new Promise((resolve) => setImmediate(resolve));
  log.push(`${name}:end`);
  return name;
};

/** Writes that log their name when they start and take `ms`. */
const logged = (started: string[], ms: number) => (name: string) => async () => {
  started.push(name);
  await new Promise((resolve) => setTimeout(resolve, ms));
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

describe('WriteQueue, one lane per context (a store whose users write side by side)', () => {
  it("runs different contexts' writes side by side, each context's in call order", async () => {
    const queue = new WriteQueue({ perContext: true });
    const log: string[] = [];
    await Promise.all([
      queue.forContext('ann', piece(log, 'ann 1')),
      queue.forContext('bob', piece(log, 'bob 1')),
      queue.forContext('ann', piece(log, 'ann 2')),
    ]);
    // bob's write starts before ann's first has ended; ann's second waits for her first.
    expect(log.indexOf('bob 1:start')).toBeLessThan(log.indexOf('ann 1:end'));
    expect(log.indexOf('ann 2:start')).toBeGreaterThan(log.indexOf('ann 1:end'));
    expect(queue.perContext).toBe(true);
  });

  it('a write of any context waits for every lane, and every later write waits for it', async () => {
    const queue = new WriteQueue({ perContext: true });
    const log: string[] = [];
    const before = [
      queue.forContext('ann', piece(log, 'ann 1')),
      queue.forContext('bob', piece(log, 'bob 1')),
    ];
    const any = queue.exclusive(piece(log, 'any'));
    const after = [
      queue.forContext('ann', piece(log, 'ann 2')),
      queue.forContext('cat', piece(log, 'cat 1')),
    ];
    await Promise.all([...before, any, ...after]);
    const at = (entry: string) => log.indexOf(entry);
    expect(at('any:start')).toBeGreaterThan(Math.max(at('ann 1:end'), at('bob 1:end')));
    expect(Math.min(at('ann 2:start'), at('cat 1:start'))).toBeGreaterThan(at('any:end'));
  });

  it("a holder's pieces go in its own lane: another context's write runs during a piece", async () => {
    const queue = new WriteQueue({ perContext: true });
    const log: string[] = [];
    let other: Promise<string> | undefined;
    let same: Promise<string> | undefined;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holder = queue.holding('ann', async () => {
      await queue.turn('ann', async () => {
        log.push('ann piece:start');
        other = queue.forContext('bob', piece(log, 'bob add'));
        same = queue.forContext('ann', piece(log, 'ann add'));
        await other; // bob does not wait for ann's piece to end
        await gate;
        log.push('ann piece:end');
      });
      return 'import';
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    release();
    expect(await holder).toBe('import');
    await same;
    expect(log).toEqual([
      'ann piece:start',
      'bob add:start',
      'bob add:end',
      'ann piece:end',
      'ann add:start',
      'ann add:end',
    ]);
  });

  it('a failed write does not stop its lane; settled lanes are not kept', async () => {
    const queue = new WriteQueue({ perContext: true });
    const failed = queue.forContext('ann', async () => {
      throw new Error('bad record');
    });
    const next = queue.forContext('ann', async () => 'next');
    await expect(failed).rejects.toThrow('bad record');
    expect(await next).toBe('next');
    await new Promise((resolve) => setImmediate(resolve));
    expect((queue as unknown as { lanes: WriteLanes }).lanes.openLanes).toBe(0);
  });

  it('runs at most `parallel` contexts at once, the others in call order', async () => {
    const queue = new WriteQueue({ perContext: true, parallel: 2 });
    let now = 0;
    let most = 0;
    const started: string[] = [];
    const write = (name: string) => async () => {
      started.push(name);
      most = Math.max(most, ++now);
      await new Promise((resolve) => setTimeout(resolve, 5));
      now--;
    };
    const users = ['a', 'b', 'c', 'd', 'e', 'f'];
    await Promise.all(users.map((user) => queue.forContext(user, write(user))));
    expect(most).toBe(2);
    expect(started).toEqual(users);
  });

  it("waiting writes of different askers take turns; each asker's in call order", async () => {
    // One write at a time, one lane per user: a single-writer store (SQLite).
    const queue = new WriteQueue({ perContext: true, parallel: 1 });
    const started: string[] = [];
    const write = logged(started, 2);
    // A key bound to many users writes to six of them at once; two other keys write once each after it.
    const flood = ['u0', 'u1', 'u2', 'u3', 'u4', 'u5'].map((user) =>
      queue.forContext(user, write(`many:${user}`), { asker: 'many' }),
    );
    const others = [
      queue.forContext('zed', write('one:zed'), { asker: 'one' }),
      queue.forContext('yan', write('two:yan'), { asker: 'two' }),
      queue.forContext('zed', write('one:zed again'), { asker: 'one' }),
    ];
    await Promise.all([...flood, ...others]);
    expect(started).toEqual([
      'many:u0',
      'one:zed',
      'two:yan',
      'many:u1',
      // zed's second write follows its first in zed's lane: it waits for it, then for its asker's turn.
      'one:zed again',
      'many:u2',
      'many:u3',
      'many:u4',
      'many:u5',
    ]);
  });

  it('background turns wait behind waiting writes, one after every four of them, and take idle slots', async () => {
    const queue = new WriteQueue({ perContext: true, parallel: 1 });
    const started: string[] = [];
    const write = logged(started, 1);
    const calm = { urgent: () => false };
    const turns = [
      ...['b1', 'b2', 'b3'].map((name) => queue.forContext(name, write(name), { background: calm })),
      ...['f1', 'f2', 'f3', 'f4', 'f5', 'f6'].map((name) => queue.forContext(name, write(name))),
    ];
    await Promise.all(turns);
    expect(started).toEqual(['f1', 'f2', 'f3', 'f4', 'b1', 'f5', 'f6', 'b2', 'b3']);
  });

  it('an urgent background turn goes before every waiting write', async () => {
    const queue = new WriteQueue({ perContext: true, parallel: 1 });
    const started: string[] = [];
    let held = false;
    const write = (name: string) => async () => {
      started.push(name);
      // The run's user is held from the first write on: its waiting step is urgent from then.
      held = true;
      await new Promise((resolve) => setTimeout(resolve, 1));
    };
    const turns = [
      queue.forContext('f1', write('f1')),
      queue.forContext('f2', write('f2')),
      queue.forContext('f3', write('f3')),
      queue.forContext('run', write('step'), { background: { urgent: () => held } }),
    ];
    await Promise.all(turns);
    expect(started).toEqual(['f1', 'step', 'f2', 'f3']);
  });

  it('one line for all writes (one writer connection) keeps call order for background turns too', async () => {
    const queue = new WriteQueue();
    const started: string[] = [];
    const write = logged(started, 1);
    await Promise.all([
      queue.forContext('b', write('b'), { background: { urgent: () => false } }),
      queue.forContext('f', write('f')),
    ]);
    expect(started).toEqual(['b', 'f']);
  });

  it('writes without an asker keep call order (one shared asker)', async () => {
    const queue = new WriteQueue({ perContext: true, parallel: 1 });
    const started: string[] = [];
    const write = logged(started, 1);
    const users = ['a', 'b', 'c', 'd'];
    await Promise.all(users.map((user) => queue.forContext(user, write(user))));
    expect(started).toEqual(users);
  });
});

describe('FairWaiting', () => {
  it('remembers a bounded number of askers, whatever lanes a caller invents', () => {
    const waiting = new FairWaiting();
    for (let n = 0; n < 5000; n++) {
      waiting.push(`lane-${n}`, () => {});
      waiting.shift()!();
    }
    const remembered = (waiting as unknown as { servedAt: Map<string, number> }).servedAt.size;
    expect(remembered).toBeLessThanOrEqual(1024);
    // Still fair: an asker served long ago (forgotten) or never goes before one served just now.
    const order: string[] = [];
    waiting.push('lane-4999', () => order.push('recent'));
    waiting.push('lane-0', () => order.push('forgotten'));
    waiting.push('brand-new', () => order.push('new'));
    while (waiting.size > 0) waiting.shift()!();
    expect(order).toEqual(['forgotten', 'new', 'recent']);
  });
});
