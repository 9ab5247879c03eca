import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GraphmemixError } from '../../src/errors/index.ts';
import { createOpenAICompatibleChat } from '../../src/providers/openai-compatible-chat.ts';
import { createOpenAICompatibleEmbedding } from '../../src/providers/openai-compatible-embedding.ts';
import { type RetryOptions, retryDelayMs, withRetry } from '../../src/providers/with-retry.ts';
import { type FakeOpenAIServer, startFakeOpenAIServer } from '../support/fake-openai-server.ts';

const ask = { messages: [{ role: 'user' as const, content: 'q' }], temperature: 0 };

describe('withRetry against the fake server', () => {
  let server: FakeOpenAIServer;
  let sleeps: number[];
  beforeAll(async () => {
    server = await startFakeOpenAIServer();
  });
  beforeEach(() => {
    server.reset();
    sleeps = [];
  });
  afterAll(() => server.close());

  const retrying = (options: RetryOptions = {}, timeoutMs?: number) =>
    withRetry(
      createOpenAICompatibleChat({
        baseUrl: server.baseUrl,
        model: 'fake',
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      }),
      {
        random: () => 0.5,
        sleep: async (ms) => {
          sleeps.push(ms);
        },
        ...options,
      },
    );

  it('retries 500 and succeeds', async () => {
    server.enqueue('chat', { type: 'error', status: 500 }, { type: 'text', content: 'fine' });
    const response = await retrying().chat(ask);
    expect(response.text).toBe('fine');
    expect(server.requests).toHaveLength(2);
    expect(sleeps).toEqual([375]); // 500 * 2^0 * (0.5 + 0.5 * 0.5)
  });

  it('honours Retry-After on 429', async () => {
    server.enqueue('chat', { type: 'error', status: 429, retryAfter: 3 }, { type: 'text', content: 'fine' });
    await retrying().chat(ask);
    expect(sleeps).toEqual([3000]);
    expect(server.requests).toHaveLength(2);
  });

  it('waits for real when no sleep is injected (Retry-After: 0.2 s)', async () => {
    server.enqueue(
      'chat',
      { type: 'error', status: 429, retryAfter: 0.2 },
      { type: 'text', content: 'fine' },
    );
    const model = withRetry(createOpenAICompatibleChat({ baseUrl: server.baseUrl, model: 'fake' }));
    const started = performance.now();
    await model.chat(ask);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('retries a dropped connection', async () => {
    server.enqueue('chat', { type: 'drop' }, { type: 'text', content: 'fine' });
    expect((await retrying().chat(ask)).text).toBe('fine');
    expect(server.requests).toHaveLength(2);
  });

  it('retries a slow reply that timed out', async () => {
    server.enqueue(
      'chat',
      { type: 'text', content: 'late', delayMs: 1000 },
      { type: 'text', content: 'fast' },
    );
    expect((await retrying({}, 150).chat(ask)).text).toBe('fast');
    expect(server.requests).toHaveLength(2);
  });

  it('never retries a 400', async () => {
    server.enqueue('chat', { type: 'error', status: 400 }, { type: 'text', content: 'unused' });
    await expect(retrying().chat(ask)).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE' });
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('stops after maxAttempts (default 4) with exponential backoff and throws the last error', async () => {
    server.enqueue(
      'chat',
      { type: 'error', status: 502 },
      { type: 'error', status: 503 },
      { type: 'error', status: 500 },
      { type: 'error', status: 504 },
      { type: 'text', content: 'unused' },
    );
    await expect(retrying().chat(ask)).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      details: { status: 504 },
    });
    expect(server.requests).toHaveLength(4);
    expect(sleeps).toEqual([375, 750, 1500]);
  });

  it('retries embeddings too', async () => {
    server.enqueue('embeddings', { type: 'error', status: 503 });
    const model = withRetry(createOpenAICompatibleEmbedding({ baseUrl: server.baseUrl, model: 'e' }), {
      sleep: async () => {},
    });
    const response = await model.embed([{ type: 'text', text: 'x' }]);
    expect(response.vectors).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });
});

describe('retryDelayMs', () => {
  it('caps backoff and Retry-After at maxDelayMs and uses the injected random source', () => {
    const error = new GraphmemixError('MODEL_UNAVAILABLE', 'x', { details: { retryable: true } });
    expect(retryDelayMs(1, error, { random: () => 0 })).toBe(250);
    expect(retryDelayMs(3, error, { random: () => 0.999999 })).toBeCloseTo(2000, 0);
    expect(retryDelayMs(20, error, { random: () => 0, maxDelayMs: 1000 })).toBe(500);
    const limited = new GraphmemixError('MODEL_UNAVAILABLE', 'x', {
      details: { retryable: true, retryAfterMs: 90_000 },
    });
    expect(retryDelayMs(1, limited)).toBe(30_000);
  });
});
