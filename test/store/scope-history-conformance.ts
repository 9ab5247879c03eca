import { expect, it } from 'vitest';
import { MAX_QUERY_TERMS } from '../../src/retrieval/bm25-index.ts';
import type { ArchiveStore, MemoryFilter, MemoryWrite } from '../../src/store/archive-store-spec.ts';
import { recordMatches } from '../../src/store/memory-scope-tags.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';

/**
 * Conformance of the history and scope methods (memoryVersions, filtered listMemories, matchMemories,
 * searches restricted to memoryIds). Called from describeStoreConformance, so every backend runs it.
 */
export function scopeHistoryConformance(
  store: () => ArchiveStore,
  write: (contextId: string, id: string, text: string, sequence: number) => MemoryWrite,
): void {
  const scoped = (id: string, text: string, sequence: number, extra: Partial<MemoryRecord>): MemoryWrite => {
    const base = write('ctx', id, text, sequence);
    return {
      ...base,
      record: { ...base.record, ...extra },
      contentHash: `${base.contentHash}-${JSON.stringify(extra)}`,
    };
  };

  it('keeps every replaced version oldest first, and forgets them with the memory', async () => {
    const s = store();
    await s.writeMemories('ctx', [
      scoped('m1', 'appointment on monday', 0, { recordedAt: '2024-01-01T00:00:00Z' }),
    ]);
    await s.writeMemories('ctx', [
      scoped('m1', 'appointment on tuesday', 0, { recordedAt: '2024-01-02T00:00:00Z' }),
    ]);
    // Unchanged content adds no version.
    await s.writeMemories('ctx', [
      scoped('m1', 'appointment on tuesday', 0, { recordedAt: '2024-01-02T00:00:00Z' }),
    ]);
    await s.writeMemories('ctx', [
      scoped('m1', 'appointment on friday', 0, { recordedAt: '2024-01-03T00:00:00Z' }),
    ]);
    const versions = await s.memoryVersions('ctx', 'm1');
    expect(versions.map((v) => [v.version, v.record.text, v.record.recordedAt])).toEqual([
      [1, 'appointment on monday', '2024-01-01T00:00:00Z'],
      [2, 'appointment on tuesday', '2024-01-02T00:00:00Z'],
    ]);
    expect((await s.getMemory('ctx', 'm1'))?.text).toBe('appointment on friday');
    expect(await s.memoryVersions('ctx', 'nope')).toEqual([]);
    expect(await s.memoryVersions('other', 'm1')).toEqual([]);
    await s.deleteMemory('ctx', 'm1');
    expect(await s.memoryVersions('ctx', 'm1')).toEqual([]);
    // Re-created under the same id: a fresh history.
    await s.writeMemories('ctx', [scoped('m1', 'new life', 0, {})]);
    expect(await s.memoryVersions('ctx', 'm1')).toEqual([]);
    await s.writeMemories('ctx', [scoped('m1', 'new life 2', 0, {})]);
    expect(await s.memoryVersions('ctx', 'm1')).toHaveLength(1);
    await s.deleteContext('ctx');
    expect(await s.memoryVersions('ctx', 'm1')).toEqual([]);
  });

  it('reads windows of the versions: after a version, at most a limit, or the newest first', async () => {
    const s = store();
    for (let v = 0; v <= 6; v++) await s.writeMemories('ctx', [scoped('m1', `text ${v}`, 0, {})]);
    const all = await s.memoryVersions('ctx', 'm1');
    expect(all.map((v) => [v.version, v.record.text])).toEqual(
      [0, 1, 2, 3, 4, 5].map((v) => [v + 1, `text ${v}`]),
    );
    const numbers = async (window: { afterVersion?: number; limit?: number; newest?: boolean }) =>
      (await s.memoryVersions('ctx', 'm1', window)).map((v) => v.version);
    expect(await numbers({ limit: 2 })).toEqual([1, 2]);
    expect(await numbers({ afterVersion: 2, limit: 3 })).toEqual([3, 4, 5]);
    expect(await numbers({ afterVersion: 5 })).toEqual([6]);
    expect(await numbers({ afterVersion: 6, limit: 5 })).toEqual([]);
    expect(await numbers({ afterVersion: 60 })).toEqual([]);
    expect(await numbers({ newest: true, limit: 1 })).toEqual([6]);
    expect(await numbers({ newest: true, limit: 3 })).toEqual([6, 5, 4]);
    expect(await numbers({ newest: true })).toEqual([6, 5, 4, 3, 2, 1]);
    expect((await s.memoryVersions('ctx', 'm1', { afterVersion: 3, limit: 1 }))[0]?.record.text).toBe(
      'text 3',
    );
    expect(await numbers({ limit: 0 })).toEqual([]);
    expect(await s.memoryVersions('ctx', 'nope', { newest: true, limit: 1 })).toEqual([]);
  });

  it('filters by agent, run, metadata scalars and event time, with keyset pages', async () => {
    const s = store();
    await s.writeMemories('ctx', [
      scoped('a', 'alpha note', 0, {
        agentId: 'bot',
        runId: 'r1',
        timestamp: '2024-03-01',
        metadata: { topic: 'work', n: 1 },
      }),
      scoped('b', 'beta note', 1, {
        agentId: 'bot',
        runId: 'r2',
        timestamp: '2024-03-05T10:00:00Z',
        metadata: { topic: 'home' },
      }),
      scoped('c', 'gamma note', 2, {
        agentId: 'other',
        runId: 'r1',
        timestamp: '2024-04-01',
        metadata: { topic: 'work', n: '1' },
      }),
      scoped('d', 'delta note', 3, { metadata: { topic: 'work', long: 'x'.repeat(300) } }),
    ]);
    await s.writeMemories('elsewhere', [{ ...write('elsewhere', 'a', 'alpha note', 0) }]);
    const ids = async (filter: Parameters<ArchiveStore['matchMemories']>[1]) =>
      (await s.listFiltered('ctx', filter)).items.map((r) => r.id);
    expect(await ids({ agentId: 'bot' })).toEqual(['a', 'b']);
    expect(await ids({ runId: 'r1' })).toEqual(['a', 'c']);
    expect(await ids({ agentId: 'bot', runId: 'r1' })).toEqual(['a']);
    expect(await ids({ metadata: { topic: 'work' } })).toEqual(['a', 'c', 'd']);
    // JSON type matters: 1 and "1" differ.
    expect(await ids({ metadata: { n: 1 } })).toEqual(['a']);
    expect(await ids({ metadata: { n: '1' } })).toEqual(['c']);
    // Long values are content, not scopes: not indexed, so no filter matches them.
    expect(await ids({ metadata: { long: 'x'.repeat(300) } })).toEqual([]);
    // Event time: inclusive; a date-only `to` covers that whole day; untimed memories fail any bound.
    expect(await ids({ from: '2024-03-01', to: '2024-03-05' })).toEqual(['a', 'b']);
    expect(await ids({ from: '2024-03-02' })).toEqual(['b', 'c']);
    expect(await ids({ to: '2024-03-04' })).toEqual(['a']);
    expect(await ids({})).toEqual(['a', 'b', 'c', 'd']);
    // Keyset pages of a filtered list.
    const first = await s.listFiltered('ctx', { metadata: { topic: 'work' } }, { limit: 2 });
    expect(first).toEqual({
      items: [expect.objectContaining({ id: 'a' }), expect.objectContaining({ id: 'c' })],
    });
    const last = first.items[first.items.length - 1]!;
    const next = await s.listFiltered(
      'ctx',
      { metadata: { topic: 'work' } },
      { afterSequence: last.sequence, afterId: last.id, limit: 2 },
    );
    expect(next.items.map((r) => r.id)).toEqual(['d']);
    expect(next.stoppedAfter).toBeUndefined();
    // matchMemories: a subset of given ids; matchFiltered: the first `limit`.
    expect(await s.matchMemories('ctx', { agentId: 'bot' }, { ids: ['c', 'b', 'zz', 'a'] })).toEqual(
      expect.arrayContaining(['a', 'b']),
    );
    expect((await s.matchMemories('ctx', { agentId: 'bot' }, { ids: ['c', 'b', 'zz', 'a'] })).length).toBe(2);
    expect(await s.matchFiltered('ctx', { metadata: { topic: 'work' } }, { limit: 2 })).toEqual({
      items: ['a', 'c'],
    });
    expect(await s.matchFiltered('nowhere', {}, { limit: 2 })).toEqual({ items: [] });
    for (const filter of [{}, { agentId: 'bot' }, { from: '2024-03-01' }, { agentId: 'bot', runId: 'r1' }]) {
      expect(await s.matchFiltered('ctx', filter, { limit: 0 }), JSON.stringify(filter)).toEqual({
        items: [],
      });
    }
    // An update moves the memory's scopes: the old tag no longer selects it.
    await s.writeMemories('ctx', [
      scoped('a', 'alpha note', 0, { agentId: 'other', runId: 'r1', timestamp: '2024-03-01' }),
    ]);
    expect(await ids({ agentId: 'bot' })).toEqual(['b']);
    expect(await ids({ agentId: 'other' })).toEqual(['a', 'c']);
    expect(await ids({ metadata: { n: 1 } })).toEqual([]);
  });

  // 4,400 memories, two per sequence number (pages order by (sequence, id)). `late` is held by the last 4,150 in
  // the order (more than FILTER_DRIVEN_BELOW: no count tells it apart from a tag on everything), `common` by 6 in
  // 7 (fewer), `rare` by three near the end, `gone` by none; timestamps advance one day per 100 memories, so a
  // day is a window few memories hold and a year one that many do. Whatever drives a page (a tag's rows in
  // order, a small window sorted, the memories' order), every combination and keyset page must give the set
  // and order the filter means; an update that moves a memory's sequence moves its tags with it.
  it('compares event times with offsets as instants: a window in UTC takes the memories whose instant is in it', async () => {
    const s = store();
    await s.writeMemories('ctx', [
      // 2024-05-02T04:00Z: in a UTC May 2 window, though its local date is May 1.
      scoped('east', 'mail from chicago', 0, { timestamp: '2024-05-01T23:00:00-05:00' }),
      // 2024-04-30T23:00Z: out of May 1 in UTC, though its local date is May 1.
      scoped('west', 'mail from tokyo', 1, { timestamp: '2024-05-01T08:00:00+09:00' }),
      scoped('zulu', 'plain note', 2, { timestamp: '2024-05-01T12:00:00Z' }),
    ]);
    const ids = async (filter: Parameters<ArchiveStore['matchMemories']>[1]) =>
      (await s.listFiltered('ctx', filter)).items.map((r) => r.id);
    expect(await ids({ from: '2024-05-02', to: '2024-05-02' })).toEqual(['east']);
    expect(await ids({ from: '2024-05-01', to: '2024-05-01' })).toEqual(['zulu']);
    expect(await ids({ to: '2024-04-30T23:30:00Z' })).toEqual(['west']);
    // Bounds with an offset are instants too: 2024-05-01T13:00+01:00 is 12:00Z.
    expect(await ids({ from: '2024-05-01T13:00:00+01:00', to: '2024-05-01T13:00:00+01:00' })).toEqual([
      'zulu',
    ]);
    // The records keep the time as written.
    expect((await s.getMemory('ctx', 'east'))?.timestamp).toBe('2024-05-01T23:00:00-05:00');
  });

  it('lists late, common and rare tags, windows and their combinations, in (sequence, id) pages', async () => {
    const s = store();
    const n = 4400;
    const name = (i: number) => `m${String(i).padStart(5, '0')}`;
    const day = (i: number) =>
      new Date(Date.UTC(2024, 0, 1 + Math.floor(i / 100))).toISOString().slice(0, 10);
    // The sequence is in the text: the test's content hash is made from the text.
    const recordOf = (i: number, sequence: number): MemoryWrite =>
      scoped(name(i), `note ${i} at ${sequence}`, sequence, {
        ...(i % 7 === 0 ? {} : { agentId: 'common' }),
        ...(i >= n - 30 && i % 10 === 3 ? { runId: 'rare' } : {}),
        metadata: { ...(i >= n - 4150 ? { late: true } : {}), ...(i % 2 ? { odd: true } : { even: true }) },
        timestamp: day(i),
      });
    const records = Array.from({ length: n }, (_, i) => recordOf(i, Math.floor(i / 2)));
    // Written newest first in batches: storage order is not the page order.
    for (let at = n; at > 0; at -= 500)
      await s.writeMemories('ctx', records.slice(Math.max(0, at - 500), at));
    // One early memory moves to the end of the order, one late one to the start (updates of sequence).
    records[5] = recordOf(5, n);
    records[n - 2] = recordOf(n - 2, -1);
    await s.writeMemories('ctx', [records[5]!, records[n - 2]!]);
    const want = (filter: MemoryFilter): string[] =>
      records
        .map((w) => w.record)
        .filter((record) => recordMatches(record, filter))
        .sort((x, y) => x.sequence - y.sequence || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
        .map((record) => record.id);
    type Position = { sequence: number; id: string };
    const compare = (x: Position, y: Position) =>
      x.sequence - y.sequence || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
    // Every page of the filter, by cursor: after a full page's last memory, or where a page stopped on its work
    // bound (every memory it holds is at or before that position, which is past the page's own start).
    const walk = async (filter: MemoryFilter, limit: number, work?: number) => {
      const out: string[] = [];
      let stops = 0;
      let after: Position | undefined;
      for (;;) {
        const page = await s.listFiltered('ctx', filter, {
          limit,
          ...(work === undefined ? {} : { work }),
          ...(after ? { afterSequence: after.sequence, afterId: after.id } : {}),
        });
        expect(page.items.length).toBeLessThanOrEqual(limit);
        out.push(...page.items.map((r) => r.id));
        if (page.stoppedAfter) {
          stops++;
          expect(page.items.length).toBeLessThan(limit);
          if (after) expect(compare(page.stoppedAfter, after)).toBeGreaterThan(0);
          for (const r of page.items) expect(compare(r, page.stoppedAfter)).toBeLessThanOrEqual(0);
          after = page.stoppedAfter;
        } else if (page.items.length < limit) return { ids: out, stops };
        else after = page.items[page.items.length - 1];
      }
    };
    const pages = async (filter: MemoryFilter, limit: number) => {
      const { ids, stops } = await walk(filter, limit);
      // 4,400 memories are well within a page's work bound: no page stops.
      expect(stops).toBe(0);
      return ids;
    };
    const filters: MemoryFilter[] = [
      { metadata: { late: true } },
      { agentId: 'common' },
      { runId: 'rare' },
      { agentId: 'gone' },
      { agentId: 'common', metadata: { late: true } },
      { runId: 'rare', metadata: { late: true } },
      { agentId: 'common', runId: 'rare' },
      { agentId: 'gone', metadata: { late: true } },
      { metadata: { late: true }, from: day(n - 150), to: day(n - 150) },
      { metadata: { late: true }, from: day(0) },
      { agentId: 'common', to: day(400) },
      { agentId: 'common', metadata: { late: true }, from: day(2000), to: day(2300) },
      { runId: 'rare', from: day(n - 10) },
      { from: day(1000), to: day(1099) },
      { from: day(200) },
      // Finely interleaved: every second memory each (the empty one is an intersection's worst case).
      { agentId: 'common', metadata: { odd: true } },
      { metadata: { even: true, odd: true } },
      { metadata: { late: true, even: true }, from: day(3000) },
    ];
    for (const filter of filters) {
      const expected = want(filter);
      expect(await pages(filter, 1000), JSON.stringify(filter)).toEqual(expected);
      if (expected.length < 1500) expect(await pages(filter, 7), JSON.stringify(filter)).toEqual(expected);
      expect((await s.matchFiltered('ctx', filter, { limit: 3 })).items, JSON.stringify(filter)).toEqual(
        expected.slice(0, 3),
      );
      // Under a small work bound pages stop early and go on from where they stopped: the same memories.
      expect((await walk(filter, 50, 64)).ids, JSON.stringify(filter)).toEqual(expected);
    }
    // No index answers an empty interleaved intersection: every backend stops on the bound and goes on.
    const empty = await walk({ metadata: { even: true, odd: true } }, 50, 64);
    expect(empty.ids).toEqual([]);
    expect(empty.stops).toBeGreaterThan(10);
    const stopped = await s.matchFiltered(
      'ctx',
      { metadata: { even: true, odd: true } },
      { limit: 3, work: 64 },
    );
    expect(stopped.items).toEqual([]);
    expect(stopped.stoppedAfter).toBeDefined();
    // The moved memories: first and last of the late tag's order.
    const late = await pages({ metadata: { late: true } }, 1000);
    expect(late[0]).toBe(name(n - 2));
    expect(
      (await s.listFiltered('ctx', { agentId: 'common' }, { limit: 1, afterSequence: n - 1 })).items,
    ).toEqual([records[5]!.record]);
    // A keyset position given by sequence alone.
    const sequenceOf = new Map(records.map((w) => [w.record.id, w.record.sequence]));
    expect(
      (
        await s.listFiltered('ctx', { metadata: { late: true } }, { afterSequence: 2190, limit: 4 })
      ).items.map((r) => r.id),
    ).toEqual(
      want({ metadata: { late: true } })
        .filter((id) => sequenceOf.get(id)! > 2190)
        .slice(0, 4),
    );
  });

  it('keeps per-kind counts and the last write time of a context', async () => {
    const s = store();
    expect(await s.contextStats('ctx')).toBeUndefined();
    const before = new Date().toISOString();
    await s.writeMemories('ctx', [
      write('ctx', 'a', 'one', 0),
      scoped('b', 'two', 1, { kind: 'note' }),
      scoped('c', 'three', 2, { kind: 'note' }),
    ]);
    const stats = await s.contextStats('ctx');
    expect(stats).toMatchObject({ memories: 3, byKind: { message: 1, note: 2 } });
    expect(stats!.lastWrite! >= before).toBe(true);
    // An update that changes the kind moves the count; a delete drops it.
    await s.writeMemories('ctx', [scoped('a', 'one', 0, { kind: 'note' })]);
    await s.deleteMemory('ctx', 'b');
    expect((await s.contextStats('ctx'))?.byKind).toEqual({ note: 2 });
    await s.deleteContext('ctx');
    expect(await s.contextStats('ctx')).toBeUndefined();
  });

  it('searches the first MAX_QUERY_TERMS distinct terms of a longer query, the same on every backend', async () => {
    const s = store();
    // Numbers are terms of their own (no stopword, no plural folding).
    const words = Array.from({ length: MAX_QUERY_TERMS + 6 }, (_, i) => String(1000 + i));
    await s.writeMemories('ctx', [
      write('ctx', 'early', `note ${words[3]}`, 0),
      write('ctx', 'late', `note ${words[MAX_QUERY_TERMS + 2]}`, 1),
      write('ctx', 'last-kept', `note ${words[MAX_QUERY_TERMS - 1]}`, 2),
    ]);
    // Repeats before the cut do not use it up: terms are distinct.
    const long = [words[0], words[0], ...words].join(' ');
    const hits = await s.searchLexical('ctx', long, { limit: 10, kinds: ['text'] });
    expect(hits.map((h) => h.memoryId).sort()).toEqual(['early', 'last-kept']);
    const firstTerms = await s.searchLexical('ctx', words.slice(0, MAX_QUERY_TERMS).join(' '), {
      limit: 10,
      kinds: ['text'],
    });
    expect(hits).toEqual(firstTerms);
  });

  it('searches only the given memories, with the unrestricted scores', async () => {
    const s = store();
    await s.writeMemories('ctx', [
      write('ctx', 'a', 'red bicycle by the river', 0),
      write('ctx', 'b', 'red car in the garage', 1),
      write('ctx', 'c', 'blue bicycle', 2),
      write('ctx', 'd', 'nothing here', 3),
    ]);
    const all = await s.searchLexical('ctx', 'red bicycle', { limit: 10, kinds: ['text'] });
    const some = await s.searchLexical('ctx', 'red bicycle', {
      limit: 10,
      kinds: ['text'],
      memoryIds: ['b', 'c', 'd'],
    });
    expect(some.map((h) => h.memoryId)).toEqual(all.filter((h) => h.memoryId !== 'a').map((h) => h.memoryId));
    for (const hit of some) {
      expect(hit.rawScore).toBeCloseTo(all.find((h) => h.memoryId === hit.memoryId)!.rawScore, 12);
    }
    expect(await s.searchLexical('ctx', 'red', { limit: 1, kinds: ['text'], memoryIds: ['b'] })).toHaveLength(
      1,
    );
    expect(await s.searchLexical('ctx', 'red', { limit: 10, memoryIds: [] })).toEqual([]);
    await s.putVectors('ctx', 'space', [
      { memoryId: 'a', kind: 'text', key: 'main', vector: new Float32Array([1, 0]) },
      { memoryId: 'b', kind: 'text', key: 'main', vector: new Float32Array([0.9, 0.1]) },
      { memoryId: 'c', kind: 'text', key: 'main', vector: new Float32Array([0, 1]) },
    ]);
    const near = await s.searchVectors('ctx', 'space', new Float32Array([1, 0]), {
      limit: 5,
      memoryIds: ['b', 'c'],
    });
    expect(near.map((h) => h.memoryId)).toEqual(['b', 'c']);
  });
}
