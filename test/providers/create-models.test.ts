import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createModels } from '../../src/providers/create-models.ts';
import { callStructured, parseJsonObject } from '../../src/providers/structured-call.ts';
import { createUsageMeter } from '../../src/providers/usage-meter.ts';
import { type FakeOpenAIServer, startFakeOpenAIServer } from '../support/fake-openai-server.ts';

describe('createModels', () => {
  let server: FakeOpenAIServer;
  beforeAll(async () => {
    server = await startFakeOpenAIServer();
  });
  beforeEach(() => server.reset());
  afterAll(() => server.close());

  it('returns {} when nothing is configured', () => {
    expect(createModels({})).toEqual({});
  });

  it('wires retry, shared concurrency, cache and usage around every role', async () => {
    const meter = createUsageMeter();
    const cacheDir = mkdtempSync(join(tmpdir(), 'gmx-models-'));
    const endpoint = { baseUrl: server.baseUrl, model: 'fake-llm', maxConcurrency: 2 };
    const models = createModels(
      {
        verifier: endpoint,
        reader: { ...endpoint, maxConcurrency: 5 },
        embedding: { baseUrl: server.baseUrl, model: 'fake-embed', supportsImages: false },
      },
      { cacheDir, usageMeter: meter, retry: { sleep: async () => {} } },
    );
    expect(Object.keys(models).sort()).toEqual(['embedding', 'reader', 'verifier']);

    // Retry: one 503 then a good reply, seen as one successful structured attempt.
    server.enqueue('chat', { type: 'error', status: 503 }, { type: 'json', value: { ok: true } });
    const request = { messages: [{ role: 'user' as const, content: 'q' }], jsonMode: true, temperature: 0 };
    const first = await callStructured(models.verifier!, request, parseJsonObject);
    expect(first).toMatchObject({ ok: true, attempts: 1, cached: false });
    // Cache: the same call again never reaches the server.
    const second = await callStructured(models.verifier!, request, parseJsonObject);
    expect(second).toMatchObject({ ok: true, cached: true });
    expect(server.requestsFor('chat')).toHaveLength(2);

    // Shared concurrency: verifier and reader share one endpoint limited to 2 in flight.
    server.reset();
    server.setHandler('chat', () => ({ type: 'text', content: 'slow', delayMs: 80 }));
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 ? models.reader! : models.verifier!).chat({ messages: [{ role: 'user', content: `q${i}` }] }),
      ),
    );
    server.setHandler('chat', undefined);
    expect(server.maxInFlight).toBe(2);

    await models.embedding!.embed([{ type: 'text', text: 'x' }]);
    const usage = meter.snapshot();
    expect(usage.byModel['fake-llm']).toMatchObject({ calls: 10, cachedCalls: 1, failedCalls: 0 });
    expect(usage.byModel['fake-embed']).toMatchObject({ calls: 1 });
  });
});
