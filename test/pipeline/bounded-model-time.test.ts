import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isGraphmemixError } from '../../src/errors/graphmemix-error.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createMcpServer } from '../../src/mcp/create-mcp-server.ts';
import { createModels } from '../../src/providers/create-models.ts';
import { parseModelConfig, resolveModelConfig } from '../../src/providers/model-config.ts';
import { createOpenAICompatibleChat } from '../../src/providers/openai-compatible-chat.ts';
import { DEFAULT_MAX_REPLY_BYTES } from '../../src/providers/post-openai-json.ts';
import { type RunningServer, startServer } from '../../src/server/start-server.ts';
import { type FakeOpenAIServer, startFakeOpenAIServer } from '../support/fake-openai-server.ts';

let fake: FakeOpenAIServer;
beforeAll(async () => {
  fake = await startFakeOpenAIServer();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  fake.setHandler('chat', undefined);
});

/** Resolves once no model request is on the wire, or fails after `ms`. */
async function untilIdle(ms: number): Promise<number> {
  const started = performance.now();
  while (fake.inFlight > 0) {
    if (performance.now() - started > ms) throw new Error(`still ${fake.inFlight} model calls in flight`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return performance.now() - started;
}

describe('model reply cap', () => {
  const chat = () => createOpenAICompatibleChat({ baseUrl: fake.baseUrl, model: 'm' });

  it('refuses a 200 MiB streamed reply once it passes the cap, without reading the rest', async () => {
    const sent = { bytes: 0 };
    fake.enqueue('chat', { type: 'huge', bytes: 200 * 1024 * 1024, sent });
    const error = await chat()
      .chat({ messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(isGraphmemixError(error) && error.code).toBe('MODEL_OUTPUT');
    expect(isGraphmemixError(error) && error.details).toMatchObject({
      reason: 'reply_too_large',
      maxReplyBytes: DEFAULT_MAX_REPLY_BYTES,
      retryable: false,
    });
    await untilIdle(5000);
    // What crossed the socket is the cap plus kernel buffers, nowhere near the 200 MiB offered.
    expect(sent.bytes).toBeLessThan(DEFAULT_MAX_REPLY_BYTES + 32 * 1024 * 1024);
  });

  it('refuses a declared Content-Length over the cap before reading the body', async () => {
    const sent = { bytes: 0 };
    fake.enqueue('chat', { type: 'huge', bytes: 200 * 1024 * 1024, sent, contentLength: true });
    const model = createOpenAICompatibleChat({ baseUrl: fake.baseUrl, model: 'm', maxReplyBytes: 1024 });
    const error = await model.chat({ messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(isGraphmemixError(error) && error.details?.reason).toBe('reply_too_large');
    expect(isGraphmemixError(error) && error.details?.bytes).toBe(200 * 1024 * 1024);
  });
});

describe('one deadline per question', () => {
  let gm: Graphmemix;
  beforeAll(async () => {
    // Every model role on the fake endpoint, each call limited to 2 s, retries and attempts at their defaults:
    // without a question deadline this question takes ~4 retries x 3 attempts x 2 s per verifier, plus the reader.
    const endpoint = { baseUrl: fake.baseUrl, model: 'slow', timeoutMs: 2000 };
    const models = createModels(resolveModelConfig(parseModelConfig({ default: endpoint })));
    gm = await openGraphmemix({ db: 'memory:', models });
    await gm.addMemories('ann', [
      { id: 'a', text: 'Ann booked the train to Porto for Friday' },
      { id: 'b', text: 'Ann moved the Porto train to Saturday morning' },
      { id: 'c', text: 'Ann bought basil seeds' },
    ]);
  });
  afterAll(async () => {
    await gm.close();
  });

  it('a 2 s per-call timeout with a 5 s question deadline finishes within the deadline, flagged', async () => {
    fake.setHandler('chat', () => ({ type: 'json', value: {}, delayMs: 60_000 }));
    const started = performance.now();
    const result = await gm.answer('ann', 'When is the Porto train?', { deadlineMs: 5000 });
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThan(4500);
    expect(elapsed).toBeLessThan(6500);
    expect(result.trace.flags).toContain('deadline_exceeded');
    expect(result.trace.flags).toContain('reader_failed');
    expect(result.answered).toBe(false);
    expect(result.evidence.length).toBeGreaterThan(0);
    expect(await untilIdle(1000)).toBeLessThan(1000);
  }, 20_000);

  it('huge verifier replies are failed attempts: the question degrades (flagged) instead of buffering them', async () => {
    const sent = { bytes: 0 };
    fake.setHandler('chat', () => ({ type: 'huge', bytes: 200 * 1024 * 1024, sent }));
    const result = await gm.retrieve('ann', 'When is the Porto train?', { deadlineMs: 10_000 });
    expect(result.trace.flags).toContain('node_verifier_failed');
    expect(result.trace.flags).not.toContain('deadline_exceeded');
    expect(result.evidence.length).toBeGreaterThan(0);
    const verifierCalls = result.trace.modelCalls.filter((call) => call.stage === 'node_verifier');
    expect(verifierCalls[0]?.attempts).toBe(3);
    await untilIdle(5000);
    // 3 attempts, each cut at the cap (plus socket buffers), not 3 x 200 MiB.
    expect(sent.bytes).toBeLessThan(3 * (DEFAULT_MAX_REPLY_BYTES + 32 * 1024 * 1024));
  }, 30_000);

  it('the deadline default comes from the config file; the client signal stops the question early', async () => {
    expect(resolveModelConfig(parseModelConfig({ questionDeadlineMs: 5000 })).questionDeadlineMs).toBe(5000);
    fake.setHandler('chat', () => ({ type: 'json', value: {}, delayMs: 60_000 }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = performance.now();
    const result = await gm.retrieve('ann', 'When is the Porto train?', { signal: controller.signal });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(result.trace.flags).not.toContain('deadline_exceeded');
    expect(result.trace.flags).toContain('node_verifier_failed');
    await untilIdle(1000);
  }, 20_000);

  it('an HTTP client that disconnects stops the model calls of its question', async () => {
    fake.setHandler('chat', () => ({ type: 'json', value: {}, delayMs: 60_000 }));
    const server: RunningServer = await startServer({ graphmemix: gm, open: true, port: 0 });
    try {
      const gone = await fetch(`${server.url}/v1/retrieve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user_id: 'ann', question: 'When is the Porto train?' }),
        signal: AbortSignal.timeout(500),
      }).catch((e: unknown) => e);
      expect(gone).toBeInstanceOf(Error);
      await untilIdle(1500);
      const requests = fake.requestsFor('chat').length;
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(fake.requestsFor('chat').length).toBe(requests);
    } finally {
      await server.close();
    }
  }, 20_000);

  it('an MCP call the client cancels stops its model calls (extra.signal)', async () => {
    fake.setHandler('chat', () => ({ type: 'json', value: {}, delayMs: 60_000 }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = createMcpServer(gm);
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 500);
      const call = client
        .callTool(
          { name: 'answer_question', arguments: { user_id: 'ann', question: 'Porto train?' } },
          undefined,
          {
            signal: controller.signal,
          },
        )
        .catch((e: unknown) => e);
      expect(await call).toBeInstanceOf(Error);
      await untilIdle(1500);
      const requests = fake.requestsFor('chat').length;
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(fake.requestsFor('chat').length).toBe(requests);
    } finally {
      await client.close();
      await server.close();
    }
  }, 20_000);
});
