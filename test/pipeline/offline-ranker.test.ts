import { describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import {
  fitOfflineRanker,
  isUsableRanker,
  OFFLINE_RANKER_NAME,
  OFFLINE_RANKER_VERSION,
  type OfflineRanker,
  rankerPrizes,
  resolveRanker,
  withoutRepeatPrizes,
} from '../../src/pipeline/offline-ranker.ts';
import {
  featureRow,
  poolShape,
  RANKER_FEATURES,
  rankerFeatures,
} from '../../src/pipeline/ranker-features.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';

const KEY = 'bm25-views@sat1|node=lexical-context-support|edge=anchor-novelty';
const d = RANKER_FEATURES.length;
const at = (name: (typeof RANKER_FEATURES)[number]) => RANKER_FEATURES.indexOf(name);

function record(id: string, text: string, extra: Partial<MemoryRecord> = {}): MemoryRecord {
  return { id, contextId: 'c', kind: 'message', sequence: 0, text, assets: [], ...extra };
}

describe('ranker features', () => {
  it('lays a candidate out in RANKER_FEATURES order (the artifact weights are read by position)', () => {
    const values = Object.fromEntries(RANKER_FEATURES.map((name, i) => [name, i + 0.5])) as Record<
      (typeof RANKER_FEATURES)[number],
      number
    >;
    expect(featureRow(values)).toEqual(RANKER_FEATURES.map((_, i) => i + 0.5));
  });

  it('normalises continuous features by the pool maximum and states binary facts', () => {
    const candidates = [
      record('a', 'Ann adopted a grey cat in 2023', {
        speaker: 'Ann',
        timestamp: '2023-05-08',
        assets: [{ id: 'i', kind: 'image' }],
      }),
      record('b', 'the weather was fine', { speaker: 'Bo', timestamp: '2024-01-02' }),
    ].map((r, position) => ({
      memoryId: r.id,
      alias: `C0${position}`,
      record: r,
      retrievalScore: position === 0 ? 0.4 : 0.1,
      isAnchor: true,
    }));
    const rows = rankerFeatures({
      question: { prompt: 'Which photo shows the cat Ann adopted in May 2023?', imageCaptions: [] },
      candidates,
      seedRank: new Map([
        ['a', 0],
        ['b', 1],
      ]),
      seedCount: 4,
      viewScores: new Map([
        ['a', { text: 0.4, metadata: 0.2 }],
        ['b', { metadata: 0.1 }],
      ]),
      verifierScores: new Map([
        ['a', 5],
        ['b', 1],
      ]),
      relations: [],
    });
    const [a, b] = rows as [number[], number[]];
    expect(a.length).toBe(d);
    expect(a[at('retrieval')]).toBe(1);
    expect(b[at('retrieval')]).toBeCloseTo(0.25, 12);
    expect(a[at('seed_rank')]).toBe(1);
    expect(b[at('seed_rank')]).toBeCloseTo(0.75, 12);
    expect(b[at('view_text')]).toBe(0);
    expect(b[at('view_metadata')]).toBeCloseTo(0.5, 12);
    expect(a[at('verifier')]).toBe(1);
    expect(b[at('verifier')]).toBeCloseTo(0.2, 12);
    expect([a[at('has_media')], a[at('media_asked')], b[at('has_media')]]).toEqual([1, 1, 0]);
    expect([a[at('speaker_named')], b[at('speaker_named')]]).toEqual([1, 0]);
    expect([a[at('number_overlap')], b[at('number_overlap')]]).toEqual([1, 0]);
    expect([a[at('date_named')], b[at('date_named')]]).toEqual([1, 0]);
    expect(a[at('own_support')]).toBe(1);
    expect(b[at('own_support')]).toBe(0);
  });

  it('reads the pool shape from unit relations', () => {
    expect(poolShape([{ a: 'x', b: 'y', types: ['consecutive_turn'] }])).toBe('turns');
    expect(poolShape([{ a: 'x', b: 'y', types: ['same_round'] }])).toBe('units');
  });
});

describe('offline ranker artifact', () => {
  const weights = RANKER_FEATURES.map((name) => (name === 'verifier' ? 2 : 0));
  const ranker: OfflineRanker = {
    name: OFFLINE_RANKER_NAME,
    version: OFFLINE_RANKER_VERSION,
    key: KEY,
    features: [...RANKER_FEATURES],
    weights,
    calibration: { units: { a: 1, c: -1 }, turns: { a: 1, c: 0 } },
  };

  it('prize = sigmoid(a (w . x) + c) of the pool shape', () => {
    const x = RANKER_FEATURES.map((name) => (name === 'verifier' ? 0.5 : 0.3));
    expect(rankerPrizes(ranker, [x], 'units')[0]).toBeCloseTo(1 / (1 + Math.exp(0)), 12);
    expect(rankerPrizes(ranker, [x], 'turns')[0]).toBeCloseTo(1 / (1 + Math.exp(-1)), 12);
  });

  it('is applied only to its configuration and feature version', () => {
    expect(isUsableRanker(ranker, KEY)).toBe(true);
    expect(isUsableRanker(ranker, 'bm25-views@sat1|node=none|edge=none')).toBe(false);
    expect(isUsableRanker({ ...ranker, version: OFFLINE_RANKER_VERSION - 1 }, KEY)).toBe(false);
    expect(isUsableRanker({ ...ranker, features: [...RANKER_FEATURES].reverse() }, KEY)).toBe(false);
    expect(isUsableRanker({ ...ranker, weights: [...weights.slice(1), Number.NaN] }, KEY)).toBe(false);
    // An edge reliability is optional, but when present it must be finite for both shapes.
    const edgeReliability = { units: { a: 1, c: -2 }, turns: { a: 1, c: 0 } };
    expect(isUsableRanker({ ...ranker, edgeReliability }, KEY)).toBe(true);
    expect(
      isUsableRanker(
        { ...ranker, edgeReliability: { ...edgeReliability, turns: { a: Number.NaN, c: 0 } } },
        KEY,
      ),
    ).toBe(false);
    // The shipped artifact is a usable ranker for the offline configuration.
    expect(resolveRanker(KEY)?.name).toBe(OFFLINE_RANKER_NAME);
  });

  it('fits weights listwise and one calibration per shape, refusing data without gold', () => {
    const row = (v: number) => RANKER_FEATURES.map((name) => (name === 'verifier' ? v : 0));
    const groups = [
      { rows: [row(1), row(0)], gold: [true, false], shape: 'units' as const },
      { rows: [row(1), row(0)], gold: [true, false], shape: 'units' as const },
      { rows: [row(1), row(0)], gold: [false, true], shape: 'turns' as const },
      { rows: [row(1), row(0)], gold: [true, false], shape: 'turns' as const },
    ];
    const fit = fitOfflineRanker(groups, KEY, { command: 'test' });
    expect(fit.weights[at('verifier')]).toBeGreaterThan(0);
    // turns: the score does not separate gold (1:1), so its calibration slope is 0 and p = 1/2.
    expect(fit.calibration.turns.a).toBeCloseTo(0, 6);
    expect(fit.calibration.turns.c).toBeCloseTo(0, 6);
    expect(fit.calibration.units.a).toBeGreaterThan(1);
    expect(fit.edgeReliability).toBeUndefined(); // fitted without edges: the paper's w = 0.99 s_inc / 5 stays
    const edgeRows = [true, true, true, false].map((candidateGold) => ({
      shape: 'turns' as const,
      incrementalSupport: 1,
      reply: false,
      candidateGold,
    }));
    const withEdges = fitOfflineRanker(groups, KEY, { command: 'test' }, edgeRows);
    expect(withEdges.weights).toEqual(fit.weights);
    const w = 1 / (1 + Math.exp(-(withEdges.edgeReliability!.turns.a + withEdges.edgeReliability!.turns.c)));
    expect(w).toBeCloseTo(0.75, 3);
    expect(withEdges.fittedOn?.edgeSamples).toEqual({ units: 0, turns: 4 });
    expect(() => fitOfflineRanker([{ rows: [row(1)], gold: [false], shape: 'units' }], KEY, {})).toThrow();
  });

  it('retrieve uses the shipped ranker for the offline configuration and says so in the trace', async () => {
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      await gm.addMemories('alice', [
        { id: 'm1', text: 'The design review moved to Monday', timestamp: '2024-04-03' },
        { id: 'm2', text: 'Lunch with Bob on Friday', timestamp: '2024-04-04' },
      ]);
      const offline = await gm.retrieve('alice', { prompt: 'When is the design review?' });
      expect(offline.trace.components.prizes).toBe(`${OFFLINE_RANKER_NAME} v${OFFLINE_RANKER_VERSION}`);
      expect(offline.evidence[0]?.memoryId).toBe('m1');
      const none = await gm.retrieve(
        'alice',
        { prompt: 'When is the design review?' },
        { verifiers: 'none' },
      );
      expect(none.trace.components.prizes).toBe('calibration sigmoid(a s + b v + c)');
    } finally {
      await gm.close();
    }
  });
});

