import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  COLLECT_GROWTH_BYTES,
  collectGarbage,
  collectGarbageIfGrown,
  garbageCollectionStats,
} from '../../src/digest/collect-garbage.ts';

/** The target of a WeakRef made in another job: a collection may clear it (none may within the job that made it). */
function unreachable(): WeakRef<object> {
  return new WeakRef({ payload: new Array<number>(10_000).fill(7) });
}

describe('collectGarbage', () => {
  it('runs a full collection now: an unreachable object is gone when it returns', async () => {
    const ref = unreachable();
    await new Promise((resolve) => setImmediate(resolve));
    // A deref keeps the target to the end of its job too: the next collection is in a later one.
    expect(ref.deref()).toBeDefined();
    await new Promise((resolve) => setImmediate(resolve));
    expect(collectGarbage()).toBe(true);
    expect(ref.deref()).toBeUndefined();
  });

  it('counts its collections and their time', () => {
    const before = garbageCollectionStats();
    collectGarbage();
    collectGarbage();
    const after = garbageCollectionStats();
    expect(after.collections - before.collections).toBe(2);
    expect(after.seconds).toBeGreaterThan(before.seconds);
  });

  it('collects when grown: not right after a collection, once the used heap grew by COLLECT_GROWTH_BYTES', () => {
    collectGarbage();
    const before = garbageCollectionStats().collections;
    expect(collectGarbageIfGrown()).toBe(false);
    // Live doubles, 4 MB an array, a little more than the growth in all.
    const arrays = Math.ceil(COLLECT_GROWTH_BYTES / 4_000_000) + 4;
    const kept = Array.from({ length: arrays }, () => new Array<number>(500_000).fill(1.5));
    expect(collectGarbageIfGrown()).toBe(true);
    expect(collectGarbageIfGrown()).toBe(false);
    expect(garbageCollectionStats().collections - before).toBe(1);
    expect(kept).toHaveLength(arrays);
  });

  it.skipIf(process.execArgv.includes('--expose-gc'))(
    'gives neither this global object nor contexts made later a `gc`',
    () => {
      collectGarbage();
      expect('gc' in globalThis).toBe(false);
      expect(runInNewContext('typeof gc')).toBe('undefined');
    },
  );
});
