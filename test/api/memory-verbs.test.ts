import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { restrictedSearch } from '../../src/retrieval/filtered-candidates.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function open(kind: string): Promise<Graphmemix> {
  if (kind === 'memory') return openGraphmemix({ db: 'memory:' });
  const dir = mkdtempSync(join(tmpdir(), 'gmx-verbs-'));
  dirs.push(dir);
  return openGraphmemix({ db: join(dir, 'a.db'), writeWorker: kind === 'sqlite+worker' });
}

describe.each(['memory', 'sqlite', 'sqlite+worker'])('library memory verbs (%s)', (kind) => {
  it('lists in keyset pages, filtered before paging', async () => {
    const gm = await open(kind);
    await gm.addMemories(
      'ann',
      Array.from({ length: 7 }, (_, i) => ({
        id: `m${i}`,
        text: `note number ${i}`,
        ...(i % 2 === 0 ? { agentId: 'planner' } : { runId: 'r-1' }),
        metadata: { parity: i % 2 === 0 ? 'even' : 'odd' },
        timestamp: `2024-05-0${i + 1}`,
      })),
    );
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await gm.listMemories('ann', { limit: 3, ...(cursor ? { cursor } : {}) });
      seen.push(...page.memories.map((m) => m.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6']);
    expect(pages).toBe(3);
    const even = await gm.listMemories('ann', { filter: { agentId: 'planner' }, limit: 2 });
    expect(even.memories.map((m) => m.id)).toEqual(['m0', 'm2']);
    const rest = await gm.listMemories('ann', { filter: { agentId: 'planner' }, cursor: even.nextCursor! });
    expect(rest.memories.map((m) => m.id)).toEqual(['m4', 'm6']);
    expect(rest.nextCursor).toBeUndefined();
    const window = await gm.listMemories('ann', {
      filter: { metadata: { parity: 'odd' }, from: '2024-05-03', to: '2024-05-06' },
    });
    expect(window.memories.map((m) => m.id)).toEqual(['m3', 'm5']);
    expect(await gm.listUsers()).toEqual({ users: [{ userId: 'ann', memories: 7 }] });
    const stats = await gm.userStats('ann');
    expect(stats).toMatchObject({ userId: 'ann', memories: 7, byKind: { note: 7 } });
    expect(typeof stats?.lastWrite).toBe('string');
    expect(await gm.userStats('nobody')).toBeUndefined();
    await gm.close();
  });

  it('updates write a new version; history is oldest first; questions use the current one', async () => {
    const gm = await open(kind);
    await gm.addMemories('ann', [
      { id: 'appt', text: 'The dentist appointment is on Monday at 9', timestamp: '2024-06-01' },
      { id: 'other', text: 'Bought oranges at the market', timestamp: '2024-06-02' },
    ]);
    const first = await gm.getMemory('ann', 'appt');
    expect(typeof first?.recordedAt).toBe('string');
    const report = await gm.updateMemory('ann', 'appt', {
      text: 'The dentist appointment moved to Thursday at 11',
      timestamp: '2024-06-06',
    });
    expect(report).toMatchObject({ version: 2, changed: true });
    expect(report.memory.text).toContain('Thursday');
    // The same patch again changes nothing and adds no version.
    expect(
      await gm.updateMemory('ann', 'appt', {
        text: 'The dentist appointment moved to Thursday at 11',
        timestamp: '2024-06-06',
      }),
    ).toMatchObject({ version: 2, changed: false });
    const history = await gm.memoryHistory('ann', 'appt');
    expect(history?.map((v) => [v.version, v.record.text])).toEqual([
      [1, 'The dentist appointment is on Monday at 9'],
      [2, 'The dentist appointment moved to Thursday at 11'],
    ]);
    expect(history![0]!.record.recordedAt! <= history![1]!.record.recordedAt!).toBe(true);
    expect(await gm.memoryHistory('ann', 'nope')).toBeUndefined();
    const hits = await gm.search('ann', 'Monday dentist');
    expect(hits[0]?.record.text).toContain('Thursday');
    expect((await gm.search('ann', 'Monday')).map((h) => h.memoryId)).toEqual([]);
    await expect(gm.updateMemory('ann', 'nope', { text: 'x' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(
      gm.updateMemory('ann', 'appt', { txt: 'x' } as unknown as { text: string }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT', location: { field: 'txt' } });
    await expect(gm.updateMemory('ann', 'appt', { text: '' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    expect((await gm.memoryHistory('ann', 'appt'))?.length).toBe(2);
    // Paged history (what HTTP and MCP serve): one page a request, whatever the number of versions.
    await gm.addMemories('ann', [{ id: 'log', text: 'entry 0', timestamp: '2024-06-01' }]);
    for (let v = 1; v <= 6; v++) {
      expect(await gm.updateMemory('ann', 'log', { text: `entry ${v}` })).toMatchObject({ version: v + 1 });
    }
    const whole = (await gm.memoryHistory('ann', 'log'))!.map((v) => [v.version, v.record.text]);
    expect(whole).toHaveLength(7);
    for (const limit of [1, 2, 3, 6, 7, 50]) {
      const pages: (number | string)[][][] = [];
      let cursor: string | undefined;
      do {
        const page = await gm.memoryHistoryPage('ann', 'log', { limit, ...(cursor ? { cursor } : {}) });
        expect(page!.versions.length).toBeLessThanOrEqual(limit);
        pages.push(page!.versions.map((v) => [v.version, v.record.text]));
        cursor = page!.nextCursor;
      } while (cursor !== undefined);
      expect(pages.flat(), `limit ${limit}`).toEqual(whole);
      // Only the last page may be short; a page is never empty.
      expect(pages.slice(0, -1).every((page) => page.length === limit)).toBe(true);
      expect(pages.every((page) => page.length > 0)).toBe(true);
    }
    expect(await gm.memoryHistoryPage('ann', 'nope')).toBeUndefined();
    const past = Buffer.from(JSON.stringify(['v', 40])).toString('base64url');
    const listCursor = (await gm.listMemories('ann', { limit: 1 })).nextCursor!;
    for (const cursor of [past, listCursor, 'not a cursor', 'W10']) {
      await expect(gm.memoryHistoryPage('ann', 'log', { cursor })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        location: { field: 'cursor' },
      });
    }
    await expect(gm.memoryHistoryPage('ann', 'log', { limit: 201 })).rejects.toMatchObject({
      location: { field: 'limit' },
    });
    // Forgetting the memory forgets its history.
    await gm.deleteMemory('ann', 'appt');
    expect(await gm.store.memoryVersions('ann', 'appt')).toEqual([]);
    await gm.close();
  });

  it('updates issued together apply one after the other; an update beside a delete never brings it back', async () => {
    const gm = await open(kind);
    for (let i = 0; i < 5; i++) {
      await gm.addMemories('ann', [{ id: `p${i}`, text: `base ${i}`, metadata: { a: 0 } }]);
      await Promise.all([
        gm.updateMemory('ann', `p${i}`, { text: `new text ${i}` }),
        gm.updateMemory('ann', `p${i}`, { metadata: { a: 1 } }),
      ]);
      const both = await gm.getMemory('ann', `p${i}`);
      expect(both?.text).toBe(`new text ${i}`);
      expect(both?.metadata).toEqual({ a: 1 });
      const [updated, deleted] = await Promise.allSettled([
        gm.updateMemory('ann', `p${i}`, { text: `late ${i}` }),
        gm.deleteMemory('ann', `p${i}`),
      ]);
      expect(updated.status).toBe('fulfilled');
      expect(deleted).toEqual({ status: 'fulfilled', value: true });
      expect(await gm.getMemory('ann', `p${i}`)).toBeUndefined();
    }
    expect((await gm.store.integrityCheck()).ok).toBe(true);
    await gm.close();
  });

  it('relations follow an update incrementally', async () => {
    const gm = await open(kind);
    await gm.addMemories('ann', [
      { id: 'q', role: 'user', text: 'Where shall we meet?', roundId: 'r1', sessionId: 's' },
      { id: 'a', role: 'assistant', text: 'At the station.', roundId: 'r2', sessionId: 's' },
    ]);
    const types = async () =>
      (await gm.store.neighbors('ann', ['q']))
        .filter((e) => e.b === 'q' || e.a === 'q')
        .flatMap((e) => e.types);
    expect(await types()).not.toContain('same_round');
    await gm.updateMemory('ann', 'a', { roundId: 'r1' });
    expect(await types()).toContain('same_round');
    expect((await gm.store.relationWorkStatus('ann')).pending).toBe(0);
    await gm.close();
  });

  it('adds conversations as messages: ids, rounds and timestamps, also without user/assistant roles', async () => {
    const gm = await open(kind);
    const chat = await gm.addMessages(
      'ann',
      [
        { role: 'user', content: 'I moved to Porto last week.', timestamp: '2024-07-01T10:00:00Z' },
        { role: 'assistant', content: 'How do you like it?' },
        { role: 'user', content: 'Love the river.' },
        { role: 'assistant', content: 'Nice!' },
      ],
      { runId: 'chat-1', agentId: 'helper' },
    );
    expect(chat.imported).toBe(4);
    const records = await gm.store.getMemories('ann', chat.memoryIds);
    expect(records.map((r) => r.roundId?.split(':').pop())).toEqual(['r1', 'r1', 'r2', 'r2']);
    expect(records.map((r) => r.timestamp)).toEqual(Array(4).fill('2024-07-01T10:00:00Z'));
    expect(
      records.every((r) => r.sessionId === 'chat-1' && r.runId === 'chat-1' && r.agentId === 'helper'),
    ).toBe(true);
    const duo = await gm.addMessages('ann', [
      { role: 'Ann', content: 'Lunch on Friday?' },
      { role: 'Ben', content: 'Sure.' },
      { role: 'Ben', content: 'Where?' },
      { role: 'Ann', content: 'The usual place.' },
    ]);
    const two = await gm.store.getMemories('ann', duo.memoryIds);
    expect(two.map((r) => r.roundId?.split(':').pop())).toEqual(['r1', 'r1', 'r1', 'r2']);
    expect(two.map((r) => r.speaker)).toEqual(['Ann', 'Ben', 'Ben', 'Ann']);
    expect(two.every((r) => typeof r.timestamp === 'string')).toBe(true);
    // Ids never collide between calls on the same run.
    const again = await gm.addMessages('ann', [{ role: 'user', content: 'Love the river.' }], {
      runId: 'chat-1',
    });
    expect(again.imported).toBe(1);
    expect(new Set([...chat.memoryIds, ...again.memoryIds]).size).toBe(5);
    await gm.close();
  });

  it('a filtered retrieve fills its pool from matching memories only', async () => {
    const gm = await open(kind);
    const records = Array.from({ length: 120 }, (_, i) => ({
      id: `n${i}`,
      text: `trip planning note ${i} about the mountain trip`,
      agentId: i % 3 === 0 ? 'travel' : 'other',
    }));
    await gm.addMemories('ann', records);
    const result = await gm.retrieve('ann', 'mountain trip planning', {
      filter: { agentId: 'travel' },
      verifiers: 'offline',
    });
    const ids = result.pool.map((c) => c.memoryId);
    expect(ids.length).toBeGreaterThanOrEqual(24);
    expect(ids.every((id) => Number(id.slice(1)) % 3 === 0)).toBe(true);
    expect(result.evidence.every((e) => Number(e.memoryId.slice(1)) % 3 === 0)).toBe(true);
    const search = await gm.search('ann', 'mountain trip', { k: 20, filter: { agentId: 'travel' } });
    expect(search).toHaveLength(20);
    expect(search.every((h) => h.record.agentId === 'travel')).toBe(true);
    // Nothing matches: nothing comes back (no fallback to foreign memories).
    const none = await gm.retrieve('ann', 'mountain trip', {
      filter: { agentId: 'nobody' },
      verifiers: 'offline',
    });
    expect(none.evidence).toEqual([]);
    await gm.close();
  });
});

describe('broad filters: the indexed search read deeper, checked by id', () => {
  it('returns the same hits as a restricted search', async () => {
    const gm = await openGraphmemix({ db: ':memory:' });
    await gm.addMemories(
      'ann',
      Array.from({ length: 400 }, (_, i) => ({
        id: `n${String(i).padStart(3, '0')}`,
        text: `river walk ${i % 7 === 0 ? 'river river' : ''} evening ${i}`,
        agentId: i % 10 === 0 ? 'rare' : 'common',
      })),
    );
    const filter = { agentId: 'rare' };
    const { items: ids } = await gm.store.matchFiltered('ann', filter);
    const search = (options: { limit: number; memoryIds?: readonly string[] }) =>
      gm.store.searchLexical('ann', 'river walk', { ...options, kinds: ['text'] });
    const broad = await restrictedSearch(gm.store, 'ann', { kind: 'broad', filter }, 8, search);
    const exact = await restrictedSearch(gm.store, 'ann', { kind: 'ids', ids }, 8, search);
    expect(broad.map((h) => h.memoryId)).toEqual(exact.map((h) => h.memoryId));
    expect(broad).toHaveLength(8);
    await gm.close();
  });
});
