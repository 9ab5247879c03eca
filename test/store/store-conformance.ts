import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/digest/semantic/seeded-random.ts';
import { Bm25Index } from '../../src/retrieval/bm25-index.ts';
import { compareHits } from '../../src/retrieval/top-hits.ts';
import type { ArchiveStore, MemoryWrite } from '../../src/store/archive-store-spec.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import type { EvalQuestion } from '../../src/types/question.ts';
import type { MemoryEdge, RelationType } from '../../src/types/relation.ts';
import type { MemoryView, ViewHit } from '../../src/types/view.ts';
import { heldMediaKeysConformance, pendingMediaConformance } from './pending-media-conformance.ts';
import { scopeHistoryConformance } from './scope-history-conformance.ts';
import { semanticIndexConformance } from './semantic-index-conformance.ts';

/**
 * The ArchiveStore conformance suite. Every backend runs it from test/store/<backend>.test.ts:
 *   describeStoreConformance('sqlite', () => openStore(file))
 */
export function describeStoreConformance(name: string, factory: () => Promise<ArchiveStore>): void {
  describe(`ArchiveStore conformance: ${name}`, () => {
    let store: ArchiveStore;
    beforeEach(async () => {
      store = await factory();
    });
    afterEach(async () => {
      await store.close();
    });

    semanticIndexConformance(() => store, write);
    scopeHistoryConformance(() => store, write);
    pendingMediaConformance(() => store, write);
    heldMediaKeysConformance(() => store, write);

    it('declares the port version and a backend name', () => {
      expect(store.specificationVersion).toBe('v1');
      expect(store.backend.length).toBeGreaterThan(0);
    });

    it('inserts, reads back and reports unchanged on the same hash', async () => {
      const writes = [write('ctx', 'm1', 'the red bicycle', 0), write('ctx', 'm2', 'a blue car', 1)];
      expect(await store.writeMemories('ctx', writes)).toEqual({
        inserted: ['m1', 'm2'],
        updated: [],
        unchanged: [],
      });
      expect(await store.writeMemories('ctx', writes)).toEqual({
        inserted: [],
        updated: [],
        unchanged: ['m1', 'm2'],
      });
      expect(await store.getMemory('ctx', 'm1')).toEqual(writes[0]!.record);
      expect(await store.getMemory('ctx', 'nope')).toBeUndefined();
      expect((await store.getMemories('ctx', ['m2', 'zz', 'm1'])).map((r) => r.id)).toEqual(['m2', 'm1']);
      expect(await store.countMemories('ctx')).toBe(2);
      expect(await store.getContentHashes('ctx', ['m1', 'zz'])).toEqual(
        new Map([['m1', 'hash-m1-the red bicycle']]),
      );
      expect(await store.listContexts()).toEqual([{ id: 'ctx', memories: 2, maxSequence: 1 }]);
      expect(await store.maxSequence('ctx')).toBe(1);
      expect(await store.maxSequence('nowhere')).toBeUndefined();
      expect(await store.countMemories('nowhere')).toBe(0);
    });

    it('returns copies: mutating a result does not change the store', async () => {
      await store.writeMemories('ctx', [write('ctx', 'm1', 'original', 0)]);
      const record = await store.getMemory('ctx', 'm1');
      record!.text = 'mutated';
      expect((await store.getMemory('ctx', 'm1'))!.text).toBe('original');
    });

    it('lists in sequence order with paging', async () => {
      await store.writeMemories('ctx', [
        write('ctx', 'c', 'x', 2),
        write('ctx', 'a', 'y', 0),
        write('ctx', 'b', 'z', 1),
      ]);
      expect((await store.listMemories('ctx')).map((r) => r.id)).toEqual(['a', 'b', 'c']);
      expect((await store.listMemories('ctx', { afterSequence: 0, limit: 1 })).map((r) => r.id)).toEqual([
        'b',
      ]);
      expect(await store.listMemories('other')).toEqual([]);
    });

    it('pages by (sequence, id) so sources that reuse sequence numbers lose nothing', async () => {
      await store.writeMemories('ctx', [
        write('ctx', 'mail-b', 'x', 0),
        write('ctx', 'chat-a', 'y', 0),
        write('ctx', 'photo-c', 'z', 0),
        write('ctx', 'chat-d', 'w', 1),
      ]);
      const seen: string[] = [];
      let last: { sequence: number; id: string } | undefined;
      for (;;) {
        const page = await store.listMemories(
          'ctx',
          last ? { afterSequence: last.sequence, afterId: last.id, limit: 2 } : { limit: 2 },
        );
        seen.push(...page.map((r) => r.id));
        if (page.length < 2) break;
        last = page[page.length - 1]!;
      }
      expect(seen).toEqual(['chat-a', 'mail-b', 'photo-c', 'chat-d']);
    });

    it('an update replaces views and drops vectors; edges stay until relations are rebuilt', async () => {
      await store.writeMemories('ctx', [
        write('ctx', 'm1', 'old words here', 0),
        write('ctx', 'm2', 'other', 1),
      ]);
      await store.putVectors('ctx', 'space', [vector('m1', [1, 0]), vector('m2', [0, 1])]);
      const outcome = await store.writeMemories('ctx', [write('ctx', 'm1', 'new text now', 0)]);
      expect(outcome).toEqual({ inserted: [], updated: ['m1'], unchanged: [] });
      expect((await store.getViews('ctx', ['m1'])).map((v) => v.text)).toEqual(['new text now', 'meta m1']);
      expect((await store.getVectors('ctx', 'space')).map((v) => v.memoryId)).toEqual(['m2']);
      expect(await store.searchLexical('ctx', 'old', { limit: 5 })).toEqual([]);
      expect((await store.searchLexical('ctx', 'new', { limit: 5 })).map((h) => h.memoryId)).toEqual(['m1']);
    });

    it("vector search follows every write, update and delete between searches; some memories' vectors read alone", async () => {
      const random = mulberry32(17);
      const live = new Map<string, Float32Array>();
      const values = () => Array.from({ length: 4 }, () => random() * 2 - 1);
      let next = 0;
      const brute = (query: Float32Array, limit: number) => {
        const unit = (v: Float32Array) => {
          const n = Math.hypot(...v) || 1;
          return [...v].map((x) => x / n);
        };
        const q = unit(query);
        return [...live]
          .map(([id, v]) => ({ id, score: unit(v).reduce((sum, x, d) => sum + x * q[d]!, 0) }))
          .sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1))
          .slice(0, limit)
          .map((hit) => hit.id);
      };
      for (let step = 0; step < 40; step++) {
        const roll = random();
        const ids = [...live.keys()];
        if (roll < 0.45 || ids.length < 3) {
          const id = `v${next++}`;
          await store.writeMemories('ctx', [write('ctx', id, `text ${id}`, next)]);
          const v = values();
          await store.putVectors('ctx', 'space', [vector(id, v)]);
          live.set(id, new Float32Array(v));
        } else if (roll < 0.65) {
          // A new vector for a stored memory (the same key: replaced).
          const id = ids[Math.floor(random() * ids.length)]!;
          const v = values();
          await store.putVectors('ctx', 'space', [vector(id, v)]);
          live.set(id, new Float32Array(v));
        } else if (roll < 0.8) {
          // A changed record: the store drops its vectors until they are written again.
          const id = ids[Math.floor(random() * ids.length)]!;
          await store.writeMemories('ctx', [write('ctx', id, `changed ${step}`, Number(id.slice(1)) + 1)]);
          live.delete(id);
        } else {
          const id = ids[Math.floor(random() * ids.length)]!;
          await store.deleteMemory('ctx', id);
          live.delete(id);
        }
        for (let q = 0; q < 3; q++) {
          const query = new Float32Array(values());
          const hits = await store.searchVectors('ctx', 'space', query, { limit: 4 });
          expect(hits.map((hit) => hit.memoryId)).toEqual(brute(query, 4));
        }
      }
      const some = [...live.keys()].slice(0, 2);
      expect(
        (await store.getVectors('ctx', 'space', [...some, 'absent'])).map((row) => row.memoryId),
      ).toEqual([...some].sort());
    });

    it('delete removes the record, its views, vectors and every edge touching it', async () => {
      await store.writeMemories('ctx', [
        write('ctx', 'a', 'alpha', 0),
        write('ctx', 'b', 'beta', 1),
        write('ctx', 'c', 'gamma', 2),
      ]);
      await store.replaceEdges(
        'ctx',
        ['consecutive_turn'],
        [edge('ctx', 'a', 'b', ['consecutive_turn']), edge('ctx', 'c', 'b', ['consecutive_turn'])],
      );
      await store.putVectors('ctx', 'space', [vector('a', [1, 0]), vector('b', [0, 1])]);
      expect(await store.deleteMemory('ctx', 'b')).toBe(true);
      expect(await store.deleteMemory('ctx', 'b')).toBe(false);
      expect(await store.getMemory('ctx', 'b')).toBeUndefined();
      expect(await store.getViews('ctx', ['b'])).toEqual([]);
      expect(await store.neighbors('ctx', ['a', 'b', 'c'])).toEqual([]);
      expect((await store.countEdges('ctx')).consecutive_turn).toBe(0);
      expect((await store.getVectors('ctx', 'space')).map((v) => v.memoryId)).toEqual(['a']);
      expect(await store.searchLexical('ctx', 'beta', { limit: 5 })).toEqual([]);
      expect((await store.integrityCheck()).ok).toBe(true);
    });

    it('replaceEdges normalises pairs, merges types and replaces only the given types', async () => {
      await store.writeMemories(
        'ctx',
        ['a', 'b', 'c', 'd'].map((id, i) => write('ctx', id, `text ${id}`, i)),
      );
      await store.replaceEdges(
        'ctx',
        ['same_round', 'consecutive_turn'],
        [
          edge('ctx', 'b', 'a', ['same_round']),
          edge('ctx', 'a', 'b', ['consecutive_turn']),
          edge('ctx', 'b', 'c', ['consecutive_turn']),
        ],
      );
      await store.replaceEdges(
        'ctx',
        ['semantic_knn'],
        [
          { contextId: 'ctx', a: 'a', b: 'b', types: ['semantic_knn'], strength: 0.7, similarity: 0.7 },
          { contextId: 'ctx', a: 'c', b: 'd', types: ['semantic_knn'], strength: 0.6, similarity: 0.6 },
        ],
      );
      const ab = (await store.neighbors('ctx', ['a']))[0]!;
      expect(ab).toEqual({
        contextId: 'ctx',
        a: 'a',
        b: 'b',
        types: ['same_round', 'consecutive_turn', 'semantic_knn'],
        strength: 0.99,
        similarity: 0.7,
      });
      expect(await store.countEdges('ctx')).toEqual({
        same_round: 1,
        consecutive_turn: 2,
        event_bridge: 0,
        same_record: 0,
        record_grounding: 0,
        supersedes: 0,
        semantic_knn: 2,
      });
      // Rebuild consecutive_turn only: b-c goes, a-b keeps its other types.
      await store.replaceEdges('ctx', ['consecutive_turn'], []);
      const after = await store.neighbors('ctx', ['b']);
      expect(after).toEqual([
        {
          contextId: 'ctx',
          a: 'a',
          b: 'b',
          types: ['same_round', 'semantic_knn'],
          strength: 0.99,
          similarity: 0.7,
        },
      ]);
      // Dropping every schema type leaves the semantic similarity as the strength.
      await store.replaceEdges('ctx', ['same_round'], []);
      expect((await store.neighbors('ctx', ['a']))[0]).toMatchObject({
        types: ['semantic_knn'],
        strength: 0.7,
      });
      expect((await store.neighbors('ctx', ['c', 'd'])).map((e) => `${e.a}-${e.b}`)).toEqual(['c-d']);
    });

    it('replaceEdges into a context without edges: sorted, unsorted and repeated pairs store the same', async () => {
      // Sorted distinct pairs take the SQLite store's streaming path (no diff); the others the diff.
      const ids = ['a', 'b', 'c', 'd'];
      const sorted = [
        edge('x', 'a', 'b', ['same_round', 'consecutive_turn']),
        edge('x', 'a', 'c', ['event_bridge']),
        edge('x', 'b', 'd', ['consecutive_turn']),
      ];
      const variants = {
        sorted,
        unsorted: [sorted[2]!, edge('x', 'c', 'a', ['event_bridge']), sorted[0]!],
        repeated: [
          edge('x', 'b', 'a', ['same_round']),
          edge('x', 'a', 'b', ['consecutive_turn']),
          sorted[1]!,
          sorted[2]!,
        ],
      };
      const stored: Record<string, unknown> = {};
      for (const [name, edges] of Object.entries(variants)) {
        const ctx = `fresh-${name}`;
        await store.writeMemories(
          ctx,
          ids.map((id, i) => write(ctx, id, `text ${id}`, i)),
        );
        await store.replaceEdges(
          ctx,
          ['same_round', 'consecutive_turn', 'event_bridge'],
          edges.map((e) => ({ ...e, contextId: ctx })),
        );
        stored[name] = {
          edges: (await store.neighbors(ctx, ids)).map(({ contextId: _, ...rest }) => rest),
          counts: await store.countEdges(ctx),
        };
      }
      expect(stored.unsorted).toEqual(stored.sorted);
      expect(stored.repeated).toEqual(stored.sorted);
      expect((stored.sorted as { edges: unknown[] }).edges).toHaveLength(3);
      // A bad edge after good ones writes none of them.
      await store.writeMemories('bad', [write('bad', 'a', 'x', 0), write('bad', 'b', 'y', 1)]);
      await expect(
        store.replaceEdges(
          'bad',
          ['same_round'],
          [edge('bad', 'a', 'b', ['same_round']), edge('bad', 'b', 'zz', ['same_round'])],
        ),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      expect(await store.neighbors('bad', ['a', 'b'])).toEqual([]);
    });

    it('replaceEdges rejects self-loops, foreign types and unknown endpoints', async () => {
      await store.writeMemories('ctx', [write('ctx', 'a', 'x', 0), write('ctx', 'b', 'y', 1)]);
      await expect(
        store.replaceEdges('ctx', ['same_round'], [edge('ctx', 'a', 'a', ['same_round'])]),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      await expect(
        store.replaceEdges('ctx', ['same_round'], [edge('ctx', 'a', 'b', ['event_bridge'])]),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      await expect(
        store.replaceEdges('ctx', ['same_round'], [edge('ctx', 'a', 'zz', ['same_round'])]),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      expect(await store.neighbors('ctx', ['a', 'b'])).toEqual([]);
    });

    it('writes are all-or-nothing', async () => {
      const good = write('ctx', 'ok', 'fine', 0);
      const bad = write('other', 'bad', 'wrong context', 1);
      await expect(store.writeMemories('ctx', [good, bad])).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      expect(await store.countMemories('ctx')).toBe(0);
    });

    it('isolates contexts in every read method', async () => {
      await store.writeMemories('one', [
        write('one', 'm', 'shared apple words', 0),
        write('one', 'n', 'pear', 1),
      ]);
      await store.writeMemories('two', [
        write('two', 'm', 'apple apple banana', 0),
        write('two', 'x', 'kiwi', 1),
        write('two', 'y', 'apple', 2),
      ]);
      await store.replaceEdges('two', ['same_round'], [edge('two', 'm', 'x', ['same_round'])]);
      await store.putVectors('two', 'space', [vector('m', [1, 0])]);
      expect((await store.getMemory('one', 'm'))!.text).toBe('shared apple words');
      expect(await store.getMemory('one', 'x')).toBeUndefined();
      expect(await store.getMemories('one', ['m', 'x'])).toHaveLength(1);
      expect((await store.listMemories('one')).map((r) => r.id)).toEqual(['m', 'n']);
      expect(await store.countMemories('one')).toBe(2);
      expect([...(await store.getContentHashes('one', ['m', 'x'])).keys()]).toEqual(['m']);
      expect((await store.getViews('one', ['m', 'x'])).every((v) => v.memoryId === 'm')).toBe(true);
      expect(await store.neighbors('one', ['m', 'x'])).toEqual([]);
      expect((await store.countEdges('one')).same_round).toBe(0);
      expect(await store.getVectors('one', 'space')).toEqual([]);
      expect(await store.searchVectors('one', 'space', new Float32Array([1, 0]), { limit: 3 })).toEqual([]);
      expect(await store.searchLexical('one', 'kiwi', { limit: 5 })).toEqual([]);
      // BM25 statistics are per context: context one's score for "apple" ignores context two's documents.
      const before = await store.searchLexical('one', 'apple', { limit: 5, kinds: ['text'] });
      await store.writeMemories('two', [write('two', 'z', 'apple pie', 3)]);
      const afterTwo = await store.searchLexical('one', 'apple', { limit: 5, kinds: ['text'] });
      expect(afterTwo).toEqual(before);
      await store.writeMemories('one', [write('one', 'o', 'apple tart', 2)]);
      const afterOne = await store.searchLexical('one', 'apple', { limit: 5, kinds: ['text'] });
      expect(afterOne.find((h) => h.memoryId === 'm')!.rawScore).not.toBe(before[0]!.rawScore);
      expect(await store.deleteMemory('one', 'x')).toBe(false);
      expect(await store.countMemories('two')).toBe(4);
      expect((await store.listContexts()).map((c) => [c.id, c.memories])).toEqual([
        ['one', 3],
        ['two', 4],
      ]);
    });

    it('listContexts pages by id (afterId, limit); deleted contexts leave the pages', async () => {
      for (const [index, id] of ['d', 'b', 'e', 'a', 'c'].entries()) {
        await store.writeMemories(id, [write(id, `m${index}`, 'note', index)]);
      }
      const ids = async (options: { afterId?: string; limit?: number }) =>
        (await store.listContexts(options)).map((c) => c.id);
      expect(await ids({ limit: 2 })).toEqual(['a', 'b']);
      expect(await ids({ afterId: 'b', limit: 2 })).toEqual(['c', 'd']);
      expect(await ids({ afterId: 'd', limit: 2 })).toEqual(['e']);
      expect(await ids({ afterId: 'bb' })).toEqual(['c', 'd', 'e']);
      expect(await ids({ afterId: 'e', limit: 2 })).toEqual([]);
      expect((await store.listContexts({ limit: 1 }))[0]).toEqual({ id: 'a', memories: 1, maxSequence: 3 });
      await store.deleteContext('c');
      expect(await ids({ afterId: 'b', limit: 2 })).toEqual(['d', 'e']);
      expect(await ids({})).toEqual(['a', 'b', 'd', 'e']);
    });

    it('searchLexical ranks by BM25, one hit per (memory, view), with a kind filter and per-kind limit', async () => {
      await store.writeMemories('ctx', [
        write('ctx', 'm1', 'photos of the harbour at sunset', 0),
        write('ctx', 'm2', 'sunset sunset over the harbour', 1),
        write('ctx', 'm3', 'grocery list: milk, eggs', 2),
      ]);
      const hits = await store.searchLexical('ctx', 'Sunset photo', { limit: 10, kinds: ['text'] });
      expect(hits.map((h) => h.memoryId)).toEqual(['m1', 'm2']);
      expect(hits.every((h) => h.kind === 'text' && h.key === 'main' && h.rawScore > 0)).toBe(true);
      expect(await store.searchLexical('ctx', 'meta', { limit: 2, kinds: ['metadata'] })).toHaveLength(2);
      const all = await store.searchLexical('ctx', 'sunset meta', { limit: 1 });
      expect(all.map((h) => h.kind).sort()).toEqual(['metadata', 'text']);
      expect(await store.searchLexical('ctx', 'the of', { limit: 5 })).toEqual([]);
      expect(await store.searchLexical('nowhere', 'sunset', { limit: 5 })).toEqual([]);
    });

    it('searchLexical work bounds: exact hits unless it reports a bounded kind, exact scores always', async () => {
      // 300 memories: "common" in every text view (ties: equal tf and length), "alpha" in a third, "rare" in
      // five, lengths varied by a filler word count so scores also differ.
      const writes = Array.from({ length: 300 }, (_, i) => {
        const words = ['common', ...(i % 3 === 0 ? ['alpha'] : []), ...(i % 60 === 7 ? ['rare'] : [])];
        for (let f = 0; f < (i % 4 === 0 ? 0 : i % 5); f++) words.push(`filler${f}`);
        return write('ctx', `m${String(i).padStart(3, '0')}`, words.join(' '), i);
      });
      for (let from = 0; from < writes.length; from += 100)
        await store.writeMemories('ctx', writes.slice(from, from + 100));
      const reference = Bm25Index.build(writes.flatMap((w) => w.views));
      const cases: [string, number, { rows?: number; scored?: number } | undefined][] = [
        ['common', 5, undefined],
        ['common alpha', 12, undefined],
        ['common', 5, { rows: 40, scored: 8 }],
        ['common', 5, { scored: 3 }],
        ['common alpha rare', 12, { rows: 30 }],
        ['alpha rare', 4, { rows: 25, scored: 6 }],
        ['rare', 10, { rows: 8 }],
      ];
      let reported = 0;
      for (const [query, limit, work] of cases) {
        const bounded = new Set<string>();
        const hits = await store.searchLexical('ctx', query, {
          limit,
          ...(work ? { work } : {}),
          onBounded: (kind) => {
            bounded.add(kind);
          },
        });
        const expected = reference.search(query, { limit });
        const exactScore = new Map(
          reference.search(query, { limit: 10_000 }).map((h) => [`${h.memoryId} ${h.kind}`, h.rawScore]),
        );
        const label = `${query} ${JSON.stringify(work)}`;
        for (const kind of ['text', 'metadata'] as const) {
          const got = hits.filter((h) => h.kind === kind);
          expect(got.length, label).toBeLessThanOrEqual(limit);
          for (const hit of got)
            expect(
              Math.abs(hit.rawScore - exactScore.get(`${hit.memoryId} ${kind}`)!),
              label,
            ).toBeLessThanOrEqual(1e-9);
          if (!bounded.has(kind))
            expect(
              got.map((h) => h.memoryId),
              label,
            ).toEqual(expected.filter((h) => h.kind === kind).map((h) => h.memoryId));
        }
        expect([...hits].sort(compareHits), label).toEqual(hits);
        // The default bounds are far above this context, and a whole list read within the bound ("rare", five
        // postings, rows 8) leaves nothing unread that could rank.
        if (work === undefined || query === 'rare') expect([...bounded], label).toEqual([]);
        reported += bounded.size;
      }
      // A backend that bounds its search must say so where 300 tied memories meet 8 candidates scored.
      if (store.backend !== 'memory') expect(reported).toBeGreaterThan(0);
    });

    it('searchLexical skipCommonOnlyKinds leaves out a kind of common query terms only, and only beside an informative one', async () => {
      // A two-person chat: each speaker named in half of the metadata and text views, a weekday in a seventh of
      // the metadata, "zebra" in a twentieth of the texts.
      const weekdays = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
      const writes = Array.from({ length: 140 }, (_, i) => {
        const id = `m${String(i).padStart(3, '0')}`;
        const speaker = i % 2 === 0 ? 'maya' : 'theo';
        const text = `${speaker} said ${i % 20 === 3 ? 'zebra' : 'hello'}${' well'.repeat(i % 3)}`;
        const memoryWrite = write('ctx', id, text, i);
        return {
          ...memoryWrite,
          views: [
            memoryWrite.views[0]!,
            {
              memoryId: id,
              kind: 'metadata' as const,
              key: 'main',
              text: `message ${speaker} ${weekdays[i % 7]}`,
            },
          ],
        };
      });
      await store.writeMemories('ctx', writes);
      const reference = Bm25Index.build(writes.flatMap((w) => w.views));
      const kindsOf = (hits: readonly ViewHit[]) => [...new Set(hits.map((h) => h.kind))].sort();
      const ids = writes.filter((_, i) => i % 4 < 2).map((w) => w.record.id);
      for (const memoryIds of [undefined, ids]) {
        const search = (query: string, skip: boolean) =>
          store.searchLexical('ctx', query, {
            limit: 8,
            ...(memoryIds ? { memoryIds } : {}),
            ...(skip ? { skipCommonOnlyKinds: true } : {}),
          });
        const label = memoryIds ? 'subset' : 'all';
        // "maya" is in half of the metadata: beside "zebra" in the texts that kind is left out, the text hits stay.
        expect(kindsOf(await search('maya zebra', false)), label).toEqual(['metadata', 'text']);
        const skipped = await search('maya zebra', true);
        expect(kindsOf(skipped), label).toEqual(['text']);
        expect(skipped, label).toEqual((await search('maya zebra', false)).filter((h) => h.kind === 'text'));
        expect(skipped, label).toEqual(
          reference.search('maya zebra', {
            limit: 8,
            skipCommonOnlyKinds: true,
            ...(memoryIds ? { memoryIds } : {}),
          }),
        );
        // Every kind common only: nothing is left out, so the question still finds what its words match.
        expect(await search('maya theo said', true), label).toEqual(await search('maya theo said', false));
        // A weekday is in a seventh of the metadata: that kind has an informative term and stays.
        expect(kindsOf(await search('maya friday zebra', true)), label).toEqual(['metadata', 'text']);
      }
    });

    it('stores vectors and searches them exactly by cosine with a kind filter', async () => {
      await store.writeMemories('ctx', [
        write('ctx', 'a', 'x', 0),
        write('ctx', 'b', 'y', 1),
        write('ctx', 'c', 'z', 2),
      ]);
      await store.putVectors('ctx', 'model@3', [
        vector('a', [1, 0, 0]),
        vector('b', [1, 1, 0]),
        vector('c', [0, 0, 2], 'caption'),
      ]);
      const hits = await store.searchVectors('ctx', 'model@3', new Float32Array([2, 0, 0]), { limit: 2 });
      expect(hits.map((h) => h.memoryId)).toEqual(['a', 'b']);
      expect(hits[0]!.rawScore).toBeCloseTo(1, 6);
      expect(hits[1]!.rawScore).toBeCloseTo(Math.SQRT1_2, 6);
      const captions = await store.searchVectors('ctx', 'model@3', new Float32Array([0, 0, 1]), {
        limit: 5,
        kinds: ['caption'],
      });
      expect(captions.map((h) => [h.memoryId, h.kind])).toEqual([['c', 'caption']]);
      const back = await store.getVectors('ctx', 'model@3', ['b']);
      expect(back).toHaveLength(1);
      expect([...back[0]!.vector]).toEqual([1, 1, 0]);
      await store.putVectors('ctx', 'model@3', [vector('a', [0, 1, 0])]);
      expect(
        (await store.searchVectors('ctx', 'model@3', new Float32Array([0, 1, 0]), { limit: 1 }))[0]!.memoryId,
      ).toBe('a');
      await expect(store.putVectors('ctx', 'model@3', [vector('a', [1, 0])])).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
      await expect(store.putVectors('ctx', 'model@3', [vector('zz', [1, 0, 0])])).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
      await expect(
        store.searchVectors('ctx', 'model@3', new Float32Array([1]), { limit: 1 }),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      expect(await store.getVectors('ctx', 'other-space')).toEqual([]);
    });

    it('upserts questions by (context, id) and lists them per context', async () => {
      await store.putQuestions([question('one', 'q1', 'first?'), question('two', 'q1', 'other?')]);
      expect(
        await store.putQuestions([question('one', 'q1', 'first, edited?'), question('one', 'q2', 'second?')]),
      ).toBe(2);
      expect((await store.listQuestions('one')).map((q) => q.prompt)).toEqual(['first, edited?', 'second?']);
      expect((await store.listQuestions('two')).map((q) => q.prompt)).toEqual(['other?']);
      expect(await store.listQuestions()).toHaveLength(3);
      expect((await store.listQuestions('one'))[0]).toEqual(question('one', 'q1', 'first, edited?'));
    });

    it('changeEdges adds and removes types per pair, touching only the named pairs', async () => {
      await store.writeMemories(
        'ctx',
        ['a', 'b', 'c'].map((id, i) => write('ctx', id, `text ${id}`, i)),
      );
      await store.changeEdges('ctx', [
        { a: 'b', b: 'a', add: ['same_round'] },
        { a: 'a', b: 'b', add: ['semantic_knn'], similarity: 0.5 },
        { a: 'c', b: 'b', add: ['semantic_knn'], similarity: 0.4 },
      ]);
      expect(await store.neighbors('ctx', ['a'])).toEqual([
        {
          contextId: 'ctx',
          a: 'a',
          b: 'b',
          types: ['same_round', 'semantic_knn'],
          strength: 0.99,
          similarity: 0.5,
        },
      ]);
      // Dropping the schema type leaves the similarity as strength; dropping the last type deletes the pair.
      await store.changeEdges('ctx', [
        { a: 'a', b: 'b', remove: ['same_round'] },
        { a: 'b', b: 'c', remove: ['semantic_knn'] },
      ]);
      expect(await store.neighbors('ctx', ['b'])).toEqual([
        { contextId: 'ctx', a: 'a', b: 'b', types: ['semantic_knn'], strength: 0.5, similarity: 0.5 },
      ]);
      // A change naming the same pair twice applies in order.
      await store.changeEdges('ctx', [
        { a: 'a', b: 'c', add: ['consecutive_turn'] },
        { a: 'c', b: 'a', remove: ['consecutive_turn'], add: ['event_bridge'] },
      ]);
      expect((await store.neighbors('ctx', ['c']))[0]).toMatchObject({
        types: ['event_bridge'],
        strength: 0.99,
      });
      expect(await store.countEdges('ctx')).toMatchObject({
        semantic_knn: 1,
        event_bridge: 1,
        same_round: 0,
      });
    });

    it('changeEdges is all-or-nothing and rejects unknown endpoints, self-loops and kNN without similarity', async () => {
      await store.writeMemories('ctx', [write('ctx', 'a', 'x', 0), write('ctx', 'b', 'y', 1)]);
      for (const bad of [
        { a: 'a', b: 'zz', add: ['same_round'] as RelationType[] },
        { a: 'a', b: 'a', add: ['same_round'] as RelationType[] },
        { a: 'a', b: 'b', add: ['semantic_knn'] as RelationType[] },
      ]) {
        await expect(
          store.changeEdges('ctx', [{ a: 'a', b: 'b', add: ['same_round'] }, bad]),
        ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      }
      expect(await store.neighbors('ctx', ['a', 'b'])).toEqual([]);
    });

    it('journals every changed write and delete in the same transaction, per context, until cleared', async () => {
      await store.writeMemories('ctx', [write('ctx', 'a', 'one', 0), write('ctx', 'b', 'two', 1)]);
      await store.writeMemories('other', [write('other', 'z', 'elsewhere', 0)]);
      await store.writeMemories('ctx', [write('ctx', 'a', 'one', 0), write('ctx', 'b', 'two again', 1)]);
      await store.deleteMemory('ctx', 'a');
      expect(await store.deleteMemory('ctx', 'a')).toBe(false);
      const work = await store.pendingRelationWork('ctx', 10);
      expect(work.map((entry) => [entry.memoryId, entry.before?.text])).toEqual([
        ['a', undefined],
        ['b', undefined],
        ['b', 'two'],
        ['a', 'one'],
      ]);
      expect(work.map((entry) => entry.seq)).toEqual(
        [...work.map((entry) => entry.seq)].sort((x, y) => x - y),
      );
      expect(await store.relationWorkStatus('ctx')).toEqual({ pending: 4, lastSeq: work[3]!.seq });
      expect((await store.pendingRelationWork('ctx', 2)).length).toBe(2);
      await store.clearRelationWork(
        'ctx',
        work.slice(0, 3).map((entry) => entry.seq),
      );
      expect((await store.pendingRelationWork('ctx', 10)).map((entry) => entry.memoryId)).toEqual(['a']);
      expect((await store.relationWorkStatus('other')).pending).toBe(1);
      await store.clearRelationWork('other', { through: work[0]!.seq });
      expect((await store.relationWorkStatus('other')).pending).toBe(1);
      expect(await store.relationWorkStatus('nowhere')).toEqual({ pending: 0 });
      expect(await store.hasRelationWork('other')).toBe(true);
      expect(await store.hasRelationWork('nowhere')).toBe(false);
      expect(await store.contextsWithRelationWork()).toEqual(['ctx', 'other']);
      // A failed write journals nothing.
      await expect(
        store.writeMemories('ctx', [write('ctx', 'c', 'three', 2), write('elsewhere', 'd', 'x', 3)]),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      expect((await store.relationWorkStatus('ctx')).pending).toBe(1);
      expect(await store.hasRelationWork('ctx')).toBe(true);
      await store.clearRelationWork('ctx', { through: work[3]!.seq });
      expect(await store.relationWorkStatus('ctx')).toEqual({ pending: 0 });
      expect(await store.hasRelationWork('ctx')).toBe(false);
      expect(await store.contextsWithRelationWork()).toEqual(['other']);
    });

    it('finds records by relation keys in (sequence, id) order, replaced on update, removed on delete', async () => {
      await store.writeMemories('ctx', [
        keyed(write('ctx', 'c', 'x', 2), ['turn:s1', 'round:r1']),
        keyed(write('ctx', 'a', 'y', 0), ['turn:s1']),
        keyed(write('ctx', 'b2', 'z', 1), ['turn:s1', 'round:r1']),
        keyed(write('ctx', 'b1', 'w', 1), ['turn:s2']),
        write('ctx', 'nokeys', 'v', 3),
      ]);
      await store.writeMemories('other', [keyed(write('other', 'a', 'y', 0), ['turn:s1'])]);
      const ids = (records: MemoryRecord[]) => records.map((r) => r.id);
      expect(ids(await store.findByKeys('ctx', ['turn:s1']))).toEqual(['a', 'b2', 'c']);
      expect(ids(await store.findByKeys('ctx', ['round:r1', 'turn:s2', 'turn:s1']))).toEqual([
        'a',
        'b1',
        'b2',
        'c',
      ]);
      expect(ids(await store.findByKeys('ctx', ['turn:s1', 'round:r1'], { limit: 2 }))).toEqual(['a', 'b2']);
      expect(await store.findByKeys('ctx', ['missing'])).toEqual([]);
      expect(await store.findByKeys('nope', ['turn:s1'])).toEqual([]);
      expect((await store.findByKeys('ctx', ['turn:s1']))[0]).toEqual((await store.getMemory('ctx', 'a'))!);

      // An update replaces the keys; an unchanged write with keys replaces them too; without keys keeps them.
      await store.writeMemories('ctx', [keyed(write('ctx', 'b2', 'z2', 1), ['turn:s2'])]);
      expect(ids(await store.findByKeys('ctx', ['turn:s1']))).toEqual(['a', 'c']);
      expect(ids(await store.findByKeys('ctx', ['turn:s2']))).toEqual(['b1', 'b2']);
      await store.writeMemories('ctx', [keyed(write('ctx', 'nokeys', 'v', 3), ['turn:s1'])]);
      await store.writeMemories('ctx', [write('ctx', 'c', 'x', 2)]);
      expect(ids(await store.findByKeys('ctx', ['turn:s1']))).toEqual(['a', 'c', 'nokeys']);
      await store.writeMemories('ctx', [write('ctx', 'c', 'x changed', 2)]);
      expect(ids(await store.findByKeys('ctx', ['turn:s1']))).toEqual(['a', 'nokeys']);
      await store.deleteMemory('ctx', 'a');
      expect(ids(await store.findByKeys('ctx', ['turn:s1']))).toEqual(['nokeys']);
      expect(ids(await store.findByKeys('other', ['turn:s1']))).toEqual(['a']);
    });

    it('finds the previous / next record of a key by (sequence, id), from any position', async () => {
      await store.writeMemories('ctx', [
        keyed(write('ctx', 'a', 'x', 0), ['turn:s']),
        keyed(write('ctx', 'b', 'x', 1), ['turn:s']),
        keyed(write('ctx', 'c', 'x', 1), ['turn:s']),
        keyed(write('ctx', 'd', 'x', 5), ['turn:s']),
        keyed(write('ctx', 'e', 'x', 3), ['turn:other']),
      ]);
      const at = async (sequence: number, id: string, direction: 'before' | 'after') =>
        (await store.adjacentByKey('ctx', 'turn:s', { sequence, id }, direction))?.id;
      expect(await at(1, 'b', 'before')).toBe('a');
      expect(await at(1, 'b', 'after')).toBe('c');
      expect(await at(1, 'c', 'before')).toBe('b');
      expect(await at(0, 'a', 'before')).toBeUndefined();
      expect(await at(5, 'd', 'after')).toBeUndefined();
      // A position that holds no record (a deleted one's old place).
      expect(await at(3, 'zz', 'before')).toBe('c');
      expect(await at(3, 'zz', 'after')).toBe('d');
      expect(await at(1, 'bb', 'after')).toBe('c');
      expect(await store.adjacentByKey('ctx', 'missing', { sequence: 0, id: 'a' }, 'after')).toBeUndefined();
      expect(await store.adjacentByKey('nope', 'turn:s', { sequence: 0, id: 'a' }, 'after')).toBeUndefined();
    });

    it('finds (key, record) pairs in a key range ordered by (key, id)', async () => {
      await store.writeMemories('ctx', [
        keyed(write('ctx', 'p1', 'x', 0), ['t:0005', 'day:x']),
        keyed(write('ctx', 'p2', 'x', 1), ['t:0003']),
        keyed(write('ctx', 'p0', 'x', 2), ['t:0005']),
        keyed(write('ctx', 'p3', 'x', 3), ['t:0009']),
        keyed(write('ctx', 'p4', 'x', 4), ['u:0004']),
      ]);
      const range = async (from: string, to: string, limit?: number) =>
        (await store.findKeyRange('ctx', from, to, limit === undefined ? {} : { limit })).map(
          (hit) => `${hit.key}=${hit.record.id}`,
        );
      expect(await range('t:0003', 't:0005')).toEqual(['t:0003=p2', 't:0005=p0', 't:0005=p1']);
      expect(await range('t:0004', 't:9999')).toEqual(['t:0005=p0', 't:0005=p1', 't:0009=p3']);
      expect(await range('t:0000', 't:9999', 2)).toEqual(['t:0003=p2', 't:0005=p0']);
      expect(await range('t:0006', 't:0008')).toEqual([]);
      expect((await store.findKeyRange('ctx', 't:0009', 't:0009'))[0]!.record).toEqual(
        (await store.getMemory('ctx', 'p3'))!,
      );
      expect(await store.findKeyRange('nope', 't:0000', 't:9999')).toEqual([]);
    });

    it('keeps meta values as JSON', async () => {
      expect(await store.getMeta('missing')).toBeUndefined();
      await store.setMeta('calibration', { a: 1, list: [1, 'two'] });
      expect(await store.getMeta('calibration')).toEqual({ a: 1, list: [1, 'two'] });
      await store.setMeta('calibration', 3);
      expect(await store.getMeta<number>('calibration')).toBe(3);
      await store.setMeta('calibration', undefined);
      expect(await store.getMeta('calibration')).toBeUndefined();
    });

    it('deleteContext runs its transactions through `schedule` and calls `started` once before deleting', async () => {
      await store.writeMemories('gone', [
        write('gone', 'a', 'the secret plan', 0),
        write('gone', 'b', 'x', 1),
      ]);
      await store.writeMemories('stays', [write('stays', 'a', 'kept words', 0)]);
      const seen: string[] = [];
      const deleted = await store.deleteContext('gone', {
        schedule: async (step) => {
          seen.push('step');
          return step();
        },
        started: async () => {
          // Nothing is deleted yet: the library reads the context's media here.
          seen.push(`started ${await store.countMemories('gone')}`);
        },
      });
      expect(deleted).toBe(true);
      expect(seen).toContain('step');
      expect(seen.filter((entry) => entry.startsWith('started'))).toEqual(['started 2']);
      expect(await store.countMemories('gone')).toBe(0);
      expect(await store.isForgetting?.('gone')).not.toBe(true);
      expect(await store.countMemories('stays')).toBe(1);
    });

    it('deleteContext removes every row of one context (memories, views, vectors, edges, questions) only', async () => {
      for (const ctx of ['gone', 'stays']) {
        await store.writeMemories(ctx, [
          write(ctx, 'a', 'the secret plan', 0),
          write(ctx, 'b', 'other words', 1),
        ]);
        await store.replaceEdges(ctx, ['same_round'], [edge(ctx, 'a', 'b', ['same_round'])]);
        await store.putVectors(ctx, 's', [vector('a', [1, 0]), vector('b', [0, 1])]);
        await store.putQuestions([question(ctx, 'q', 'what plan?')]);
      }
      // Warm the lexical and vector caches, so a stale index cannot survive the delete.
      expect(await store.searchLexical('gone', 'secret', { limit: 5 })).toHaveLength(1);
      expect(await store.searchVectors('gone', 's', new Float32Array([1, 0]), { limit: 5 })).toHaveLength(2);
      await store.setMeta('calibration', { a: 1 });

      expect(await store.deleteContext('gone')).toBe(true);
      expect(await store.deleteContext('gone')).toBe(false);
      expect(await store.deleteContext('never')).toBe(false);

      expect((await store.listContexts()).map((c) => c.id)).toEqual(['stays']);
      expect(await store.countMemories('gone')).toBe(0);
      expect(await store.getMemory('gone', 'a')).toBeUndefined();
      expect(await store.getViews('gone', ['a', 'b'])).toEqual([]);
      expect(await store.neighbors('gone', ['a', 'b'])).toEqual([]);
      expect(await store.getVectors('gone', 's')).toEqual([]);
      expect(await store.listQuestions('gone')).toEqual([]);
      expect(await store.searchLexical('gone', 'secret', { limit: 5 })).toEqual([]);
      expect(await store.searchVectors('gone', 's', new Float32Array([1, 0]), { limit: 5 })).toEqual([]);
      expect(Object.values(await store.countEdges('gone')).every((n) => n === 0)).toBe(true);
      expect(await store.getMeta('calibration')).toEqual({ a: 1 });

      expect(await store.countMemories('stays')).toBe(2);
      expect(await store.neighbors('stays', ['a'])).toHaveLength(1);
      expect(await store.getVectors('stays', 's')).toHaveLength(2);
      expect(await store.listQuestions('stays')).toHaveLength(1);
      expect(await store.searchLexical('stays', 'secret', { limit: 5 })).toHaveLength(1);

      // The context can be written again from scratch, and its indexes are not the old ones.
      await store.writeMemories('gone', [write('gone', 'c', 'a new start', 0)]);
      expect((await store.searchLexical('gone', 'secret', { limit: 5 })).length).toBe(0);
      expect((await store.searchLexical('gone', 'start', { limit: 5 })).map((h) => h.memoryId)).toEqual([
        'c',
      ]);
      expect(await store.integrityCheck()).toEqual({ ok: true, problems: [] });
    });

    it('passes the integrity check after a mix of writes', async () => {
      await store.writeMemories('ctx', [write('ctx', 'a', 'x', 0), write('ctx', 'b', 'y', 1)]);
      await store.replaceEdges('ctx', ['same_round'], [edge('ctx', 'a', 'b', ['same_round'])]);
      expect(await store.integrityCheck()).toEqual({ ok: true, problems: [] });
    });
  });
}

/** A record with a text view and a metadata view; the hash follows the text so a new text is an update. */

/** Five short texts sharing words pairwise (harbour / sunset, eggs / dog): small archives with kNN edges. */
export const SHARED_WORD_TEXTS = [
  'harbour at sunset',
  'milk and eggs',
  'the dog at dawn',
  'sunset harbour wall',
  'eggs for the dog',
] as const;

/** Six chat lines whose words recur across memories (Postgres unit and kept-postings tests). */
export const SHARED_WORD_CHAT = [
  'harbour at sunset with Ann',
  'milk and eggs from the market',
  'the dog at dawn on the beach',
  'sunset harbour wall painted blue',
  'eggs for the dog and the cat',
  'market day at the harbour',
] as const;

export function write(contextId: string, id: string, text: string, sequence: number): MemoryWrite {
  const record: MemoryRecord = { id, contextId, kind: 'message', sequence, text, assets: [], speaker: 'Ann' };
  const views: MemoryView[] = [
    { memoryId: id, kind: 'text', key: 'main', text },
    { memoryId: id, kind: 'metadata', key: 'main', text: `meta ${id}` },
  ];
  return { record, views, contentHash: `hash-${id}-${text}` };
}

function keyed(memoryWrite: MemoryWrite, keys: string[]): MemoryWrite {
  return { ...memoryWrite, keys };
}

function edge(contextId: string, a: string, b: string, types: RelationType[]): MemoryEdge {
  return { contextId, a, b, types, strength: 0.99 };
}

function vector(memoryId: string, values: number[], kind: 'text' | 'caption' = 'text') {
  return { memoryId, kind, key: 'main', vector: new Float32Array(values) };
}

function question(contextId: string, id: string, prompt: string): EvalQuestion {
  return { id, contextId, prompt, answer: { text: 'x' }, evidence: [] };
}
