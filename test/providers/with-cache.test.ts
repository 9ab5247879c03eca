import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAICompatibleChat } from '../../src/providers/openai-compatible-chat.ts';
import { createOpenAICompatibleEmbedding } from '../../src/providers/openai-compatible-embedding.ts';
import { withCache } from '../../src/providers/with-cache.ts';
import { type FakeOpenAIServer, startFakeOpenAIServer } from '../support/fake-openai-server.ts';

describe('withCache', () => {
  let server: FakeOpenAIServer;
  let dir: string;
  beforeAll(async () => {
    server = await startFakeOpenAIServer({
      handlers: { chat: (r) => ({ type: 'text', content: `reply ${r.body.messages.length}` }) },
    });
  });
  beforeEach(() => {
    server.reset();
    dir = mkdtempSync(join(tmpdir(), 'gmx-cache-'));
  });
  afterAll(() => server.close());

  const chat = (model = 'fake') => createOpenAICompatibleChat({ baseUrl: server.baseUrl, model });
  const structured = { messages: [{ role: 'user' as const, content: 'q' }], jsonMode: true, temperature: 0 };

  it('serves the second identical structured call from disk without reaching the server', async () => {
    const cached = withCache(chat(), { dir });
    const first = await cached.chat(structured);
    const second = await cached.chat({ ...structured, signal: new AbortController().signal });
    expect(first.cached).toBe(false);
    expect(second).toMatchObject({ text: first.text, cached: true, usage: { totalTokens: 0 } });
    expect(server.requests).toHaveLength(1);
    // A fresh wrapper over the same directory (a new process) hits too.
    const again = await withCache(chat(), { dir }).chat(structured);
    expect(again.cached).toBe(true);
    expect(server.requests).toHaveLength(1);
    expect(readdirSync(dir)).toHaveLength(1);
  });

  it('misses on any change: message text, max tokens, model id', async () => {
    const cached = withCache(chat(), { dir });
    await cached.chat(structured);
    await cached.chat({ ...structured, messages: [{ role: 'user', content: 'q2' }] });
    await cached.chat({ ...structured, maxTokens: 10 });
    await withCache(chat('other-model'), { dir }).chat(structured);
    expect(server.requests).toHaveLength(4);
  });

  it('passes sampled calls (temperature > 0, no json mode) through unless chat: all', async () => {
    const sampled = { messages: [{ role: 'user' as const, content: 'q' }], temperature: 0.7 };
    const cached = withCache(chat(), { dir });
    await cached.chat(sampled);
    await cached.chat(sampled);
    expect(server.requests).toHaveLength(2);
    const all = withCache(chat(), { dir, chat: 'all' });
    await all.chat(sampled);
    expect((await all.chat(sampled)).cached).toBe(true);
    expect(server.requests).toHaveLength(3);
  });

  it('does not store failures', async () => {
    server.enqueue('chat', { type: 'error', status: 400 });
    const cached = withCache(chat(), { dir });
    await expect(cached.chat(structured)).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE' });
    expect((await cached.chat(structured)).cached).toBe(false);
    expect(server.requests).toHaveLength(2);
  });

  it('caches embeddings and returns equal Float32Array vectors', async () => {
    const embedder = withCache(createOpenAICompatibleEmbedding({ baseUrl: server.baseUrl, model: 'e' }), {
      dir,
    });
    const inputs = [
      { type: 'text' as const, text: 'one' },
      { type: 'text' as const, text: 'two' },
    ];
    const first = await embedder.embed(inputs);
    const second = await embedder.embed(inputs);
    expect(second.cached).toBe(true);
    expect(second.vectors.map((v) => Array.from(v))).toEqual(first.vectors.map((v) => Array.from(v)));
    expect(second.vectors[0]).toBeInstanceOf(Float32Array);
    expect(server.requestsFor('embeddings')).toHaveLength(1);
  });

  it('treats a cache directory that cannot be written as no cache', async () => {
    const blocker = join(dir, 'a-file');
    writeFileSync(blocker, 'not a directory');
    const cached = withCache(chat(), { dir: blocker });
    expect((await cached.chat(structured)).cached).toBe(false);
    expect((await cached.chat(structured)).cached).toBe(false);
    expect(server.requests).toHaveLength(2);
  });
});
