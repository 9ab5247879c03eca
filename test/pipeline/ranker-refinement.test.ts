import { describe, expect, it } from 'vitest';
import { DEFAULT_SOLVER_PARAMS } from '../../src/core/candidate-graph.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import {
  isUsableRanker,
  OFFLINE_RANKER_NAME,
  OFFLINE_RANKER_VERSION,
  type OfflineRanker,
  resolveRanker,
} from '../../src/pipeline/offline-ranker.ts';
import { RANKER_FEATURES } from '../../src/pipeline/ranker-features.ts';
import {
  fitRankerRefinement,
  type RankerQuestion,
  rankerPoolAndEdges,
  rankerRecall,
} from '../../src/pipeline/ranker-refinement.ts';
import type { JudgedEdge } from '../../src/pipeline/retrieval-result.ts';

const KEY = 'bm25-views@sat1|node=lexical-context-support|edge=anchor-novelty';
const logit = (p: number) => Math.log(p / (1 - p));

/** prize = sigmoid(verifier feature): rows below are written as the prize they give. */
const ranker: OfflineRanker = {
  name: OFFLINE_RANKER_NAME,
  version: OFFLINE_RANKER_VERSION,
  key: KEY,
  features: [...RANKER_FEATURES],
  weights: RANKER_FEATURES.map((name) => (name === 'verifier' ? 1 : 0)),
  calibration: { units: { a: 1, c: 0 }, turns: { a: 1, c: 0 } },
  edgeReliability: { units: { a: 1, c: -3 }, turns: { a: 1, c: -1 } },
};
const row = (prize: number) => RANKER_FEATURES.map((name) => (name === 'verifier' ? logit(prize) : 0));

function edge(a: string, b: string, extra: Partial<JudgedEdge> = {}): JudgedEdge {
  return {
    a,
    b,
    weight: 0.99,
    cost: -Math.log(0.99),
    relationTypes: ['same_round'],
    role: 'new_fact',
    incrementalSupport: 5,
    kept: true,
    ...extra,
  };
}

function question(
  prizes: Record<string, number>,
  gold: string[],
  edges: JudgedEdge[] = [],
  goldCount = gold.length,
): RankerQuestion {
  return {
    ids: Object.keys(prizes),
    rows: Object.values(prizes).map(row),
    shape: 'turns',
    edges,
    records: new Map(),
    gold: new Set(gold),
    goldCount,
  };
}

describe('rankerPoolAndEdges', () => {
  it('gives cross-unit edges the fitted reliability of the shape and zeroes repeats', () => {
    const prized = [
      { memoryId: 'a', position: 0, prize: 0.6 },
      { memoryId: 'b', position: 1, prize: 0.3 },
      { memoryId: 'c', position: 2, prize: 0.2 },
    ];
    const { pool, edges } = rankerPoolAndEdges(
      ranker,
      prized,
      [
        edge('a', 'b', { relationTypes: ['consecutive_turn'], incrementalSupport: 2 }),
        edge('a', 'c', { role: 'redundant', kept: false }),
      ],
      'turns',
      new Map(),
    );
    const w = 1 / (1 + Math.exp(-(2 - 1)));
    expect(edges[0]!.weight).toBeCloseTo(w, 12);
    expect(edges[0]!.cost).toBeCloseTo(-Math.log(w), 12);
    expect(edges[1]!.weight).toBe(0.99); // not kept: untouched
    expect(pool.map((c) => c.prize)).toEqual([0.6, 0.3, 0]);
  });
});

describe('fitRankerRefinement', () => {
  it('replays the ranker prizes through the solver and picks the kappa that keeps low-prize gold', () => {
    // g (p 0.05) is gold and isolated: kept below kappa 0.05 only. r repeats a: prize 0 at every kappa.
    const sets = [
      [
        question(
          { a: 0.9, g: 0.05, r: 0.5 },
          ['a', 'g'],
          [edge('a', 'r', { role: 'redundant', kept: false })],
        ),
      ],
      [question({ b: 0.8, x: 0.03 }, ['b'])],
    ];
    const fit = fitRankerRefinement(ranker, sets);
    expect(fit.recall.map((r) => [r.kappa, r.recall])).toEqual([
      [0, 1],
      [0.01, 1],
      [0.02, 1],
      [0.04, 1],
      [0.06, 0.75],
      [0.08, 0.75],
      [0.1, 0.75],
      [0.12, 0.75],
    ]);
    expect(fit.kappa).toBe(0.04); // ties go to the larger kappa
    expect(fit.questions).toBe(2);
  });

  it("rankerRecall replays the packets with the ranker's own kappa (the paper's without one)", () => {
    const questions = [
      question({ a: 0.9, g: 0.05, r: 0.5 }, ['a', 'g'], [edge('a', 'r', { role: 'redundant', kept: false })]),
      question({ b: 0.8, x: 0.03 }, ['b'], [], 2),
    ];
    // g (0.05) is kept below kappa 0.05 only; the second question has one of its two gold in the pool.
    expect(rankerRecall({ ...ranker, refinement: { kappa: 0.04 } }, questions)).toBeCloseTo(0.75, 12);
    expect(rankerRecall({ ...ranker, refinement: { kappa: 0.06 } }, questions)).toBeCloseTo(0.5, 12);
    expect(rankerRecall(ranker, questions)).toBeCloseTo(0.5, 12);
    expect(rankerRecall(ranker, [])).toBe(0);
  });

  it('keeps the paper kappa when nothing beats it by 0.5 points', () => {
    // Keeping g finds 1 of 300 gold (0.33 points): below the rule, so 0.12 stays although 0.04 scores higher.
    const fit = fitRankerRefinement(ranker, [[question({ a: 0.9, g: 0.05 }, ['a', 'g'], [], 300)]]);
    expect(fit.recall.find((r) => r.kappa === 0.04)!.recall).toBeCloseTo(2 / 300, 12);
    expect(fit.kappa).toBe(DEFAULT_SOLVER_PARAMS.kappa);
  });
});

describe('the ranker refinement kappa', () => {
  it('is optional in the artifact but must be a finite number >= 0', () => {
    expect(isUsableRanker({ ...ranker, refinement: { kappa: 0.05 } }, KEY)).toBe(true);
    expect(isUsableRanker({ ...ranker, refinement: { kappa: -0.1 } }, KEY)).toBe(false);
    expect(isUsableRanker({ ...ranker, refinement: { kappa: Number.NaN } }, KEY)).toBe(false);
  });

  it('is what retrieve solves with when the shipped ranker makes the prizes; a caller kappa wins', async () => {
    const shipped = resolveRanker(KEY)?.refinement?.kappa;
    expect(shipped).toBeDefined();
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      await gm.addMemories('alice', [
        { id: 'm1', text: 'The design review moved to Monday', timestamp: '2024-04-03' },
        { id: 'm2', text: 'Lunch with Bob on Friday', timestamp: '2024-04-04' },
      ]);
      const question = { prompt: 'When is the design review?' };
      const offline = await gm.retrieve('alice', question);
      expect(offline.forest.trace.params?.kappa).toBe(shipped);
      expect(offline.trace.components.solver).toContain(`kappa ${shipped}`);
      const caller = await gm.retrieve('alice', question, { solver: { kappa: 0.3 } });
      expect(caller.forest.trace.params?.kappa).toBe(0.3);
      const none = await gm.retrieve('alice', question, { verifiers: 'none' });
      expect(none.forest.trace.params?.kappa).toBe(DEFAULT_SOLVER_PARAMS.kappa);
    } finally {
      await gm.close();
    }
  });
});
