import { expect, it } from 'vitest';
import type { ArchiveStore, MemoryWrite } from '../../src/store/archive-store-spec.ts';
import type { SemanticDoc, SemanticSnapshotInput } from '../../src/store/semantic-index-spec.ts';

/**
 * Conformance of the `semantic` sub-port (src/store/semantic-index-spec.ts); registered inside
 * describeStoreConformance, so it runs against every backend.
 */
export function semanticIndexConformance(current: () => ArchiveStore, write: WriteFactory): void {
  const setUp = async (): Promise<ArchiveStore> => {
    const store = current();
    await store.writeMemories(
      'ctx',
      ['a', 'b', 'c', 'd'].map((id, i) => write('ctx', id, `text ${id}`, i)),
    );
    await store.writeMemories('other', [write('other', 'a', 'elsewhere', 0)]);
    await store.semantic.replaceAll('ctx', SNAPSHOT, DOCS);
    return store;
  };

  it('semantic: no snapshot before compaction, and writes need one', async () => {
    const store = current();
    await store.writeMemories('ctx', [write('ctx', 'a', 'x', 0)]);
    expect(await store.semantic.getSnapshot('ctx')).toBeUndefined();
    expect(await store.semantic.getDocs('ctx', ['a'])).toEqual([]);
    await expect(store.semantic.writeDocs('ctx', { remove: ['a'] })).rejects.toMatchObject({ code: 'STORE' });
  });

  it('semantic: replaceAll round-trips snapshot, df, vectors and lists, per context', async () => {
    const store = await setUp();
    expect(await store.semantic.getSnapshot('ctx')).toEqual({
      space: 'tfidf',
      documents: 4,
      k: 2,
      createdAt: '2026-01-01T00:00:00.000Z',
      changes: 0,
    });
    expect(await store.semantic.getSnapshot('other')).toBeUndefined();
    expect(await store.semantic.documentFrequencies('ctx', ['pear', 'kiwi', 'apple'])).toEqual(
      new Map([
        ['pear', 3],
        ['apple', 2],
      ]),
    );
    expect(await store.semantic.getDocs('ctx', ['c', 'zz', 'a'])).toEqual([
      doc('c', { apple: 0.8, pear: 0.6 }, [
        ['a', 0.25],
        ['b', 0.2],
      ]),
      doc('a', { apple: 0.6, pear: 0.8 }, [
        ['b', 0.5],
        ['c', 0.25],
      ]),
    ]);
    expect(await store.semantic.getDocs('other', ['a'])).toEqual([]);
    expect(await store.semantic.referrers('ctx', ['a'])).toEqual(['b', 'c']);
    expect(await store.semantic.referrers('ctx', ['c', 'b'])).toEqual(['a', 'c']);
    const thresholds = await store.semantic.thresholds('ctx');
    expect([...thresholds.keys()].sort()).toEqual(['a', 'b', 'c']);
    expect(thresholds.get('a')).toBeCloseTo(0.25, 6);
    expect(thresholds.get('b')).toBe(0);
    if (store.semantic.getLists) {
      // The lists alone, as getDocs has them (ids without a document left out; an empty list may be).
      await store.semantic.writeDocs('ctx', { lists: [{ memoryId: 'b', neighbours: [] }] });
      const docs = await store.semantic.getDocs('ctx', ['a', 'b', 'c']);
      const lists = await store.semantic.getLists('ctx', ['c', 'zz', 'a', 'b', 'a']);
      expect(lists.get('b') ?? []).toEqual([]);
      lists.delete('b');
      expect(lists).toEqual(
        new Map(docs.filter((d) => d.memoryId !== 'b').map((d) => [d.memoryId, d.neighbours])),
      );
      expect(await store.semantic.getLists('other', ['a'])).toEqual(new Map());
    }
    if (store.semantic.getVectors) {
      // The vectors alone, as getDocs has them, each with its list's entry bound (thresholds above).
      const docs = await store.semantic.getDocs('ctx', ['c', 'a', 'b']);
      const vectors = await store.semantic.getVectors('ctx', ['c', 'zz', 'a', 'b']);
      expect(vectors).toEqual(
        docs.map((doc) => ({
          memoryId: doc.memoryId,
          terms: doc.terms,
          weights: doc.weights,
          threshold: thresholds.get(doc.memoryId),
        })),
      );
      expect(await store.semantic.getVectors('other', ['a'])).toEqual([]);
    }
  });

  it('semantic: postings by weight, by ratio, and term bounds', async () => {
    const store = await setUp();
    const ids = (rows: ReadonlyArray<{ memoryId: string }>) => rows.map((row) => row.memoryId);
    expect(await store.semantic.postings('ctx', 'pear', { top: 2 })).toEqual([
      { memoryId: 'b', weight: 1 },
      { memoryId: 'a', weight: 0.8 },
    ]);
    expect(ids(await store.semantic.postings('ctx', 'pear', { minWeight: 0.6 }))).toEqual(['b', 'a', 'c']);
    expect(ids(await store.semantic.postings('ctx', 'apple', { minWeight: 0.7 }))).toEqual(['c']);
    expect(ids(await store.semantic.postings('ctx', 'pear', { minWeight: 0.6, below: 1 }))).toEqual([
      'a',
      'c',
    ]);
    // Thresholds (k = 2): a 0.25, b open (one entry), c 0.2 (each less 1e-8). apple ratios: a 2.4, c 4.
    expect(ids(await store.semantic.postings('ctx', 'apple', { minRatio: 3 }))).toEqual(['c']);
    expect(ids(await store.semantic.postings('ctx', 'pear', { minRatio: 3.1 })).sort()).toEqual(['a', 'b']);
    expect(ids(await store.semantic.postings('ctx', 'pear', { minRatio: 2, below: 3.1 }))).toEqual(['c']);
    const bounds = await store.semantic.termBounds('ctx', ['apple', 'pear', 'kiwi'], { ratio: true });
    expect([...bounds.keys()].sort()).toEqual(['apple', 'pear']);
    expect(bounds.get('apple')!.maxWeight).toBeCloseTo(0.8, 6);
    expect(bounds.get('apple')!.maxRatio).toBeCloseTo(4, 6);
    expect(bounds.get('pear')!.maxRatio).toBe(Number.POSITIVE_INFINITY);
    // Without { ratio: true } maxRatio may be skipped, but never below the true bound.
    const plain = await store.semantic.termBounds('ctx', ['apple']);
    expect(plain.get('apple')!.maxWeight).toBeCloseTo(0.8, 6);
    expect(plain.get('apple')!.maxRatio).toBeGreaterThanOrEqual(4 - 1e-6);
  });

  it('semantic: a word only one memory held leaves the snapshot df when that memory is replaced or deleted', async () => {
    const store = current();
    await store.writeMemories(
      'ctx',
      ['a', 'b', 'c'].map((id, i) => write('ctx', id, `text ${id}`, i)),
    );
    await store.semantic.replaceAll(
      'ctx',
      {
        ...SNAPSHOT,
        documents: 3,
        df: new Map([
          ['pear', 3],
          ['kiwi', 1],
          ['fig', 1],
        ]),
      },
      [
        doc('a', { pear: 1 }, []),
        doc('b', { kiwi: 0.6, pear: 0.8 }, []),
        doc('c', { fig: 0.6, pear: 0.8 }, []),
      ],
    );
    // b rewritten (its words leave the index later, in the relation update): kiwi, df 1 in the frozen
    // snapshot, is dropped with the old version. Before round 53 it stayed, and outlived a delete of b.
    await store.writeMemories('ctx', [write('ctx', 'b', 'something else entirely', 1)]);
    expect(await store.semantic.documentFrequencies('ctx', ['pear', 'kiwi', 'fig'])).toEqual(
      new Map([
        ['pear', 3],
        ['fig', 1],
      ]),
    );
    expect(await store.deleteMemory('ctx', 'c')).toBe(true);
    expect(await store.semantic.documentFrequencies('ctx', ['pear', 'kiwi', 'fig'])).toEqual(
      new Map([['pear', 3]]),
    );
  });

  it('semantic: writeDocs puts, relists and removes in one go; deleteMemory drops the own document', async () => {
    const store = await setUp();
    await store.semantic.writeDocs('ctx', {
      put: [doc('d', { apple: 1 }, [['c', 0.8]])],
      lists: [
        {
          memoryId: 'b',
          neighbours: [
            { memoryId: 'a', score: 0.5 },
            { memoryId: 'c', score: 0.4 },
          ],
        },
      ],
      remove: ['a'],
    });
    expect((await store.semantic.getSnapshot('ctx'))!.changes).toBe(2);
    expect(await store.semantic.getDocs('ctx', ['a'])).toEqual([]);
    expect((await store.semantic.getDocs('ctx', ['b']))[0]!.neighbours.map((n) => n.memoryId)).toEqual([
      'a',
      'c',
    ]);
    // b's list is full now: threshold 0.4, pear ratio 2.5 (c keeps 3).
    const pear = await store.semantic.postings('ctx', 'pear', { minRatio: 2.6 });
    expect(pear.map((p) => p.memoryId)).toEqual(['c']);
    expect((await store.semantic.postings('ctx', 'apple', { top: 5 })).map((p) => p.memoryId)).toEqual([
      'd',
      'c',
    ]);
    expect(await store.semantic.referrers('ctx', ['c'])).toEqual(['b', 'd']);
    await store.deleteMemory('ctx', 'c');
    expect(await store.semantic.getDocs('ctx', ['c'])).toEqual([]);
    expect((await store.semantic.postings('ctx', 'apple', { top: 5 })).map((p) => p.memoryId)).toEqual(['d']);
    // Lists naming the deleted memory stay until refilled: referrers finds them.
    expect(await store.semantic.referrers('ctx', ['c'])).toEqual(['b', 'd']);
    await expect(
      store.semantic.writeDocs('ctx', { put: [doc('nope', { apple: 1 }, [])] }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    // A list for a memory without a document (deleted c) is refused, with or without entries, and the
    // call writes nothing (d's list in the same call stays as it was).
    const before = await store.semantic.getDocs('ctx', ['d']);
    for (const neighbours of [[], [{ memoryId: 'd', score: 0.5 }]]) {
      await expect(
        store.semantic.writeDocs('ctx', {
          lists: [
            { memoryId: 'd', neighbours: [] },
            { memoryId: 'c', neighbours },
          ],
        }),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      expect(await store.semantic.getDocs('ctx', ['d'])).toEqual(before);
    }
    expect((await store.integrityCheck()).ok).toBe(true);
  });

  it('semantic: a put of a stored document replaces its vector, postings and list', async () => {
    const store = await setUp();
    // a had apple + pear and the list [b, c]; now only apple, and the list [c].
    await store.semantic.writeDocs('ctx', { put: [doc('a', { apple: 0.9 }, [['c', 0.3]])] });
    const [a] = await store.semantic.getDocs('ctx', ['a']);
    expect(a).toEqual(doc('a', { apple: 0.9 }, [['c', 0.3]]));
    expect((await store.semantic.postings('ctx', 'pear', { top: 5 })).map((p) => p.memoryId)).toEqual([
      'b',
      'c',
    ]);
    expect((await store.semantic.postings('ctx', 'apple', { top: 5 })).map((p) => p.memoryId)).toEqual([
      'a',
      'c',
    ]);
    // c's list still names b; a's does not any more.
    expect(await store.semantic.referrers('ctx', ['b'])).toEqual(['c']);
    expect((await store.integrityCheck()).ok).toBe(true);
  });

  it('semantic: a staged replace, committed, leaves what replaceAll leaves; nothing shows before', async (test) => {
    const store = await setUp();
    if (!store.semantic.stagedReplace) test.skip(); // optional: such a backend rebuilds with replaceAll
    const ids = ['a', 'b', 'c', 'd'];
    await store.writeMemories(
      'twin',
      ids.map((id, i) => write('twin', id, `text ${id}`, i)),
    );
    const staged = store.semantic.stagedReplace!('twin', SNAPSHOT.k);
    await staged.stage([DOCS[0]!]);
    await staged.stage([]);
    await staged.stage(DOCS.slice(1));
    expect(await store.semantic.getSnapshot('twin')).toBeUndefined();
    expect(await store.semantic.getDocs('twin', ids)).toEqual([]);
    await staged.commit(SNAPSHOT);
    const terms = ['apple', 'pear', 'kiwi'];
    expect(await semanticState(store, 'twin', ids, terms)).toEqual(
      await semanticState(store, 'ctx', ids, terms),
    );
    await expect(staged.stage(DOCS)).rejects.toMatchObject({ code: 'STORE' });
    await expect(staged.commit(SNAPSHOT)).rejects.toMatchObject({ code: 'STORE' });
    await staged.abort(); // spent: nothing to drop
    // Over a stored state: the old one stays readable until the commit replaces all of it.
    const again = store.semantic.stagedReplace!('twin', 3);
    await again.stage([doc('d', { kiwi: 1 }, [['a', 0.1]])]);
    expect(await semanticState(store, 'twin', ids, terms)).toEqual(
      await semanticState(store, 'ctx', ids, terms),
    );
    const fresh = { ...SNAPSHOT, k: 3, documents: 1, df: new Map([['kiwi', 1]]) };
    await again.commit(fresh);
    expect(await store.semantic.getSnapshot('twin')).toEqual({
      space: 'tfidf',
      documents: 1,
      k: 3,
      createdAt: SNAPSHOT.createdAt,
      changes: 0,
    });
    expect(await store.semantic.getDocs('twin', ids)).toEqual([doc('d', { kiwi: 1 }, [['a', 0.1]])]);
    expect(await store.semantic.postings('twin', 'pear', { top: 5 })).toEqual([]);
    expect(await store.semantic.referrers('twin', ['a'])).toEqual(['d']);
    expect(await store.semantic.thresholds('twin')).toEqual(new Map([['d', 0]]));
    expect((await store.integrityCheck()).ok).toBe(true);
  });

  it('semantic: replaceAll naming an unknown memory is refused and changes nothing', async () => {
    const store = await setUp();
    const ids = ['a', 'b', 'c', 'd'];
    const terms = ['apple', 'pear', 'kiwi'];
    const before = await semanticState(store, 'ctx', ids, terms);
    // The unknown memory comes last: the rows of the documents before it are written first, then taken back.
    await expect(
      store.semantic.replaceAll('ctx', { ...SNAPSHOT, documents: 2 }, [
        doc('d', { kiwi: 1 }, []),
        doc('nope', { kiwi: 1 }, [['d', 0.5]]),
      ]),
    ).rejects.toThrow();
    expect(await semanticState(store, 'ctx', ids, terms)).toEqual(before);
    expect(await store.semantic.getDocs('ctx', ['nope'])).toEqual([]);
    expect((await store.integrityCheck()).ok).toBe(true);
  });

  it('semantic: a staged replace that fails or is aborted changes nothing', async (test) => {
    const store = await setUp();
    if (!store.semantic.stagedReplace) test.skip();
    const ids = ['a', 'b', 'c', 'd'];
    const terms = ['apple', 'pear', 'kiwi'];
    const before = await semanticState(store, 'ctx', ids, terms);
    // An unknown memory: the commit is refused and the stored state stays whole.
    const unknown = store.semantic.stagedReplace!('ctx', 2);
    await unknown.stage([doc('d', { kiwi: 1 }, []), doc('nope', { kiwi: 1 }, [])]);
    await expect(unknown.commit({ ...SNAPSHOT, documents: 2 })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    expect(await semanticState(store, 'ctx', ids, terms)).toEqual(before);
    await expect(unknown.stage([])).rejects.toMatchObject({ code: 'STORE' });
    // Another k than the staging's (its thresholds were computed for k = 2).
    const otherK = store.semantic.stagedReplace!('ctx', 2);
    await otherK.stage([doc('d', { kiwi: 1 }, [])]);
    await expect(otherK.commit({ ...SNAPSHOT, k: 3 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    // A failed commit spends the staging too.
    await expect(otherK.commit(SNAPSHOT)).rejects.toMatchObject({ code: 'STORE' });
    expect(await semanticState(store, 'ctx', ids, terms)).toEqual(before);
    // Aborted: nothing of it is ever written.
    const aborted = store.semantic.stagedReplace!('ctx', 2);
    await aborted.stage([doc('d', { kiwi: 1 }, [])]);
    await aborted.abort();
    await expect(aborted.commit(SNAPSHOT)).rejects.toMatchObject({ code: 'STORE' });
    expect(await semanticState(store, 'ctx', ids, terms)).toEqual(before);
    expect((await store.integrityCheck()).ok).toBe(true);
  });

  it('semantic: replaceSnapshot replaces the snapshot and df only, and resets changes', async () => {
    const store = await setUp();
    const index = store.semantic;
    if (!index.replaceSnapshot) return; // optional: such a backend compacts in one turn
    await index.writeDocs('ctx', { put: [doc('d', { kiwi: 1 }, [])] });
    expect((await index.getSnapshot('ctx'))?.changes).toBe(1);
    await index.replaceSnapshot('ctx', {
      space: 'tfidf',
      documents: 5,
      k: 3,
      createdAt: '2026-02-01T00:00:00.000Z',
      df: new Map([
        ['kiwi', 1],
        ['pear', 2],
      ]),
    });
    expect(await index.getSnapshot('ctx')).toEqual({
      space: 'tfidf',
      documents: 5,
      k: 3,
      createdAt: '2026-02-01T00:00:00.000Z',
      changes: 0,
    });
    expect(await index.documentFrequencies('ctx', ['apple', 'pear', 'kiwi'])).toEqual(
      new Map([
        ['pear', 2],
        ['kiwi', 1],
      ]),
    );
    // Documents, postings and lists are the ones written before.
    expect(await index.getDocs('ctx', ['a', 'd'])).toEqual([
      doc('a', { apple: 0.6, pear: 0.8 }, [
        ['b', 0.5],
        ['c', 0.25],
      ]),
      doc('d', { kiwi: 1 }, []),
    ]);
    expect((await index.postings('ctx', 'pear', { top: 5 })).map((p) => p.memoryId)).toEqual(['b', 'a', 'c']);
    // Another context is untouched; a context without a snapshot gets one.
    expect(await index.getSnapshot('other')).toBeUndefined();
    await index.replaceSnapshot('other', {
      space: 'tfidf',
      documents: 1,
      k: 2,
      createdAt: '2026-02-01T00:00:00.000Z',
      df: new Map([['elsewhere', 1]]),
    });
    expect((await index.getSnapshot('other'))?.documents).toBe(1);
    await index.writeDocs('other', { put: [doc('a', { elsewhere: 1 }, [])] });
    expect(await index.getDocs('other', ['a'])).toEqual([doc('a', { elsewhere: 1 }, [])]);
    expect((await index.getSnapshot('ctx'))?.documents).toBe(5);
    expect((await store.integrityCheck()).ok).toBe(true);
  });
}

type WriteFactory = (contextId: string, id: string, text: string, sequence: number) => MemoryWrite;

/** setUp's state of 'ctx'. */
const SNAPSHOT: SemanticSnapshotInput = {
  space: 'tfidf',
  documents: 4,
  k: 2,
  createdAt: '2026-01-01T00:00:00.000Z',
  df: new Map([
    ['apple', 2],
    ['pear', 3],
  ]),
};
const DOCS: SemanticDoc[] = [
  doc('a', { apple: 0.6, pear: 0.8 }, [
    ['b', 0.5],
    ['c', 0.25],
  ]),
  doc('b', { pear: 1 }, [['a', 0.5]]),
  doc('c', { apple: 0.8, pear: 0.6 }, [
    ['a', 0.25],
    ['b', 0.2],
  ]),
];

/** Everything the port reads back of a context's semantic state over `ids` and `terms`. */
async function semanticState(
  store: ArchiveStore,
  contextId: string,
  ids: readonly string[],
  terms: readonly string[],
): Promise<unknown> {
  const index = store.semantic;
  const postings: unknown[] = [];
  for (const term of terms) {
    postings.push(
      await index.postings(contextId, term, { top: 100 }),
      [...(await index.postings(contextId, term, { minRatio: 0 }))].sort((x, y) =>
        x.memoryId < y.memoryId ? -1 : 1,
      ),
    );
  }
  return {
    snapshot: await index.getSnapshot(contextId),
    df: await index.documentFrequencies(contextId, terms),
    docs: await index.getDocs(contextId, ids),
    postings,
    bounds: await index.termBounds(contextId, terms, { ratio: true }),
    referrers: await Promise.all(ids.map((id) => index.referrers(contextId, [id]))),
    thresholds: await index.thresholds(contextId),
  };
}

function doc(memoryId: string, vector: Record<string, number>, list: Array<[string, number]>): SemanticDoc {
  const terms = Object.keys(vector).sort();
  return {
    memoryId,
    terms,
    weights: terms.map((term) => vector[term]!),
    neighbours: list.map(([id, score]) => ({ memoryId: id, score })),
  };
}
