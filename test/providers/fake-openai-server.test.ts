import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type FakeOpenAIServer,
  fakeEmbedding,
  startFakeOpenAIServer,
} from '../support/fake-openai-server.ts';

async function post(
  url: string,
  body: unknown,
): Promise<{ status: number; json: unknown; headers: Headers }> {
  const response = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
  return { status: response.status, json: await response.json(), headers: response.headers };
}

describe('fake OpenAI server', () => {
  let server: FakeOpenAIServer;
  beforeAll(async () => {
    server = await startFakeOpenAIServer({ embeddingDimensions: 4 });
  });
  beforeEach(() => server.reset());
  afterAll(() => server.close());

  it('answers scripted chat replies in order, then fails loudly (400) when the script runs out', async () => {
    server.enqueue('chat', { type: 'json', value: { a: 1 } }, { type: 'text', content: 'two' });
    const url = `${server.baseUrl}/chat/completions`;
    const first = await post(url, { model: 'm', messages: [] });
    expect(first.json).toMatchObject({
      model: 'm',
      choices: [{ message: { role: 'assistant', content: '{"a":1}' } }],
    });
    expect((await post(url, { model: 'm' })).json).toMatchObject({
      choices: [{ message: { content: 'two' } }],
    });
    const third = await post(url, { model: 'm' });
    expect(third.status).toBe(400);
    expect(server.requestsFor('chat').map((r) => r.body.model)).toEqual(['m', 'm', 'm']);
  });

  it('sends Retry-After with scripted errors and 404 for unknown routes', async () => {
    server.enqueue('chat', { type: 'error', status: 429, retryAfter: 7 });
    const limited = await post(`${server.baseUrl}/chat/completions`, {});
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect((await post(`${server.baseUrl}/completions`, {})).status).toBe(404);
  });

  it('embeds deterministically by default and drops connections on request', async () => {
    const url = `${server.baseUrl}/embeddings`;
    const reply = (await post(url, { model: 'e', input: ['a', 'b'] })).json as {
      data: { embedding: number[] }[];
    };
    expect(reply.data.map((d) => d.embedding)).toEqual([fakeEmbedding('a', 4), fakeEmbedding('b', 4)]);
    expect(Math.hypot(...fakeEmbedding('a', 4))).toBeCloseTo(1, 5);
    expect(fakeEmbedding('a', 4)).not.toEqual(fakeEmbedding('b', 4));
    server.enqueue('embeddings', { type: 'drop' });
    await expect(post(url, { input: 'x' })).rejects.toThrow();
    expect(server.requests).toHaveLength(2);
  });

  it('uses a handler when the queue is empty', async () => {
    server.setHandler('chat', (request) => ({
      type: 'text',
      content: `echo ${request.body.messages[0].content}`,
    }));
    const reply = await post(`${server.baseUrl}/chat/completions`, {
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(reply.json).toMatchObject({ choices: [{ message: { content: 'echo hi' } }] });
    server.setHandler('chat', undefined);
  });
});
