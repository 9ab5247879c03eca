import { describe, expect, it } from 'vitest';
import { termId } from '../../src/retrieval/token-cache.ts';
import { tokenize } from '../../src/retrieval/tokenize.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import {
  createAnchorNoveltyEdgeVerifier,
  judgePair,
  pairSide,
  REPLY_SUPPORT,
} from '../../src/verify/anchor-novelty-edge-verifier.ts';
import {
  contextSupportParts,
  contextSupportScores,
  createContextLexicalNodeVerifier,
  unitSupport,
  verifierDocumentText,
} from '../../src/verify/context-lexical-node-verifier.ts';
import type { PoolRelation } from '../../src/verify/node-verifier-spec.ts';

const round = (a: string, b: string): PoolRelation => ({ a, b, types: ['same_round'] });
const next = (a: string, b: string): PoolRelation => ({ a, b, types: ['consecutive_turn'] });

const record = (id: string, text: string, extra: Partial<MemoryRecord> = {}): MemoryRecord => ({
  id,
  contextId: 'c',
  kind: 'message',
  sequence: 1,
  text,
  assets: [],
  ...extra,
});

describe('unitSupport (BM25-style, per unit)', () => {
  it('reads the members of one round as one document', () => {
    const docs = [
      { id: 'q', text: 'Which kayak should I buy?' },
      { id: 'a', text: 'A touring model from Lisbon harbour.' },
      { id: 'x', text: 'Lisbon is sunny.' },
    ];
    const joined = unitSupport('kayak Lisbon', docs, [round('q', 'a')]);
    expect(joined.unitOf.get('q')).toBe(joined.unitOf.get('a'));
    const alone = unitSupport('kayak Lisbon', docs, []);
    // Joined, the round covers both terms; apart, each half covers one.
    const unitScore = joined.byUnit[joined.unitOf.get('q')!]!;
    expect(unitScore).toBeGreaterThan(alone.byUnit[alone.unitOf.get('q')!]!);
    expect(unitScore).toBeGreaterThan(alone.byUnit[alone.unitOf.get('a')!]!);
  });

  it('saturates term frequency: two distinct question terms beat one term repeated', () => {
    const docs = [
      { id: 'rep', text: 'kayak kayak kayak kayak kayak kayak' },
      { id: 'two', text: 'kayak paddle other words here' },
      { id: 'none', text: 'nothing at all here today ok' },
    ];
    const s = unitSupport('kayak paddle', docs, []);
    expect(s.byUnit[s.unitOf.get('two')!]!).toBeGreaterThan(s.byUnit[s.unitOf.get('rep')!]!);
    expect(s.byUnit[s.unitOf.get('none')!]).toBe(0);
  });

  it('gives the same support whatever was counted before (term counts kept per question terms and text)', () => {
    const docs = [
      { id: 'q', text: 'Which kayak should I buy? kayak kayak' },
      { id: 'a', text: 'A touring model from Lisbon harbour.' },
      { id: 'x', text: 'Lisbon is sunny, kayak rental closed.' },
    ];
    const renamed = docs.map((d, i) => ({ id: d.id, text: docs[(i + 1) % docs.length]!.text }));
    const first = unitSupport('kayak Lisbon', docs, [round('q', 'a')]);
    const other = unitSupport('sunny harbour', docs, []);
    const otherFirst = JSON.stringify(other);
    // Same ids, other texts (an edited memory): counted by text, not by id.
    const swapped = unitSupport('kayak Lisbon', renamed, [round('q', 'a')]);
    expect(swapped.byUnit).not.toEqual(first.byUnit);
    expect(unitSupport('kayak Lisbon', docs, [round('q', 'a')])).toEqual(first);
    expect(JSON.stringify(unitSupport('sunny harbour', docs, []))).toBe(otherFirst);
    // By hand: unit {q, a} has kayak x3 and Lisbon x1; unit x has each once. Equal df, so equal weights.
    const w = Math.log(1 + 3 / 3);
    const lengths = [
      tokenize(docs[0]!.text).length + tokenize(docs[1]!.text).length,
      tokenize(docs[2]!.text).length,
    ];
    const avg = (lengths[0]! + lengths[1]!) / 2;
    const part = (tf: number, length: number) => (w * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * length) / avg));
    expect(first.byUnit[0]).toBeCloseTo((part(3, lengths[0]!) + part(1, lengths[0]!)) / (2 * w), 12);
    expect(first.byUnit[1]).toBeCloseTo((part(1, lengths[1]!) + part(1, lengths[1]!)) / (2 * w), 12);
  });
});

