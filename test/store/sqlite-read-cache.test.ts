import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { BoundedMap, generationGroup } from '../../src/store/bounded-map.ts';
import { sqliteReadWork } from '../../src/store/sqlite-read-cache.ts';
import { createSqliteStore } from '../../src/store/sqlite-store.ts';
import { write } from './store-conformance.ts';

/**
 * The SQLite read cache (edge lists by memory: src/store/sqlite-read-cache.ts) answers warm reads without
 * statements, and never from a state the file has left: writes by another connection, by this one, and reads
 * inside a unit of work that rolls back are all seen exactly as a fresh connection sees them. Records ride
 * along in the comparisons (they are read through the same connection between the edge reads).
 */
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-readcache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ids = Array.from({ length: 12 }, (_, i) => `m${i}`);

async function seed(store: ArchiveStore): Promise<void> {
  await store.writeMemories(
    'ctx',
    ids.map((id, i) => write('ctx', id, `note ${i} about the river`, i)),
  );
  // A chain m0-m1-...-m11 plus a few chords.
  await store.changeEdges('ctx', [
    ...ids.slice(1).map((id, i) => ({ a: ids[i]!, b: id, add: ['consecutive_turn' as const] })),
    { a: 'm0', b: 'm5', add: ['event_bridge' as const] },
    { a: 'm2', b: 'm9', add: ['semantic_knn' as const], similarity: 0.5 },
  ]);
}

/** What every cached read returns, for comparison with a fresh connection's. */
async function reads(store: ArchiveStore) {
  return {
    neighbors: await store.neighbors('ctx', ['m0', 'm2', 'm5', 'm11']),
    among: await store.edgesAmong!('ctx', ['m0', 'm1', 'm2', 'm5', 'm9', 'm10']),
    records: await store.getMemories('ctx', ['m1', 'm5', 'm7', 'gone']),
  };
}

describe('SQLite read cache', () => {
  it('answers warm reads without statements', async () => {
    const file = join(dir, 'warm.db');
    const store = createSqliteStore(file);
    await seed(store);
    const cold = await reads(store);
    const before = { ...sqliteReadWork };
    const warm = await reads(store);
    expect(warm).toEqual(cold);
    // neighbors is answered from the lists, and so is edgesAmong: its cold read kept the complete lists of
    // m1, m9 and m10 (the ids no earlier read had cached).
    expect(sqliteReadWork.edgeStatements - before.edgeStatements).toBe(0);
    // Those lists are complete: neighbors of them needs no statement and equals a fresh connection's.
    const listed = await store.neighbors('ctx', ['m1', 'm9', 'm10']);
    expect(sqliteReadWork.edgeStatements - before.edgeStatements).toBe(0);
    // edgesAmong over ids whose lists are all cached needs no statement either, and equals the statement.
    const fresh = createSqliteStore(file);
    expect(await store.edgesAmong!('ctx', ['m0', 'm2', 'm5', 'm11'])).toEqual(
      await fresh.edgesAmong!('ctx', ['m0', 'm2', 'm5', 'm11']),
    );
    expect(listed).toEqual(await fresh.neighbors('ctx', ['m1', 'm9', 'm10']));
    await fresh.close();
    // Callers may mutate what they get: the next read is unaffected.
    warm.neighbors[0]!.types.push('supersedes');
    warm.records[0]!.text = 'changed by the caller';
    expect(await reads(store)).toEqual(cold);
    await store.close();
  });

  it('sees writes of another connection, of this one, and forgets reads of a rolled-back unit', async () => {
    const file = join(dir, 'shared.db');
    const reader = createSqliteStore(file);
    const writer = createSqliteStore(file);
    await seed(writer);
    let step = 0;
    const check = async () => {
      step++;
      const got = await reads(reader);
      const fresh = createSqliteStore(file);
      expect(got, `step ${step}`).toEqual(await reads(fresh));
      await fresh.close();
      return got;
    };
    await check();
    await check();
    // Another connection changes edges and a record.
    await writer.changeEdges('ctx', [
      { a: 'm0', b: 'm1', remove: ['consecutive_turn'] },
      { a: 'm5', b: 'm11', add: ['same_round'] },
    ]);
    const afterEdges = await check();
    expect(afterEdges.neighbors.some((e) => e.a === 'm0' && e.b === 'm1')).toBe(false);
    await writer.writeMemories('ctx', [write('ctx', 'm5', 'note 5, revised', 5)]);
    expect((await check()).records.find((r) => r.id === 'm5')?.text).toBe('note 5, revised');
    await writer.deleteMemory('ctx', 'm2');
    await check();
    // This connection writes (data_version does not move for its own commits).
    await reader.changeEdges('ctx', [{ a: 'm1', b: 'm10', add: ['event_bridge'] }]);
    await check();
    await reader.writeMemories('ctx', [write('ctx', 'm7', 'note 7, revised here', 7)]);
    expect((await check()).records.find((r) => r.id === 'm7')?.text).toBe('note 7, revised here');
    // A unit of work that reads its own uncommitted edge, then rolls back.
    await expect(
      reader.unitOfWork!('ctx', async () => {
        await reader.changeEdges('ctx', [{ a: 'm0', b: 'm11', add: ['event_bridge'] }]);
        expect((await reader.neighbors('ctx', ['m0'])).some((e) => e.b === 'm11')).toBe(true);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await check()).neighbors.some((e) => e.a === 'm0' && e.b === 'm11')).toBe(false);
    await reader.close();
    await writer.close();
  });

  it('stays within its byte budget, oldest entries first, across groups', () => {
    const map = new BoundedMap<string>(64 * 100, (value) => value.length);
    for (let i = 0; i < 1000; i++) map.set(`g${i % 3}`, `k${i}`, 'x'.repeat(60));
    expect(map.size).toBeLessThan(100);
    expect(map.size).toBeGreaterThan(70);
    expect(map.get('g0', 'k0')).toBeUndefined();
    expect(map.get('g0', 'k999')).toBe('x'.repeat(60));
    expect(map.group('g1')?.get('k997')?.value).toBe('x'.repeat(60));
    // The kept entries are exactly the newest `size` ones (insertion order, whatever their group).
    const kept = Array.from({ length: 1000 }, (_, i) => map.get(`g${i % 3}`, `k${i}`) !== undefined);
    expect(kept.indexOf(true)).toBe(1000 - map.size);
    expect(kept.slice(1000 - map.size).every(Boolean)).toBe(true);
    map.clear();
    expect(map.size).toBe(0);
    expect(map.group('g0')).toBeUndefined();
  });

  it('keeps groups apart and the first value of an item', () => {
    const map = new BoundedMap<string>(1 << 20, (value) => value.length);
    map.set('ab', 'c', 'first');
    map.set('a', 'bc', 'other');
    map.set('ab', 'c', 'second');
    expect(map.get('ab', 'c')).toBe('first');
    expect(map.get('a', 'bc')).toBe('other');
    expect(map.get('abc', '')).toBeUndefined();
    expect(map.size).toBe(2);
  });

  it('names a generation and a context unambiguously', () => {
    expect(generationGroup('1:2', 'c')).toBe('3:1:21:c');
    expect(generationGroup('1', ':2c')).toBe('1:13::2c');
    expect(generationGroup('', 'x')).toBe('0:1:x');
    expect(generationGroup('ab', 'c')).not.toBe(generationGroup('a', 'bc'));
  });
});
