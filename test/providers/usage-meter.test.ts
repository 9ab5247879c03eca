import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAICompatibleChat } from '../../src/providers/openai-compatible-chat.ts';
import { createOpenAICompatibleEmbedding } from '../../src/providers/openai-compatible-embedding.ts';
import { createUsageMeter, withUsage } from '../../src/providers/usage-meter.ts';
import { withCache } from '../../src/providers/with-cache.ts';
import { type FakeOpenAIServer, startFakeOpenAIServer } from '../support/fake-openai-server.ts';

describe('usage meter', () => {
  let server: FakeOpenAIServer;
  beforeAll(async () => {
    server = await startFakeOpenAIServer();
  });
  afterAll(() => server.close());

  it('records calls, tokens, cache hits and failures per model', async () => {
    const meter = createUsageMeter();
    const dir = mkdtempSync(join(tmpdir(), 'gmx-usage-'));
    const chat = withUsage(
      withCache(createOpenAICompatibleChat({ baseUrl: server.baseUrl, model: 'chat-a' }), { dir }),
      meter,
    );
    const embed = withUsage(
      createOpenAICompatibleEmbedding({ baseUrl: server.baseUrl, model: 'embed-b' }),
      meter,
    );
    server.enqueue(
      'chat',
      {
        type: 'json',
        value: { a: 1 },
        usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
      },
      { type: 'error', status: 400 },
    );
    const request = { messages: [{ role: 'user' as const, content: 'q' }], temperature: 0 };
    await chat.chat(request);
    await chat.chat(request); // cache hit
    await expect(chat.chat({ ...request, maxTokens: 5 })).rejects.toBeDefined();
    await embed.embed([
      { type: 'text', text: 'x' },
      { type: 'text', text: 'y' },
    ]);

    const snapshot = meter.snapshot();
    expect(snapshot.byModel['chat-a']).toEqual({
      calls: 3,
      cachedCalls: 1,
      failedCalls: 1,
      promptTokens: 100,
      completionTokens: 20,
      totalTokens: 120,
    });
    expect(snapshot.byModel['embed-b']).toMatchObject({ calls: 1, promptTokens: 2, totalTokens: 2 });
    expect(snapshot.total).toMatchObject({ calls: 4, totalTokens: 122 });
    // Snapshots are copies.
    await embed.embed([{ type: 'text', text: 'z' }]);
    expect(snapshot.byModel['embed-b']?.calls).toBe(1);
    expect(meter.snapshot().byModel['embed-b']?.calls).toBe(2);
    meter.reset();
    expect(meter.snapshot().total.calls).toBe(0);
  });
});