describe('contextSupportParts (kept for the same inputs)', () => {
  it('answers a repeat of the same pool from the last call, and anything else afresh', () => {
    const docs = [
      { id: 'q', text: 'Which kayak should I buy?' },
      { id: 'a', text: 'A touring model from Lisbon harbour.' },
      { id: 'n', text: 'The Lisbon kayak shop opens at nine.' },
    ];
    const relations = [round('q', 'a'), next('a', 'n')];
    const first = contextSupportParts('kayak Lisbon', docs, relations);
    // The verifier, then the ranker alone and in context: equal documents (new objects), the same relations.
    const alone = contextSupportParts('kayak Lisbon', docs, []);
    expect(alone).not.toBe(first);
    expect(
      contextSupportParts(
        'kayak Lisbon',
        docs.map((d) => ({ ...d })),
        relations,
      ),
    ).toBe(first);
    const fresh = (rels: PoolRelation[], documents = docs) =>
      contextSupportParts(
        'kayak Lisbon',
        documents.map((d) => ({ ...d })),
        [...rels],
      );
    // A relation array changed in place, an edited text, another question: computed again.
    relations.pop();
    const changed = contextSupportParts('kayak Lisbon', docs, relations);
    expect(changed).not.toBe(first);
    expect(changed.get('n')).not.toEqual(first.get('n'));
    expect(changed).toEqual(fresh([round('q', 'a')]));
    const edited = docs.map((d) => (d.id === 'n' ? { id: 'n', text: 'Closed today.' } : d));
    expect(contextSupportParts('kayak Lisbon', edited, relations).get('n')!.unit).toBe(0);
    expect(contextSupportParts('harbour', docs, relations)).not.toEqual(changed);
    expect(contextSupportParts('kayak Lisbon', docs, [round('q', 'a'), next('a', 'n')])).toEqual(first);
  });
});

