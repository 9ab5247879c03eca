import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphmemixError } from '../../src/errors/index.ts';
import type { ChatModel, ChatRequest, ChatResponse } from '../../src/providers/model-spec.ts';
import { createOpenAICompatibleChat } from '../../src/providers/openai-compatible-chat.ts';
import { callStructured, type ParseResult, parseJsonObject } from '../../src/providers/structured-call.ts';
import { withRetry } from '../../src/providers/with-retry.ts';
import { type FakeOpenAIServer, startFakeOpenAIServer } from '../support/fake-openai-server.ts';

/** Accepts {"ids": string[]} whose ids are all in `valid`. */
function parseIds(valid: string[]) {
  return (text: string): ParseResult<string[]> => {
    const parsed = parseJsonObject(text);
    if (!parsed.ok) return parsed;
    const ids = parsed.value.ids;
    if (!Array.isArray(ids)) return { ok: false, error: 'missing "ids" array' };
    const unknown = ids.filter((id) => !valid.includes(String(id)));
    if (unknown.length > 0) return { ok: false, error: `unknown ids ${unknown.join(', ')}` };
    return { ok: true, value: ids.map(String) };
  };
}

const request: ChatRequest = {
  messages: [{ role: 'user', content: 'pick ids' }],
  jsonMode: true,
  temperature: 0,
};

describe('callStructured against the fake server', () => {
  let server: FakeOpenAIServer;
  let model: ChatModel;
  beforeAll(async () => {
    server = await startFakeOpenAIServer();
    model = createOpenAICompatibleChat({ baseUrl: server.baseUrl, model: 'fake-verifier' });
  });
  afterAll(() => server.close());

  it('retries a malformed reply with the reply and one correction message, then succeeds', async () => {
    server.reset();
    server.enqueue(
      'chat',
      { type: 'text', content: '{"ids": ["C01",' },
      { type: 'json', value: { ids: ['C01'] } },
    );
    const result = await callStructured(model, request, parseIds(['C00', 'C01']), {
      correction: (error) => `Error: ${error}. Valid ids: C00, C01.`,
    });
    expect(result).toMatchObject({ ok: true, value: ['C01'], attempts: 2, cached: false });
    expect(result.usage.totalTokens).toBeGreaterThan(0);
    expect(server.requests).toHaveLength(2);
    const second = server.requests[1]?.body.messages;
    expect(second).toHaveLength(3);
    expect(second[1]).toEqual({ role: 'assistant', content: '{"ids": ["C01",' });
    expect(second[2].role).toBe('user');
    expect(second[2].content).toContain('Valid ids: C00, C01.');
    expect(server.requests[1]?.body.response_format).toEqual({ type: 'json_object' });
  });

  it('gives up after 3 bad replies with ok:false and attempts 3, keeping one correction only', async () => {
    server.reset();
    server.enqueue(
      'chat',
      { type: 'json', value: { ids: ['C99'] } },
      { type: 'text', content: 'I cannot decide.' },
      { type: 'json', value: { ids: ['C42'] } },
    );
    const result = await callStructured(model, request, parseIds(['C00']));
    expect(result.ok).toBe(false);
    expect(result.attempts).toBe(3);
    if (!result.ok) expect(result.error).toContain('C42');
    expect(server.requests).toHaveLength(3);
    // The third request carries only the latest bad reply and its correction.
    const third = server.requests[2]?.body.messages;
    expect(third).toHaveLength(3);
    expect(third[1].content).toBe('I cannot decide.');
  });

  it('counts transport failures that outlived the retry wrapper as attempts', async () => {
    server.reset();
    const retried = withRetry(model, { maxAttempts: 2, sleep: async () => {} });
    server.enqueue(
      'chat',
      { type: 'error', status: 500 },
      { type: 'error', status: 503 },
      { type: 'json', value: { ids: ['C00'] } },
    );
    const result = await callStructured(retried, request, parseIds(['C00']));
    expect(result).toMatchObject({ ok: true, value: ['C00'], attempts: 2 });
    expect(server.requests).toHaveLength(3);
  });

  it('stops at a non-retryable endpoint error (400) without throwing', async () => {
    server.reset();
    server.enqueue('chat', { type: 'error', status: 400, message: 'bad request' });
    const result = await callStructured(model, request, parseIds(['C00']));
    expect(result).toMatchObject({ ok: false, attempts: 1 });
    expect(server.requests).toHaveLength(1);
  });
});

describe('callStructured with an in-memory model', () => {
  function scripted(replies: Array<string | Error>): ChatModel & { seen: ChatRequest[] } {
    const seen: ChatRequest[] = [];
    return {
      specificationVersion: 'v1',
      provider: 'test',
      modelId: 'scripted',
      seen,
      async chat(req): Promise<ChatResponse> {
        seen.push(req);
        const next = replies.shift();
        if (next === undefined || next instanceof Error) throw next ?? new Error('no reply');
        return {
          text: next,
          usage: { promptTokens: 2, completionTokens: 1, totalTokens: 3 },
          model: 'scripted',
          cached: false,
          latencyMs: 1,
        };
      },
    };
  }

  it('sums usage over attempts and honours the attempts option', async () => {
    const model = scripted(['nope', 'nope', 'nope', 'nope', '{"ids":["A"]}']);
    const result = await callStructured(model, request, parseIds(['A']), { attempts: 5 });
    expect(result).toMatchObject({ ok: true, attempts: 5 });
    expect(result.usage).toEqual({ promptTokens: 10, completionTokens: 5, totalTokens: 15 });
  });

  it('rethrows errors that are bad input, not model faults', async () => {
    const model = scripted([new GraphmemixError('NOT_FOUND_PATH', 'missing image')]);
    await expect(callStructured(model, request, parseIds(['A']))).rejects.toMatchObject({
      code: 'NOT_FOUND_PATH',
    });
  });

  it('treats a throwing parser as a bad reply', async () => {
    const model = scripted(['x', 'y', 'z']);
    const result = await callStructured(model, request, () => {
      throw new Error('parser blew up');
    });
    expect(result).toMatchObject({ ok: false, attempts: 3, error: 'parser blew up' });
  });

  it('returns ok:false when the caller aborts', async () => {
    const controller = new AbortController();
    controller.abort();
    const model = scripted(['{"ids":["A"]}']);
    const result = await callStructured(model, { ...request, signal: controller.signal }, parseIds(['A']));
    expect(result).toMatchObject({ ok: false, attempts: 0 });
    expect(model.seen).toHaveLength(0);
  });
});

describe('parseJsonObject', () => {
  it.each([
    ['{"a":1}', { a: 1 }],
    ['```json\n{"a": 2}\n```', { a: 2 }],
    ['Here is the answer:\n{"a": {"b": "}"}} hope it helps', { a: { b: '}' } }],
    ['  {"selected": []}  ', { selected: [] }],
  ])('extracts an object from %j', (text, expected) => {
    expect(parseJsonObject(text)).toEqual({ ok: true, value: expected });
  });

  it.each(['', '[1,2]', '{"a":', 'no json here', '42'])('rejects %j', (text) => {
    expect(parseJsonObject(text).ok).toBe(false);
  });
});
