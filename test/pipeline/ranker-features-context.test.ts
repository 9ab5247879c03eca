import { describe, expect, it } from 'vitest';
import { isDevQuestion } from '../../src/eval/splits.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { isUsableRanker, OFFLINE_RANKER_NAME, RANKER_L2 } from '../../src/pipeline/offline-ranker.ts';
import { properNouns, RANKER_FEATURES, rankerFeatures } from '../../src/pipeline/ranker-features.ts';
import { rankerRecall } from '../../src/pipeline/ranker-refinement.ts';
import {
  fitRankerOnQuestions,
  rankerTrainingQuestions,
  trainOfflineRanker,
} from '../../src/pipeline/train-offline-ranker.ts';
import { tokenize } from '../../src/retrieval/tokenize.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import type { PoolRelation } from '../../src/verify/node-verifier-spec.ts';

const KEY = 'bm25-views@sat1|node=lexical-context-support|edge=anchor-novelty';
const at = (name: (typeof RANKER_FEATURES)[number]) => RANKER_FEATURES.indexOf(name);

function record(id: string, text: string, extra: Partial<MemoryRecord> = {}): MemoryRecord {
  return { id, contextId: 'c', kind: 'message', sequence: 0, text, assets: [], ...extra };
}

function features(
  prompt: string,
  records: MemoryRecord[],
  options: { scores?: number[]; verifier?: number[]; relations?: PoolRelation[] } = {},
) {
  const candidates = records.map((r, position) => ({
    memoryId: r.id,
    alias: `C${position}`,
    record: r,
    retrievalScore: options.scores?.[position] ?? 0.5,
    isAnchor: true,
  }));
  return rankerFeatures({
    question: { prompt, imageCaptions: [] },
    candidates,
    seedRank: new Map(),
    seedCount: 24,
    viewScores: new Map(),
    verifierScores: new Map(records.map((r, i) => [r.id, options.verifier?.[i] ?? 0])),
    relations: options.relations ?? [],
  });
}

describe('ranker features of a memory in its pool', () => {
  it('reads the best retrieval and verifier score of related pool members (round partner, adjacent turn)', () => {
    const rows = features('kayak', [record('a', 'x'), record('b', 'y'), record('c', 'z')], {
      scores: [0.2, 0.8, 0.4],
      verifier: [1, 5, 2],
      relations: [{ a: 'a', b: 'b', types: ['same_round'] }],
    });
    // a's partner b has s 0.8 (the pool max) and v 5; b's partner a has s 0.2 and v 1; c has none.
    expect(rows.map((r) => r[at('neighbour_retrieval')])).toEqual([1, 0.25, 0]);
    expect(rows.map((r) => r[at('neighbour_verifier')])).toEqual([1, 0.2, 0]);
  });

  it('measures the distance to the best-supported turn of the session and how often the session is hit', () => {
    const turn = (id: string, sequence: number, sessionId?: string) =>
      record(id, id, { sequence, ...(sessionId ? { sessionId } : {}) });
    const rows = features(
      'q',
      [turn('a', 10, 's1'), turn('b', 12, 's1'), turn('c', 15, 's1'), turn('d', 3, 's2'), turn('e', 4)],
      {
        verifier: [1, 5, 2, 3, 5],
      },
    );
    // s1's best is b (v 5): a is 2 turns away, c 3; d is the best of its own session; e has no session.
    expect(rows.map((r) => r[at('session_proximity')])).toEqual([1 / 3, 1, 1 / 4, 1, 0]);
    // s1 holds 3 pool members (the pool maximum), s2 one, a memory without a session counts as one.
    expect(rows.map((r) => r[at('session_hits')])).toEqual([1, 1, 1, 1 / 3, 1 / 3]);
  });

  it('orders dated memories in time when the question asks for the latest or the earliest', () => {
    const pool = [
      record('old', 'x', { timestamp: '2024-01-01' }),
      record('mid', 'x', { timestamp: '2024-01-03' }),
      record('new', 'x', { timestamp: '2024-01-05' }),
      record('undated', 'x'),
    ];
    const latest = features('What was the most recent trip?', pool).map((r) => r[at('temporal_order')]);
    expect(latest).toEqual([0, 0.5, 1, 0]);
    const earliest = features('Which dish did I cook first?', pool).map((r) => r[at('temporal_order')]);
    expect(earliest).toEqual([1, 0.5, 0, 0]);
    // No direction (neither word, or both): nothing to order.
    expect(features('What did I cook?', pool).every((r) => r[at('temporal_order')] === 0)).toBe(true);
    expect(features('Was the first trip the latest?', pool).every((r) => r[at('temporal_order')] === 0)).toBe(
      true,
    );
  });

  it('finds proper nouns inside sentences and the share of them a memory states', () => {
    expect(
      properNouns({ prompt: 'Did Caroline go to Paris? What did I buy there?', imageCaptions: [] }),
    ).toEqual([
      ...tokenize('Caroline'),
      ...tokenize('Paris'), // terms of the shared tokenizer (plural folding included)
    ]);
    const rows = features('When did Caroline visit Paris?', [
      record('a', 'Caroline loved Paris in spring'),
      record('b', 'we met Caroline'),
      record('c', 'nothing here'),
    ]);
    expect(rows.map((r) => r[at('entity_overlap')])).toEqual([1, 0.5, 0]);
  });

  it('marks the user role only', () => {
    const rows = features('q', [
      record('u', 'x', { role: 'user' }),
      record('a', 'y', { role: 'assistant' }),
      record('n', 'z', { role: 'Caroline' }),
    ]);
    expect(rows.map((r) => r[at('role_user')])).toEqual([1, 0, 0]);
  });
});