describe('contextSupportScores (lexical-context-support)', () => {
  it('gives both halves of a round the same score, and the best unit 5', () => {
    const scores = contextSupportScores(
      'kayak paddle',
      [
        { id: 'u1', text: 'Which kayak?' },
        { id: 'a1', text: 'Take a long paddle.' },
        { id: 'u2', text: 'Weather today' },
      ],
      [round('u1', 'a1')],
    );
    expect(scores.get('u1')).toBe(5);
    expect(scores.get('a1')).toBe(5);
    expect(scores.get('u2')).toBe(0);
  });

  it('lifts a unit between supported neighbours above an equal isolated match', () => {
    const docs = [
      { id: 'left', text: 'kayak trip planning' },
      { id: 'mid', text: 'paddle choice' },
      { id: 'right', text: 'kayak rental shop' },
      { id: 'lone', text: 'paddle sale' },
    ];
    const scores = contextSupportScores('kayak paddle', docs, [next('left', 'mid'), next('mid', 'right')]);
    expect(scores.get('mid')!).toBeGreaterThan(scores.get('lone')!);
    // One supported neighbour counts half as much as two (the missing side counts as unsupported).
    const oneSide = contextSupportScores('kayak paddle', docs, [next('left', 'mid')]);
    expect(oneSide.get('mid')!).toBeGreaterThan(oneSide.get('lone')!);
    expect(oneSide.get('mid')! / oneSide.get('lone')!).toBeLessThan(scores.get('mid')! / scores.get('lone')!);
  });

  it('reads the memory date, so a question naming the day is supported by that day', async () => {
    expect(
      tokenize(verifierDocumentText(record('m', 'hello', { timestamp: '2024-06-17T10:00:00Z' }))),
    ).toEqual(expect.arrayContaining(['2024', '06', '17']));
    const verifier = createContextLexicalNodeVerifier();
    const candidate = (id: string, timestamp: string, position: number) => ({
      memoryId: id,
      alias: `C0${position}`,
      record: record(id, 'We talked about robots.', { timestamp }),
      retrievalScore: 0.5,
      isAnchor: true,
    });
    const result = await verifier.verify({
      question: { prompt: 'What did we say about robots on 2024-06-17?', imageCaptions: [] },
      candidates: [candidate('june', '2024-06-17', 0), candidate('july', '2024-07-02', 1)],
    });
    if (!result.ok) throw new Error(result.error);
    expect(result.scores.get('june')!).toBeGreaterThan(result.scores.get('july')!);
  });

  it('reads a memory\'s media as words, so "which photo" prefers the round that carries one', async () => {
    const photo = record('u1', 'Here is the one from the lake.', {
      assets: [{ id: 'img1', kind: 'image', uri: 'file:///lake.jpg' }],
    });
    expect(tokenize(verifierDocumentText(photo))).toEqual(
      expect.arrayContaining(['photo', 'image', 'picture']),
    );
    // Each media kind is named once, however many assets of that kind the record holds.
    const two = record('u2', 'x', {
      assets: [
        { id: 'a', kind: 'image', uri: 'file:///a.jpg' },
        { id: 'b', kind: 'image', uri: 'file:///b.jpg' },
      ],
    });
    expect(tokenize(verifierDocumentText(two)).filter((t) => t === 'photo')).toHaveLength(1);
    const verifier = createContextLexicalNodeVerifier();
    const candidate = (r: MemoryRecord, position: number) => ({
      memoryId: r.id,
      alias: `C0${position}`,
      record: r,
      retrievalScore: 0.5,
      isAnchor: true,
    });
    const result = await verifier.verify({
      question: { prompt: 'Which photos show the lake?', imageCaptions: [] },
      candidates: [
        candidate(photo, 0),
        candidate(record('a1', 'Lovely light on the water.'), 1),
        candidate(record('u3', 'We walked around the lake.'), 2),
      ],
      relations: [round('u1', 'a1')],
    });
    if (!result.ok) throw new Error(result.error);
    // The reply shares its round's photo; the plain mention of the lake does not carry one.
    expect(result.scores.get('u1')!).toBeGreaterThan(result.scores.get('u3')!);
    expect(result.scores.get('a1')).toBe(result.scores.get('u1'));
  });
});

describe('judgePair (anchor-novelty)', () => {
  const side = pairSide;
  const terms = tokenize('When is the kayak trip?');

  it('a same-unit partner of a supported unit gets full support; of an unsupported unit, none', () => {
    const reply = side('Next Saturday at nine.');
    const ask = side('When is the kayak trip?');
    const link = { sameUnit: true, oneExchange: true, relevance: 0.3 };
    expect(judgePair(reply, ask, terms, link)).toEqual({ score: 5, role: 'clarification' });
    expect(judgePair(reply, ask, terms, { ...link, relevance: 0 })).toEqual({ score: 0, role: 'irrelevant' });
  });

  it('a cross-unit candidate is scored by its own relevance, squared', () => {
    const link = { sameUnit: false, oneExchange: false, relevance: 0.5 };
    expect(judgePair(side('The kayak trip needs a booking.'), side('Hello there'), terms, link)).toEqual({
      score: 1.3,
      role: 'new_fact',
    });
    expect(
      judgePair(side('Unrelated chatter'), side('Hello there'), terms, { ...link, relevance: 1 }).score,
    ).toBe(5);
  });

  it('never calls the two halves of one exchange a conflict, but does across units', () => {
    const a = side('Is the kayak trip on March 1 at the lake?');
    const b = side('No, the kayak trip is on March 9 at the lake.');
    expect(judgePair(b, a, terms, { sameUnit: true, oneExchange: true, relevance: 1 }).role).not.toBe(
      'conflict',
    );
    expect(judgePair(b, a, terms, { sameUnit: false, oneExchange: false, relevance: 1 })).toEqual({
      score: 0,
      role: 'conflict',
    });
  });

  it('only true near-duplicates are redundant', () => {
    const a = side('The kayak trip starts at the lake pier at nine');
    expect(
      judgePair(side('The kayak trip starts at the lake pier at nine!'), a, terms, {
        sameUnit: false,
        oneExchange: false,
        relevance: 1,
      }).role,
    ).toBe('redundant');
    expect(
      judgePair(side('The kayak trip starts at the river'), a, terms, {
        sameUnit: false,
        oneExchange: false,
        relevance: 1,
      }).role,
    ).not.toBe('redundant');
  });
});

