import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { write } from './store-conformance.ts';

afterAll(dropTestDatabases);
const BACKENDS: Array<[string, () => Promise<string>]> = [
  ['memory:', async () => 'memory:'],
  [':memory:', async () => ':memory:'],
];
if (PG_SKIP) console.warn(`[postgres batched lookups skipped] ${PG_SKIP}`);
else BACKENDS.push(['postgres', createTestDatabase]);

/** The batched reads (one statement per call in SQLite) keep the per-id semantics of every backend. */
describe.each(BACKENDS)('batched lookups (%s)', (_name, location) => {
  it('keep the order of ids, repeat repeated ids, skip unknown ones and stay within the context', async () => {
    const store = await openStore(await location());
    const ids = Array.from({ length: 1200 }, (_, i) => `m${i}`);
    await store.writeMemories(
      'ctx',
      ids.map((id, i) => write('ctx', id, `text of ${id}`, i)),
    );
    await store.writeMemories('other', [write('other', 'm1', 'foreign', 0)]);
    await store.replaceEdges(
      'ctx',
      ['consecutive_turn'],
      ids.slice(1).map((id, i) => ({
        contextId: 'ctx',
        a: ids[i]!,
        b: id,
        types: ['consecutive_turn'],
        strength: 0.9,
      })),
    );
    const asked = ['m5', 'zz', 'm3', 'm5', ...ids.slice(100, 1100).reverse()];
    expect((await store.getMemories('ctx', asked)).map((r) => r.id)).toEqual(
      asked.filter((id) => id !== 'zz'),
    );
    expect([...(await store.getContentHashes('ctx', asked)).keys()]).toEqual([
      ...new Set(asked.filter((id) => id !== 'zz')),
    ]);
    expect((await store.getViews('ctx', ['m3', 'm1', 'm3'])).map((v) => `${v.memoryId}:${v.kind}`)).toEqual([
      'm3:text',
      'm3:metadata',
      'm1:text',
      'm1:metadata',
      'm3:text',
      'm3:metadata',
    ]);
    expect((await store.getViews('ctx', ['m1']))[0]!.text).toBe('text of m1');
    const edges = await store.neighbors('ctx', ['m10', 'm11', 'm500']);
    expect(edges.map((e) => `${e.a}-${e.b}`)).toEqual([
      'm10-m11',
      'm10-m9',
      'm11-m12',
      'm499-m500',
      'm500-m501',
    ]);
    // Edges with both ends among the ids, in neighbors' order, each once (the other context's m1 is not read).
    const among = ['m500', 'm11', 'm10', 'm499', 'm12', 'm10', 'zz'];
    const expected = (await store.neighbors('ctx', among)).filter(
      (e) => among.includes(e.a) && among.includes(e.b),
    );
    expect((await store.edgesAmong!('ctx', among)).map((e) => `${e.a}-${e.b}`)).toEqual([
      'm10-m11',
      'm11-m12',
      'm499-m500',
    ]);
    expect(await store.edgesAmong!('ctx', among)).toEqual(expected);
    expect(await store.edgesAmong!('ctx', ['m10'])).toEqual([]);
    expect(await store.edgesAmong!('other', ['m0', 'm1'])).toEqual([]);
    expect(await store.getMemories('ctx', [])).toEqual([]);
    expect(await store.neighbors('ctx', [])).toEqual([]);
    await store.close();
  });
});

describe.each(['memory:', ':memory:'])('batched lookups after close (%s)', (path) => {
  it('throw STORE even for an empty id list', async () => {
    const store = await openStore(path);
    await store.close();
    await expect(store.getMemories('ctx', [])).rejects.toMatchObject({ code: 'STORE' });
    await expect(store.getViews('ctx', [])).rejects.toMatchObject({ code: 'STORE' });
    await expect(store.neighbors('ctx', [])).rejects.toMatchObject({ code: 'STORE' });
    await expect(store.getContentHashes('ctx', [])).rejects.toMatchObject({ code: 'STORE' });
  });
});
