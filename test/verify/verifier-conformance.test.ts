import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAICompatibleChat } from '../../src/providers/openai-compatible-chat.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import { createAnchorNoveltyEdgeVerifier } from '../../src/verify/anchor-novelty-edge-verifier.ts';
import { createContextLexicalNodeVerifier } from '../../src/verify/context-lexical-node-verifier.ts';
import type { EdgeVerifier, EdgeVerifierInput } from '../../src/verify/edge-verifier-spec.ts';
import { createModelEdgeVerifier } from '../../src/verify/model-edge-verifier.ts';
import { createModelNodeVerifier } from '../../src/verify/model-node-verifier.ts';
import type { NodeVerifier, NodeVerifierInput } from '../../src/verify/node-verifier-spec.ts';
import { candidateAlias, type VerifierCandidate } from '../../src/verify/verifier-input.ts';
import {
  type FakeOpenAIServer,
  type FakeRequest,
  startFakeOpenAIServer,
} from '../support/fake-openai-server.ts';

/**
 * Conformance of the verifier ports (node-verifier-spec.ts, edge-verifier-spec.ts), run against every
 * implementation: the offline ones and the model-backed ones over a scripted local OpenAI-compatible server.
 */
const texts = [
  'The design review moved to Monday at 10.',
  'Design review notes: bring the prototype.',
  'Lunch with Bob at noon.',
  'The review room is B-204.',
];
const record = (i: number): MemoryRecord => ({
  id: `m${i}`,
  contextId: 'c',
  kind: 'message',
  sequence: i,
  roundId: `r${Math.floor(i / 2)}`,
  text: texts[i]!,
  assets: [],
});
const candidates: VerifierCandidate[] = texts.map((_, i) => ({
  memoryId: `m${i}`,
  alias: candidateAlias(i),
  record: record(i),
  retrievalScore: 1 - i / 10,
  isAnchor: i < 2,
}));
const question = { prompt: 'When is the design review?', imageCaptions: [] };
const nodeInput: NodeVerifierInput = {
  question,
  candidates,
  relations: [
    { a: 'm0', b: 'm1', types: ['same_round'] },
    { a: 'm2', b: 'm3', types: ['same_round'] },
  ],
};
const edgeInput: EdgeVerifierInput = {
  question,
  anchors: candidates.slice(0, 2),
  candidates: [
    { candidate: candidates[2]!, relations: [{ anchorId: 'm1', relationTypes: ['consecutive_turn'] }] },
    { candidate: candidates[3]!, relations: [{ anchorId: 'm0', relationTypes: ['event_bridge'] }] },
  ],
};

/** Scripted model: scores every candidate it is shown, and judges every edge candidate against its anchor. */
function scriptedReply(request: FakeRequest) {
  const messages = request.body.messages as { role: string; content: unknown }[];
  const system = String(messages[0]?.content ?? '');
  const user = JSON.parse(String(messages[1]?.content)) as {
    candidates: { id: string; eligible_anchor_relations?: { anchor_id: string }[] }[];
  };
  if (system.includes('anchor')) {
    return {
      type: 'json' as const,
      value: {
        candidates: user.candidates.map((c, i) => ({
          id: c.id,
          direct_support: 1,
          best_anchor_id: c.eligible_anchor_relations?.[0]?.anchor_id ?? null,
          incremental_support: i === 0 ? 4 : 0,
          role: i === 0 ? 'clarification' : 'irrelevant',
        })),
      },
    };
  }
  return {
    type: 'json' as const,
    value: { selected: user.candidates.map((c, i) => ({ id: c.id, score: Math.max(0, 5 - i) })) },
  };
}

let server: FakeOpenAIServer;
beforeAll(async () => {
  server = await startFakeOpenAIServer();
});
afterAll(async () => server.close());
const chat = () => createOpenAICompatibleChat({ baseUrl: server.baseUrl, model: 'fake-verifier' });

const nodeVerifiers: [string, () => NodeVerifier][] = [
  ['lexical-context-support (offline)', () => createContextLexicalNodeVerifier()],
  ['model node verifier', () => createModelNodeVerifier(chat(), { attempts: 1 })],
];
const edgeVerifiers: [string, () => EdgeVerifier][] = [
  ['anchor-novelty (offline)', () => createAnchorNoveltyEdgeVerifier()],
  ['model edge verifier', () => createModelEdgeVerifier(chat(), { attempts: 1 })],
];

describe.each(nodeVerifiers)('NodeVerifier conformance: %s', (_name, make) => {
  it('declares the port version, a name and its kind', () => {
    const verifier = make();
    expect(verifier.specificationVersion).toBe('v1');
    expect(verifier.name.length).toBeGreaterThan(0);
    expect(['model', 'offline']).toContain(verifier.kind);
  });

  it('scores only pool candidates, each in 0..5, and ranks the supporting memory above the unrelated one', async () => {
    server.setHandler('chat', scriptedReply);
    const result = await make().verify(nodeInput);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const ids = new Set(candidates.map((c) => c.memoryId));
    for (const [id, score] of result.scores) {
      expect(ids.has(id)).toBe(true);
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThanOrEqual(5);
    }
    expect(result.scores.get('m0') ?? 0).toBeGreaterThan(result.scores.get('m2') ?? 0);
  });

  it('an empty pool is not an error', async () => {
    const result = await make().verify({ question, candidates: [] });
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.scores.size).toBe(0);
  });

  it('a model fault is a result, never a throw', async () => {
    server.setHandler('chat', () => ({ type: 'error', status: 500, message: 'boom' }));
    const verifier = make();
    const result = await verifier.verify(nodeInput);
    if (verifier.kind === 'model') {
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.length).toBeGreaterThan(0);
    } else expect(result.ok).toBe(true);
  });
});

describe.each(edgeVerifiers)('EdgeVerifier conformance: %s', (_name, make) => {
  it('declares the port version, a name and its kind', () => {
    const verifier = make();
    expect(verifier.specificationVersion).toBe('v1');
    expect(verifier.name.length).toBeGreaterThan(0);
    expect(['model', 'offline']).toContain(verifier.kind);
  });

  it('judges only the given candidates, against their own eligible anchors, with normalised judgements', async () => {
    server.setHandler('chat', scriptedReply);
    const result = await make().verify(edgeInput);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const eligible = new Map(
      edgeInput.candidates.map((c) => [c.candidate.memoryId, new Set(c.relations.map((r) => r.anchorId))]),
    );
    for (const judgement of result.judgements) {
      expect(eligible.has(judgement.candidateId)).toBe(true);
      if (judgement.anchorId !== null)
        expect(eligible.get(judgement.candidateId)!.has(judgement.anchorId)).toBe(true);
      expect(judgement.incrementalSupport).toBeGreaterThanOrEqual(0);
      expect(judgement.incrementalSupport).toBeLessThanOrEqual(5);
      // Method notes 5: kept exactly for a positive role with incremental support > 0 and an anchor.
      const positive = judgement.role === 'new_fact' || judgement.role === 'clarification';
      expect(judgement.kept).toBe(
        positive && judgement.incrementalSupport > 0 && judgement.anchorId !== null,
      );
    }
  });

  it('no edge candidates is not an error', async () => {
    const result = await make().verify({ ...edgeInput, candidates: [] });
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.judgements).toEqual([]);
  });

  it('a model fault is a result, never a throw', async () => {
    server.setHandler('chat', () => ({ type: 'text', content: 'not json at all' }));
    const verifier = make();
    const result = await verifier.verify(edgeInput);
    if (verifier.kind === 'model') expect(result.ok).toBe(false);
    else expect(result.ok).toBe(true);
  });
});
