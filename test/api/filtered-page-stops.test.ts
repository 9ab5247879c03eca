import { describe, expect, it } from 'vitest';
import { decodeCursor, listMemoryPage } from '../../src/graphmemix-memory-verbs.ts';
import {
  CANDIDATE_READ_PAGES,
  restrictionOf,
  SELECTIVE_FILTER_LIMIT,
} from '../../src/retrieval/filtered-candidates.ts';
import type { ArchiveStore, FilteredPage, FilterPageOptions } from '../../src/store/archive-store-spec.ts';
import { createMemoryStore } from '../../src/store/memory-store.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';

/**
 * What the verbs make of a filtered read that stopped on its work bound (FilteredPage.stoppedAfter): the page's
 * cursor continues from where the store stopped, and a filtered retrieve whose candidate read stopped does not
 * take the partial list for every match. The stores' own stops are in the conformance suite.
 */
const record = (id: string, sequence: number): MemoryRecord =>
  ({ id, sequence, contextId: 'u', kind: 'message', text: id }) as MemoryRecord;

/** A store whose filtered reads answer `pages` in turn, recording what they were asked. */
function stoppingStore(pages: FilteredPage<MemoryRecord>[]) {
  const asked: FilterPageOptions[] = [];
  const store = {
    async listFiltered(_context: string, _filter: unknown, page: FilterPageOptions = {}) {
      asked.push(page);
      return pages.shift() ?? { items: [] };
    },
    async matchFiltered(_context: string, _filter: unknown, page: FilterPageOptions = {}) {
      asked.push(page);
      const found = pages.shift() ?? { items: [] };
      return { ...found, items: found.items.map((r) => r.id) };
    },
  } as unknown as ArchiveStore;
  return { store, asked };
}

describe('filtered pages that stop on their work bound', () => {
  it('gives a cursor where the store stopped, also for a short or empty page', async () => {
    const { store, asked } = stoppingStore([
      { items: [], stoppedAfter: { sequence: 41, id: 'm41' } },
      { items: [record('m50', 50)], stoppedAfter: { sequence: 90, id: 'm90' } },
      { items: [record('m95', 95)] },
    ]);
    const filter = { agentId: 'a' };
    const first = await listMemoryPage(store, 'u', { limit: 2, filter });
    expect(first.memories).toEqual([]);
    expect(decodeCursor(first.nextCursor!)).toEqual({ sequence: 41, id: 'm41' });
    const second = await listMemoryPage(store, 'u', { limit: 2, filter, cursor: first.nextCursor! });
    expect(second.memories.map((r) => r.id)).toEqual(['m50']);
    expect(decodeCursor(second.nextCursor!)).toEqual({ sequence: 90, id: 'm90' });
    const last = await listMemoryPage(store, 'u', { limit: 2, filter, cursor: second.nextCursor! });
    expect(last).toEqual({ memories: [record('m95', 95)] });
    // Each page asked for one more than its limit, from the previous stop.
    expect(asked).toEqual([
      { limit: 3 },
      { limit: 3, afterSequence: 41, afterId: 'm41' },
      { limit: 3, afterSequence: 90, afterId: 'm90' },
    ]);
  });

  it('a full page continues after its last memory, whatever the store says about its work', async () => {
    const { store } = stoppingStore([
      { items: [record('a', 1), record('b', 2), record('c', 3)], stoppedAfter: { sequence: 9, id: 'z' } },
    ]);
    const page = await listMemoryPage(store, 'u', { limit: 2, filter: { agentId: 'a' } });
    expect(page.memories.map((r) => r.id)).toEqual(['a', 'b']);
    expect(decodeCursor(page.nextCursor!)).toEqual({ sequence: 2, id: 'b' });
  });

  it('a filtered retrieve reads candidates on from each stop, and searches as broad past its pages', async () => {
    const filter = { agentId: 'a' };
    const few = stoppingStore([{ items: [record('a', 1)] }]);
    expect(await restrictionOf(few.store, 'u', filter)).toEqual({ kind: 'ids', ids: ['a'] });
    // Two stops, then the end: every candidate, each page from the previous stop, asking for what is left.
    const resumed = stoppingStore([
      { items: [record('a', 1)], stoppedAfter: { sequence: 5, id: 'e' } },
      { items: [], stoppedAfter: { sequence: 9, id: 'i' } },
      { items: [record('k', 11)] },
    ]);
    expect(await restrictionOf(resumed.store, 'u', filter)).toEqual({ kind: 'ids', ids: ['a', 'k'] });
    expect(resumed.asked).toEqual([
      { limit: SELECTIVE_FILTER_LIMIT + 1 },
      { limit: SELECTIVE_FILTER_LIMIT, afterSequence: 5, afterId: 'e' },
      { limit: SELECTIVE_FILTER_LIMIT, afterSequence: 9, afterId: 'i' },
    ]);
    // Stopping on every one of its pages: broad, after exactly CANDIDATE_READ_PAGES reads.
    const endless = stoppingStore(
      Array.from({ length: CANDIDATE_READ_PAGES + 5 }, (_, i) => ({
        items: [],
        stoppedAfter: { sequence: i, id: `s${i}` },
      })),
    );
    expect(await restrictionOf(endless.store, 'u', filter)).toEqual({ kind: 'broad', filter });
    expect(endless.asked).toHaveLength(CANDIDATE_READ_PAGES);
  });

  it('on a real store a list walks to the end through stops (the in-memory store, work 3)', async () => {
    const store = createMemoryStore();
    await store.writeMemories(
      'u',
      Array.from({ length: 20 }, (_, i) => ({
        record: { ...record(`m${String(i).padStart(2, '0')}`, i), ...(i % 7 === 0 ? { agentId: 'a' } : {}) },
        contentHash: `h${i}`,
        views: [],
        keys: [],
      })) as never,
    );
    const ids: string[] = [];
    let after: { sequence: number; id: string } | undefined;
    for (let pages = 0; pages < 50; pages++) {
      const page = await store.listFiltered(
        'u',
        { agentId: 'a' },
        { limit: 2, work: 3, ...(after ? { afterSequence: after.sequence, afterId: after.id } : {}) },
      );
      ids.push(...page.items.map((r) => r.id));
      if (page.stoppedAfter) after = page.stoppedAfter;
      else if (page.items.length === 2) after = page.items[1]!;
      else break;
    }
    expect(ids).toEqual(['m00', 'm07', 'm14']);
    await store.close();
  });
});
