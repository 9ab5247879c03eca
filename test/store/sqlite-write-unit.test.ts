import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/digest/semantic/seeded-random.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import type { SemanticDoc, SemanticPosting } from '../../src/store/semantic-index-spec.ts';
import { createSqliteStore, SQLITE_UNIT_MAX_PENDING } from '../../src/store/sqlite-store.ts';
import { write } from './store-conformance.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-write-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The write path of an add (docs/living-archive.md "A write"): one unit, kept posting reads, list slots. */
describe('SQLite write unit, kept postings and list slots', () => {
  it('commits a unit of work once, and a failing unit leaves nothing (term ids learnt inside forgotten)', async () => {
    const file = join(dir, 'unit.db');
    const store = createSqliteStore(file);
    await store.unitOfWork!('ctx', async () => {
      await store.writeMemories('ctx', [write('ctx', 'a', 'anchor words here', 0)]);
      await store.setMeta('unit:done', 1);
    });
    expect(await store.getMeta('unit:done')).toBe(1);

    await expect(
      store.unitOfWork!('ctx', async () => {
        await store.writeMemories('ctx', [write('ctx', 'z', 'zebra crossing', 1)]);
        expect(await store.getMemory('ctx', 'z')).toBeDefined();
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await store.getMemory('ctx', 'z')).toBeUndefined();
    expect(await store.countMemories('ctx')).toBe(1);
    // The rolled-back unit had learnt ids for "zebra" and "crossing"; those ids are free again. A later
    // write takes them for other words, and "zebra" must then get its own id, not the stale one.
    await store.writeMemories('ctx', [write('ctx', 'y', 'yak yodel', 2)]);
    await store.writeMemories('ctx', [write('ctx', 'z2', 'zebra crossing', 3)]);
    const ids = async (query: string) =>
      (await store.searchLexical('ctx', query, { limit: 10, kinds: ['text'] })).map((hit) => hit.memoryId);
    expect(await ids('yak')).toEqual(['y']);
    expect(await ids('zebra')).toEqual(['z2']);
    expect((await store.integrityCheck()).ok).toBe(true);

    // `remote`: plain calls (each commits on its own), so a throw keeps what was written.
    await expect(
      store.unitOfWork!(
        'ctx',
        async () => {
          await store.setMeta('unit:remote', 2);
          throw new Error('after a model call');
        },
        { remote: true },
      ),
    ).rejects.toThrow('after a model call');
    expect(await store.getMeta('unit:remote')).toBe(2);
    // A large update keeps per-call transactions (the file-wide write lock is not held across it): a unit
    // announcing more adds than SQLITE_UNIT_MAX_PENDING, or opened over a journal already that long, runs
    // its calls as they are, so a throw keeps what was written.
    for (const options of [{ adds: SQLITE_UNIT_MAX_PENDING + 1 }, { adds: SQLITE_UNIT_MAX_PENDING }]) {
      const key = `unit:large:${options.adds}`;
      await expect(
        store.unitOfWork!(
          'ctx',
          async () => {
            await store.setMeta(key, 3);
            throw new Error('large');
          },
          options,
        ),
      ).rejects.toThrow('large');
      // The journal holds the three writes above (no relation update ran): 3 + 16 is over the bound, 3 + 17 too.
      expect(await store.getMeta(key)).toBe(3);
    }
    await expect(
      store.unitOfWork!(
        'ctx',
        async () => {
          await store.setMeta('unit:small', 4);
          throw new Error('small');
        },
        { adds: SQLITE_UNIT_MAX_PENDING - 3 },
      ),
    ).rejects.toThrow('small');
    expect(await store.getMeta('unit:small')).toBeUndefined();
    // A read-only handle runs a unit's reads as plain calls (it cannot BEGIN IMMEDIATE).
    const reader = createSqliteStore(file, { readonly: true });
    expect(await reader.unitOfWork!('ctx', async () => reader.countMemories('ctx'))).toBe(3);
    await reader.close();
    await store.close();
  });

  it('keeps top-n posting reads exact across writes, removals, rollbacks and other connections', async () => {
    const file = join(dir, 'postings.db');
    const store = createSqliteStore(file);
    const other = createSqliteStore(file);
    const random = mulberry32(7);
    const terms = ['common', 'shared', 'rare'];
    // Weights on a coarse grid, so equal weights (the cache's tie rule) happen often.
    const docOf = (id: string): SemanticDoc => ({
      memoryId: id,
      terms: terms.filter(() => random() < 0.8),
      weights: [],
      neighbours: [],
    });
    const withWeights = (doc: SemanticDoc): SemanticDoc => ({
      ...doc,
      weights: doc.terms.map(() => Math.ceil(random() * 40) / 40),
    });
    let next = 0;
    const newMemories = async (count: number, via: ArchiveStore = store) => {
      const ids = Array.from({ length: count }, () => `m${next++}`);
      await via.writeMemories(
        'ctx',
        ids.map((id) => write('ctx', id, `text of ${id}`, next)),
      );
      return ids;
    };
    const first = await newMemories(300);
    await store.semantic.replaceAll(
      'ctx',
      { space: 'tfidf', documents: 300, k: 8, createdAt: '2026-01-01T00:00:00Z', df: new Map() },
      first.map((id) => withWeights(docOf(id))),
    );
    const top = 256;
    const fresh = async (term: string, n = top): Promise<SemanticPosting[]> => {
      const reader = createSqliteStore(file, { readonly: true });
      const rows = await reader.semantic.postings('ctx', term, { top: n });
      await reader.close();
      return rows;
    };
    const check = async () => {
      for (const term of terms) {
        expect(await store.semantic.postings('ctx', term, { top })).toEqual(await fresh(term));
        // A short top read is served from the kept long one: the same rows.
        expect(await store.semantic.postings('ctx', term, { top: 32 })).toEqual(await fresh(term, 32));
      }
    };
    await check();
    for (let round = 0; round < 12; round++) {
      const step = round % 4;
      if (step === 0 || step === 1) {
        const ids = await newMemories(25);
        await store.semantic.writeDocs('ctx', { put: ids.map((id) => withWeights(docOf(id))) });
      } else if (step === 2) {
        await store.semantic.writeDocs('ctx', { remove: [`m${round}`, `m${round + 40}`] });
        await store.deleteMemory('ctx', `m${round + 80}`);
      } else {
        const ids = await newMemories(10, other);
        await other.semantic.writeDocs('ctx', { put: ids.map((id) => withWeights(docOf(id))) });
      }
      await check();
    }
    // A unit that wrote documents and then failed: the kept lists must not show them.
    const ids = await newMemories(20);
    await expect(
      store.unitOfWork!('ctx', async () => {
        await store.semantic.writeDocs('ctx', {
          put: ids.map((id) => ({ memoryId: id, terms, weights: [1, 1, 1], neighbours: [] })),
        });
        expect((await store.semantic.postings('ctx', 'common', { top }))[0]!.weight).toBe(1);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await check();
    await other.close();
    await store.close();
  });

  it('rewrites only changed list rows and reads every list back in its order', async () => {
    const file = join(dir, 'slots.db');
    const store = createSqliteStore(file);
    const ids = Array.from({ length: 12 }, (_, i) => `m${i}`);
    await store.writeMemories(
      'ctx',
      ids.map((id, i) => write('ctx', id, `text ${id}`, i)),
    );
    const list = (scores: Array<[string, number]>) =>
      scores.map(([memoryId, score]) => ({ memoryId, score }));
    await store.semantic.replaceAll(
      'ctx',
      { space: 'tfidf', documents: 12, k: 4, createdAt: '2026-01-01T00:00:00Z', df: new Map() },
      ids.map((id) => ({ memoryId: id, terms: ['t'], weights: [1], neighbours: [] })),
    );
    const steps = [
      list([
        ['m1', 0.9],
        ['m2', 0.8],
        ['m3', 0.7],
        ['m4', 0.6],
      ]),
      // a newcomer enters at the top and pushes m4 out
      list([
        ['m5', 0.95],
        ['m1', 0.9],
        ['m2', 0.8],
        ['m3', 0.7],
      ]),
      // a score changes, an entry leaves without a replacement, ties are ordered by id
      list([
        ['m5', 0.95],
        ['m2', 0.9],
        ['m1', 0.9],
      ]),
      list([
        ['m6', 0.5],
        ['m7', 0.5],
        ['m8', 0.4],
        ['m9', 0.3],
      ]),
      list([]),
      list([
        ['m10', 0.2],
        ['m11', 0.1],
      ]),
    ];
    for (const neighbours of steps) {
      await store.semantic.writeDocs('ctx', { lists: [{ memoryId: 'm0', neighbours }] });
      const [doc] = await store.semantic.getDocs('ctx', ['m0']);
      const ordered = [...neighbours].sort((x, y) => y.score - x.score || (x.memoryId < y.memoryId ? -1 : 1));
      expect(doc!.neighbours).toEqual(ordered);
      const named = neighbours.map((n) => n.memoryId);
      for (const id of ids.slice(1)) {
        expect(await store.semantic.referrers('ctx', [id])).toEqual(named.includes(id) ? ['m0'] : []);
      }
    }
    expect((await store.integrityCheck()).ok).toBe(true);
    await store.close();
  });
});
