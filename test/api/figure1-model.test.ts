import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { calibrationKey, calibrationMetaKey } from '../../src/pipeline/prize-calibration.ts';
import { createOpenAICompatibleChat } from '../../src/providers/openai-compatible-chat.ts';
import { retrieverName } from '../../src/retrieval/multi-view-retriever.ts';
import {
  type FakeOpenAIServer,
  type FakeRequest,
  startFakeOpenAIServer,
} from '../support/fake-openai-server.ts';
import { FIGURE1_QUESTION, figure1Records, PINNED } from './figure1-archive.ts';

interface Candidate {
  id: string;
  snippet: string;
  eligible_anchor_relations?: { anchor_id: string }[];
}

/** Scripts the verifiers by reading the request (aliases depend on pool order, so replies are computed). */
function verifierReply(request: FakeRequest) {
  const messages = request.body.messages as {
    role: string;
    content: string | { type: string; text?: string }[];
  }[];
  const system = String(messages[0]?.content ?? '');
  const user = JSON.parse(String(messages[1]?.content)) as {
    candidates: Candidate[];
    anchors?: { id: string; snippet: string }[];
  };
  const isUpdate = (c: { snippet: string }) => c.snippet.includes('revised');
  const isNotice = (c: { snippet: string }) => c.snippet.includes('March 1.');
  if (system.includes('anchor')) {
    const notice = user.anchors!.find(isNotice)!;
    return {
      type: 'json' as const,
      delayMs: 150,
      value: {
        candidates: user.candidates.map((c) => {
          const eligible = (c.eligible_anchor_relations ?? []).map((r) => r.anchor_id);
          return isUpdate(c) && eligible.includes(notice.id)
            ? {
                id: c.id,
                direct_support: 0,
                best_anchor_id: notice.id,
                incremental_support: 5,
                role: 'clarification',
              }
            : {
                id: c.id,
                direct_support: 0,
                best_anchor_id: null,
                incremental_support: 0,
                role: isNotice(c) ? 'redundant' : 'irrelevant',
              };
        }),
      },
    };
  }
  const update = user.candidates.find(isUpdate)!;
  return { type: 'json' as const, delayMs: 150, value: { selected: [{ id: update.id, score: 5 }] } };
}

describe('Figure 1 archive, model-backed verifiers on a fake OpenAI server', () => {
  let server: FakeOpenAIServer;
  beforeAll(async () => {
    server = await startFakeOpenAIServer();
  });
  afterAll(async () => server.close());

  it('makes 2 verifier calls in parallel and 1 reader call, and packs update + notice in one tree', async () => {
    server.setHandler('chat', (request) => {
      const messages = request.body.messages as { role: string; content: unknown }[];
      if (messages.length === 1) return { type: 'text', content: 'March 15', delayMs: 5 };
      return verifierReply(request);
    });
    const model = createOpenAICompatibleChat({ baseUrl: server.baseUrl, model: 'fake-model' });
    const gm = await openGraphmemix({ db: ':memory:', models: { verifier: model, reader: model } });
    try {
      await gm.addMemories('alice', figure1Records());
      const key = calibrationKey({
        retriever: retrieverName(undefined),
        nodeVerifier: 'model:fake-model',
        edgeVerifier: 'model:fake-model',
      });
      await gm.store.setMeta(calibrationMetaKey(key), PINNED);
      const result = await gm.answer('alice', FIGURE1_QUESTION);

      const chats = server.requestsFor('chat');
      expect(chats).toHaveLength(3);
      expect(server.maxInFlight).toBeGreaterThanOrEqual(2);
      expect(result.trace.modelCalls.map((c) => c.stage).sort()).toEqual([
        'edge_verifier',
        'node_verifier',
        'reader',
      ]);
      expect(result.trace.flags.filter((f) => f.endsWith('_failed'))).toEqual([]);
      expect(result.answered).toBe(true);
      expect(result.answer).toBe('March 15');

      expect(result.evidence.map((e) => e.memoryId).sort()).toEqual(['mail-01-notice', 'mail-02-update']);
      const update = result.evidence.find((e) => e.memoryId === 'mail-02-update')!;
      expect(update.verifierScore).toBe(5);
      expect(result.evidence[0]!.tree).toBe(result.evidence[1]!.tree);
      const kept = result.verifiedEdges.filter((e) => e.kept);
      expect(kept).toHaveLength(1);
      expect(kept[0]).toMatchObject({
        a: 'mail-01-notice',
        b: 'mail-02-update',
        role: 'clarification',
        weight: 0.99,
      });

      // The reader message: the question first, then the evidence with headers, no scores.
      const reader = chats.find((r) => r.body.messages.length === 1)!;
      const text = JSON.stringify(reader.body.messages[0].content);
      expect(text).toContain(FIGURE1_QUESTION);
      expect(text).toContain('[Evidence 1] memory mail-');
      expect(text).not.toContain('retrieval_score');
      expect(reader.body.max_tokens ?? reader.body.max_completion_tokens).toBe(1000);
    } finally {
      await gm.close();
    }
  });

  it('falls back to retrieval-only prizes when the verifier keeps failing, flagged, without throwing', async () => {
    server.reset();
    server.setHandler('chat', () => ({ type: 'text', content: 'not json at all' }));
    const model = createOpenAICompatibleChat({ baseUrl: server.baseUrl, model: 'fake-model' });
    const gm = await openGraphmemix({ db: ':memory:', models: { verifier: model } });
    try {
      await gm.addMemories('alice', figure1Records());
      const result = await gm.retrieve('alice', FIGURE1_QUESTION);
      expect(result.trace.flags).toEqual(
        expect.arrayContaining(['node_verifier_failed', 'edge_verifier_failed']),
      );
      expect(result.evidence.length).toBeGreaterThan(0);
      expect(result.pool.every((c) => c.verifierScore === 0)).toBe(true);
      expect(result.verifiedEdges).toEqual([]);
      expect(server.requestsFor('chat')).toHaveLength(6);
      // The correction lists the valid ids.
      const retry = server.requestsFor('chat').find((r) => r.body.messages.length === 4)!;
      expect(String(retry.body.messages[3].content)).toMatch(/Valid candidate ids are: C00, C01/);
    } finally {
      await gm.close();
    }
  });
});