describe('createAnchorNoveltyEdgeVerifier on a dialogue', () => {
  const candidate = (id: string, text: string, position: number) => ({
    memoryId: id,
    alias: `C0${position}`,
    record: record(id, text),
    retrievalScore: 0.4,
    isAnchor: position === 0,
  });

  it('judges the same when the term dictionary starts over during a question', async () => {
    // Words no other test uses: new to the dictionary in each run below.
    const input = (run: number) => ({
      question: { prompt: `When is the qvx${run}kayak trip qvx${run}lake?`, imageCaptions: [] },
      anchors: [candidate('ask', `When is the qvx${run}kayak trip?`, 0)],
      candidates: [
        {
          // Adds a question word the anchor lacks: a new fact (read through the term vectors).
          candidate: candidate('reply', `The qvx${run}kayak trip to the qvx${run}lake is next Saturday.`, 1),
          relations: [{ anchorId: 'ask', relationTypes: ['consecutive_turn' as const] }],
        },
        {
          candidate: candidate('near', `When is the qvx${run}kayak trip to the qvx${run}lake`, 2),
          relations: [{ anchorId: 'ask', relationTypes: ['consecutive_turn' as const] }],
        },
      ],
    });
    const judged = async (run: number) => {
      const result = await createAnchorNoveltyEdgeVerifier().verify(input(run));
      if (!result.ok) throw new Error(result.error);
      return result.judgements;
    };
    const plain = await judged(1);
    expect(plain.find((j) => j.candidateId === 'reply')?.role).toBe('new_fact');
    // Fill the dictionary to just under its bound (2^18 terms): this question's own words take it past, and
    // its next computation starts a new dictionary while the question is being judged.
    for (let i = 0; termId(`deadlinefill${i}`) < (1 << 18) - 3; i++);
    expect(await judged(2)).toEqual(plain);
  });

  it('keeps the round partner of a relevant anchor and drops an irrelevant neighbouring turn', async () => {
    const anchor = candidate('ask', 'When is the kayak trip to the lake?', 0);
    const result = await createAnchorNoveltyEdgeVerifier().verify({
      question: { prompt: 'When is the kayak trip?', imageCaptions: [] },
      anchors: [anchor],
      candidates: [
        {
          candidate: candidate('reply', 'Next Saturday, early morning.', 1),
          relations: [{ anchorId: 'ask', relationTypes: ['same_round', 'consecutive_turn'] }],
        },
        {
          candidate: candidate('later', 'My cat knocked over a plant.', 2),
          relations: [{ anchorId: 'ask', relationTypes: ['consecutive_turn'] }],
        },
      ],
    });
    if (!result.ok) throw new Error(result.error);
    const byId = new Map(result.judgements.map((j) => [j.candidateId, j]));
    expect(byId.get('reply')).toMatchObject({ anchorId: 'ask', incrementalSupport: 5, kept: true });
    expect(byId.get('later')).toMatchObject({ kept: false, incrementalSupport: 0 });
  });

  it('judges pairs on content: the record dates and media words are no stated values and no shared text', async () => {
    const side = (id: string, text: string, position: number, extra: Partial<MemoryRecord>) => ({
      memoryId: id,
      alias: `C0${position}`,
      record: record(id, text, extra),
      retrievalScore: 0.4,
      isAnchor: position === 0,
    });
    // A thread reply written two days later states no value of its own: not a conflict with the first email.
    const first = side('e1', 'Kayak trip plan: meet at the harbour, bring a paddle and lunch.', 0, {
      kind: 'email',
      timestamp: '2024-06-01T09:00:00Z',
    });
    const reply = side('e2', 'Kayak trip: I will bring a paddle and lunch for two.', 1, {
      kind: 'email',
      timestamp: '2024-06-03T09:00:00Z',
    });
    // Two short photo messages share the media words but show different things: not near-duplicates.
    const photo = (id: string, text: string, position: number) =>
      side(id, text, position, { assets: [{ id: `${id}-img`, kind: 'image', uri: `file:///${id}.jpg` }] });
    const lakePhoto = photo('p1', 'Kayak trip, lake at sunrise.', 2);
    const harbourPhoto = photo('p2', 'Kayak trip, lake at sunset.', 3);
    const result = await createAnchorNoveltyEdgeVerifier().verify({
      question: { prompt: 'Which photos show the kayak trip?', imageCaptions: [] },
      anchors: [first, lakePhoto],
      candidates: [
        { candidate: reply, relations: [{ anchorId: 'e1', relationTypes: ['same_record'] }] },
        { candidate: harbourPhoto, relations: [{ anchorId: 'p1', relationTypes: ['event_bridge'] }] },
      ],
    });
    if (!result.ok) throw new Error(result.error);
    const byId = new Map(result.judgements.map((j) => [j.candidateId, j]));
    expect(byId.get('e2')).toMatchObject({ anchorId: 'e1', kept: true });
    expect(byId.get('e2')!.role).not.toBe('conflict');
    expect(byId.get('p2')!.role).not.toBe('redundant');
  });

  it('keeps the reply to a relevant message in a chat without rounds, and only the reply', async () => {
    // A two-person chat without round ids: the reply shares no question word, yet completes the exchange.
    const turn = (id: string, text: string, sequence: number, speaker: string, position: number) => ({
      memoryId: id,
      alias: `C0${position}`,
      record: record(id, text, { sequence, speaker, sessionId: 's1' }),
      retrievalScore: 0.4,
      isAnchor: position === 0,
    });
    const ask = turn('ask', 'When is the kayak trip to the lake?', 2, 'Ana', 0);
    const quiet = turn('quiet', 'Nothing planned this week.', 2, 'Ana', 3);
    const adjacent = [{ anchorId: 'ask', relationTypes: ['consecutive_turn' as const] }];
    const result = await createAnchorNoveltyEdgeVerifier().verify({
      question: { prompt: 'When is the kayak trip?', imageCaptions: [] },
      anchors: [ask, quiet],
      candidates: [
        // the next message, by the other person: the reply
        { candidate: turn('reply', 'Next Saturday, early morning.', 3, 'Ben', 1), relations: adjacent },
        // the message before it, by the other person: not a reply to it
        { candidate: turn('before', 'Any plans for the weekend?', 1, 'Ben', 2), relations: adjacent },
        // the next message by the same person: no alternation
        { candidate: turn('same', 'Bring sandwiches please.', 3, 'Ana', 4), relations: adjacent },
        // the reply to a message that does not support the question
        {
          candidate: turn('other', 'Fine by me.', 3, 'Ben', 5),
          relations: [{ anchorId: 'quiet', relationTypes: ['consecutive_turn'] }],
        },
      ],
    });
    if (!result.ok) throw new Error(result.error);
    const byId = new Map(result.judgements.map((j) => [j.candidateId, j]));
    expect(byId.get('reply')).toMatchObject({
      anchorId: 'ask',
      incrementalSupport: REPLY_SUPPORT,
      role: 'clarification',
      kept: true,
    });
    for (const id of ['before', 'same', 'other']) expect(byId.get(id)).toMatchObject({ kept: false });
  });
});
