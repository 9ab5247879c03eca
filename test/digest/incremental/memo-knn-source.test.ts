import { describe, expect, it } from 'vitest';
import { memoKnnSource } from '../../../src/digest/incremental/memo-knn-source.ts';
import { mulberry32 } from '../../../src/digest/semantic/seeded-random.ts';
import type { ArchiveStore } from '../../../src/store/archive-store-spec.ts';
import { createMemoryStore } from '../../../src/store/memory-store.ts';
import type { SemanticPostingFilter } from '../../../src/store/semantic-index-spec.ts';
import { createSqliteStore } from '../../../src/store/sqlite-store.ts';
import { write } from '../../store/store-conformance.ts';

/**
 * The insert chunk's cached view of the index (memo-knn-source.ts) serves a term's weight windows from one
 * prefix: every answer must equal the store's own for the same filter, in the same order, whatever the
 * sequence of windows and top reads (the newcomers of a chunk ask for different cutoffs of the same terms).
 */
describe('memoKnnSource posting prefixes', () => {
  for (const [name, open] of [
    ['memory', () => createMemoryStore()],
    ['sqlite', () => createSqliteStore(':memory:')],
  ] as Array<[string, () => ArchiveStore]>) {
    it(`answers every window and top read as the ${name} store does`, async () => {
      const store = open();
      const random = mulberry32(3);
      const ids = Array.from({ length: 400 }, (_, i) => `m${String(i).padStart(3, '0')}`);
      await store.writeMemories(
        'ctx',
        ids.map((id, i) => write('ctx', id, `text ${id}`, i)),
      );
      const terms = ['alpha', 'beta', 'gamma'];
      await store.semantic.replaceAll(
        'ctx',
        { space: 'tfidf', documents: ids.length, k: 8, createdAt: '2026-01-01T00:00:00Z', df: new Map() },
        ids.map((memoryId) => {
          const own = terms.filter(() => random() < 0.7);
          // A coarse grid of weights: ties at window edges are common.
          return {
            memoryId,
            terms: own,
            weights: own.map(() => Math.ceil(random() * 30) / 30),
            neighbours: [],
          };
        }),
      );
      const direct = (term: string, filter: SemanticPostingFilter) =>
        store.semantic.postings('ctx', term, filter);
      for (let trial = 0; trial < 20; trial++) {
        // Odd trials read some terms' whole lists on their first window (`wholeList`): same answers.
        const memo = memoKnnSource({
          termBounds: (t, o) => store.semantic.termBounds('ctx', t, o),
          postings: direct,
          getDocs: (list) => store.semantic.getDocs('ctx', list),
          wholeList: (term) => trial % 2 === 1 && term !== 'gamma',
        });
        const below = new Map<string, number>();
        for (let read = 0; read < 12; read++) {
          const term = terms[Math.floor(random() * terms.length)]!;
          const pick = random();
          let filter: SemanticPostingFilter;
          if (pick < 0.25) filter = { top: 1 + Math.floor(random() * 60) };
          else {
            const minWeight = Math.floor(random() * 31) / 30 - (random() < 0.2 ? 0.001 : 0);
            const upper = below.get(term);
            filter = pick < 0.6 || upper === undefined ? { minWeight } : { minWeight, below: upper };
            below.set(term, minWeight);
          }
          expect(await memo.postings(term, filter)).toEqual(await direct(term, filter));
        }
      }
      await store.close();
    });
  }
});