describe('train-ranker', () => {
  it('fits a usable artifact from the dev-fold questions of an archive and ignores the other folds', async () => {
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      const topics = [
        'kayak paddle',
        'violin lesson',
        'garden tomato',
        'passport renewal',
        'pizza oven',
        'chess club',
      ];
      const memories = topics.flatMap((topic, t) => [
        {
          id: `q${t}`,
          text: `Where did I leave the ${topic}?`,
          sessionId: `s${t}`,
          role: 'user',
          roundId: `r${t}`,
        },
        {
          id: `a${t}`,
          text: `The ${topic} is in the shed`,
          sessionId: `s${t}`,
          role: 'assistant',
          roundId: `r${t}`,
        },
        {
          id: `n${t}`,
          text: `Unrelated chatter about weather number ${t}`,
          sessionId: `s${t}`,
          role: 'user',
        },
      ]);
      await gm.addMemories('alice', memories);
      // Question ids chosen by their fold: three in the dev fold (0), one outside it with gold on a memory
      // no dev question points at, so a fit that read it would see another sample count.
      const ids = Array.from({ length: 200 }, (_, i) => `question-${i}`);
      const dev = ids.filter(isDevQuestion).slice(0, 5);
      const heldout = ids.find((id) => !isDevQuestion(id))!;
      await gm.store.putQuestions([
        ...dev.map((id, i) => ({
          id,
          contextId: 'alice',
          prompt: `Where is my ${topics[i]}?`,
          answer: { text: 'shed' },
          evidence: [`a${i}`],
        })),
        { id: heldout, contextId: 'alice', prompt: 'Where is my chess club?', answer: {}, evidence: ['a5'] },
      ]);
      const ranker = await trainOfflineRanker([gm.store], {
        include: (q) => isDevQuestion(q.id),
        provenance: { command: 'test' },
      });
      expect(ranker.questions).toBe(5);
      expect(ranker.name).toBe(OFFLINE_RANKER_NAME);
      expect(ranker.features).toEqual([...RANKER_FEATURES]);
      expect(isUsableRanker(ranker, KEY)).toBe(true);
      expect(ranker.fittedOn?.positives).toBe(5);
      expect(ranker.fittedOn?.pools).toEqual({ units: 5, turns: 0 });
      expect(ranker.fittedOn?.l2).toBe(RANKER_L2);

      // The same fit in its two steps (what bench/ranker-loco-probe.ts runs per held-out context).
      const sets = await rankerTrainingQuestions([gm.store], { include: (q) => isDevQuestion(q.id) });
      expect(sets.map((set) => set.map((q) => [q.contextId, q.questionId, q.gold.size]))).toEqual([
        dev.map((id) => ['alice', id, 1]),
      ]);
      expect(fitRankerOnQuestions(sets, KEY, { command: 'test' })).toEqual(ranker);
      // The replayed recall of the fitted ranker is the kappa fit's recall at the kappa it kept.
      const tried = ranker.fittedOn!.refinementKappa as { recall: { kappa: number; recall: number }[] };
      const kept = tried.recall.find((r) => r.kappa === (ranker.refinement?.kappa ?? 0.12))!;
      expect(rankerRecall(ranker, sets[0]!)).toBeCloseTo(kept.recall, 6);
      // A larger penalty shrinks the weights and is recorded.
      const stiff = fitRankerOnQuestions(sets, KEY, { command: 'test' }, { l2: 100 * RANKER_L2 });
      const norm = (w: readonly number[]) => Math.hypot(...w);
      expect(norm(stiff.weights)).toBeLessThan(norm(ranker.weights));
      expect(stiff.fittedOn?.l2).toBe(100 * RANKER_L2);
    } finally {
      await gm.close();
    }
  });
});