describe('shipped edge reliability', () => {
  it('re-weights the offline ECV cross-unit edges of a chat without rounds with the turns calibration', async () => {
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      const turn = (id: string, text: string, speaker: string, minute: number) => ({
        id,
        text,
        sessionId: 's1',
        speaker,
        timestamp: `2024-04-03T10:0${minute}:00Z`,
      });
      await gm.addMemories('alice', [
        turn('t1', 'Where did you put the red kayak paddle?', 'Ann', 0),
        turn('t2', 'The kayak paddle is in the garage behind the bikes', 'Bo', 1),
        turn('t3', 'Thanks, I will take the kayak out on Sunday', 'Ann', 2),
      ]);
      const result = await gm.retrieve('alice', { prompt: 'Where is the kayak paddle?' });
      const shipped = resolveRanker(KEY)!.edgeReliability!.turns;
      const kept = result.verifiedEdges.filter((e) => e.kept);
      expect(kept.length).toBeGreaterThan(0);
      // Bo answers Ann, Ann answers Bo: an edge from a message to the next one is a reply.
      const replies = new Set(['t1>t2', 't2>t3']);
      for (const e of kept) {
        expect(e.relationTypes).toEqual(['consecutive_turn']);
        const reply = replies.has(`${e.a}>${e.b}`) ? shipped.reply! : 0;
        const z = shipped.a * e.incrementalSupport! + reply + shipped.c;
        const w = Math.min(0.99, 1 / (1 + Math.exp(-z)));
        expect(e.weight).toBeCloseTo(w, 12);
        expect(e.cost).toBeCloseTo(-Math.log(w), 12);
      }
      // Not the paper's linear mapping: a weak neighbour (s_inc 1) is worth far more than 0.99 / 5.
      const weak = kept.find((e) => e.incrementalSupport! <= 1.5);
      expect(weak?.weight).toBeGreaterThan(0.5);
    } finally {
      await gm.close();
    }
  });
});

describe('withoutRepeatPrizes', () => {
  const candidate = (memoryId: string, prize: number, position: number) => ({
    memoryId,
    position,
    origin: { kind: 'seed' as const, rank: position, bestView: 'text' as const, viewKey: 'text' },
    retrievalScore: 0.5,
    verifierScore: 1,
    prize,
    isAnchor: true,
  });
  it('zeroes a repeat of an anchor worth at least as much, and nothing else', () => {
    const pool = [
      candidate('a', 0.4, 0),
      candidate('b', 0.3, 1),
      candidate('c', 0.5, 2),
      candidate('d', 0.2, 3),
    ];
    const out = withoutRepeatPrizes(pool, [
      { a: 'a', b: 'b', role: 'redundant' }, // 0.4 >= 0.3: b repeats a
      { a: 'a', b: 'c', role: 'redundant' }, // 0.4 < 0.5: c is worth more than its anchor, kept
      { a: 'a', b: 'd', role: 'corroboration' }, // not a repeat
    ]);
    expect(out.map((c) => c.prize)).toEqual([0.4, 0, 0.5, 0.2]);
    expect(pool[1]!.prize).toBe(0.3); // input untouched
  });
});
