import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isGraphmemixError } from '../../src/errors/graphmemix-error.ts';
import type { ChatModel, EmbeddingInput, EmbeddingModel } from '../../src/providers/model-spec.ts';
import { createOpenAICompatibleChat } from '../../src/providers/openai-compatible-chat.ts';
import { createOpenAICompatibleEmbedding } from '../../src/providers/openai-compatible-embedding.ts';
import { withCache } from '../../src/providers/with-cache.ts';
import { withConcurrency } from '../../src/providers/with-concurrency.ts';
import { withRetry } from '../../src/providers/with-retry.ts';
import {
  type FakeOpenAIServer,
  fakeEmbedding,
  startFakeOpenAIServer,
} from '../support/fake-openai-server.ts';

/**
 * Conformance of the model ports (ChatModel, EmbeddingModel in src/providers/model-spec.ts), run against every
 * implementation: the OpenAI-compatible adapters and each wrapper around them, over a scripted local server.
 */
let server: FakeOpenAIServer;
const cacheDir = mkdtempSync(join(tmpdir(), 'gmx-model-conformance-'));
beforeAll(async () => {
  server = await startFakeOpenAIServer();
});
afterAll(async () => {
  await server.close();
  rmSync(cacheDir, { recursive: true, force: true });
});
beforeEach(() => server.setHandler('chat', undefined));

const noWait = { maxAttempts: 2, sleep: async () => {} };
const rawChat = () => createOpenAICompatibleChat({ baseUrl: server.baseUrl, model: 'fake-chat' });
const rawEmbedding = () =>
  createOpenAICompatibleEmbedding({ baseUrl: server.baseUrl, model: 'fake-embed', supportsImages: false });
let cacheRun = 0;
const freshCache = () => ({ dir: join(cacheDir, String(cacheRun++)), chat: 'all' as const });

const chats: [string, () => ChatModel][] = [
  ['openai-compatible chat', rawChat],
  ['withRetry(chat)', () => withRetry(rawChat(), noWait)],
  ['withConcurrency(chat)', () => withConcurrency(rawChat(), 2)],
  ['withCache(chat)', () => withCache(rawChat(), freshCache())],
];
const embeddings: [string, () => EmbeddingModel][] = [
  ['openai-compatible embedding', rawEmbedding],
  ['withRetry(embedding)', () => withRetry(rawEmbedding(), noWait)],
  ['withConcurrency(embedding)', () => withConcurrency(rawEmbedding(), 2)],
  ['withCache(embedding)', () => withCache(rawEmbedding(), freshCache())],
];

describe.each(chats)('ChatModel conformance: %s', (_name, make) => {
  it('declares the port version, provider and model id', () => {
    const model = make();
    expect(model.specificationVersion).toBe('v1');
    expect(model.provider.length).toBeGreaterThan(0);
    expect(model.modelId).toBe('fake-chat');
  });

  it('returns the reply text with usage, model, cached and latency', async () => {
    server.setHandler('chat', () => ({
      type: 'text',
      content: 'March 15',
      usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 },
    }));
    const reply = await make().chat({ messages: [{ role: 'user', content: 'When?' }] });
    expect(reply.text).toBe('March 15');
    expect(reply.usage).toEqual({ promptTokens: 7, completionTokens: 2, totalTokens: 9 });
    expect(typeof reply.model).toBe('string');
    expect(reply.cached).toBe(false);
    expect(reply.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('a refused request rejects with a typed GraphmemixError', async () => {
    server.setHandler('chat', () => ({ type: 'error', status: 400, message: 'bad request' }));
    const error = await make()
      .chat({ messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(isGraphmemixError(error)).toBe(true);
  });

  it('an aborted signal rejects with a typed GraphmemixError', async () => {
    server.setHandler('chat', () => ({ type: 'text', content: 'late', delayMs: 5_000 }));
    const controller = new AbortController();
    const pending = make().chat({
      messages: [{ role: 'user', content: 'abort me' }],
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 20);
    const error = await pending.catch((e: unknown) => e);
    expect(isGraphmemixError(error)).toBe(true);
  });
});

describe.each(embeddings)('EmbeddingModel conformance: %s', (_name, make) => {
  it('declares the port version, provider, model id and image support', () => {
    const model = make();
    expect(model.specificationVersion).toBe('v1');
    expect(model.provider.length).toBeGreaterThan(0);
    expect(model.modelId).toBe('fake-embed');
    expect(model.supportsImages).toBe(false);
  });

  it('returns one vector per input, in input order', async () => {
    const inputs: EmbeddingInput[] = [
      { type: 'text', text: 'alpha' },
      { type: 'text', text: 'beta' },
      { type: 'text', text: 'gamma' },
    ];
    const reply = await make().embed(inputs);
    expect(reply.vectors).toHaveLength(3);
    for (const vector of reply.vectors) expect(vector).toBeInstanceOf(Float32Array);
    expect(reply.vectors.map((v) => [...v])).toEqual(['alpha', 'beta', 'gamma'].map((t) => fakeEmbedding(t)));
    expect(reply.usage.totalTokens).toBeGreaterThanOrEqual(0);
  });

  it('a refused request rejects with a typed GraphmemixError', async () => {
    server.setHandler('embeddings', () => ({ type: 'error', status: 400, message: 'bad request' }));
    try {
      const error = await make()
        .embed([{ type: 'text', text: 'refused' }])
        .catch((e: unknown) => e);
      expect(isGraphmemixError(error)).toBe(true);
    } finally {
      server.setHandler('embeddings', undefined);
    }
  });
});
