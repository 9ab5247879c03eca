import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAICompatibleChat } from '../../src/providers/openai-compatible-chat.ts';
import { createConcurrencyLimiter, withConcurrency } from '../../src/providers/with-concurrency.ts';
import { type FakeOpenAIServer, startFakeOpenAIServer } from '../support/fake-openai-server.ts';

describe('withConcurrency', () => {
  let server: FakeOpenAIServer;
  beforeAll(async () => {
    server = await startFakeOpenAIServer({
      handlers: { chat: () => ({ type: 'text', content: 'ok', delayMs: 80 }) },
    });
  });
  afterAll(() => server.close());

  it('keeps in-flight requests on the server at or under the shared limit', async () => {
    const limiter = createConcurrencyLimiter(3);
    const a = withConcurrency(createOpenAICompatibleChat({ baseUrl: server.baseUrl, model: 'a' }), limiter);
    const b = withConcurrency(createOpenAICompatibleChat({ baseUrl: server.baseUrl, model: 'b' }), limiter);
    const calls = Array.from({ length: 12 }, (_, i) =>
      (i % 2 === 0 ? a : b).chat({ messages: [{ role: 'user', content: `q${i}` }] }),
    );
    const replies = await Promise.all(calls);
    expect(replies.every((r) => r.text === 'ok')).toBe(true);
    expect(server.requests).toHaveLength(12);
    expect(server.maxInFlight).toBe(3);
    expect(limiter.active).toBe(0);
  });

  it('releases the slot when a call fails, and a queued caller can abort', async () => {
    const limiter = createConcurrencyLimiter(1);
    let release!: () => void;
    const blocker = limiter.run(() => new Promise<void>((resolve) => (release = resolve)));
    const controller = new AbortController();
    const queued = limiter.run(async () => 'never', controller.signal);
    expect(limiter.waiting).toBe(1);
    controller.abort();
    await expect(queued).rejects.toBeDefined();
    expect(limiter.waiting).toBe(0);
    release();
    await blocker;
    await expect(limiter.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(limiter.active).toBe(0);
    expect(await limiter.run(async () => 'next')).toBe('next');
  });

  it('rejects a limit below 1 with CONFIG', () => {
    expect(() => createConcurrencyLimiter(0)).toThrow(expect.objectContaining({ code: 'CONFIG' }));
  });
});
