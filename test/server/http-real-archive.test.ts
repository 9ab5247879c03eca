import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createServer } from '../../src/server/create-server.ts';

// The same routes over the real pipeline and store (in-memory backend): isolation and "rejected requests
// change nothing" must hold end to end, not only against the fake.
describe('HTTP API over a real archive', () => {
  let graphmemix: Graphmemix;
  let app: Hono;
  const headers = { authorization: 'Bearer k', 'content-type': 'application/json' };
  const post = (path: string, body: unknown) =>
    app.request(path, { method: 'POST', headers, body: JSON.stringify(body) });

  beforeAll(async () => {
    graphmemix = await openGraphmemix({ db: 'memory:' });
    app = createServer({ graphmemix, apiKeys: ['k'], maxBodyBytes: 64 * 1024 });
    const lines = [
      {
        id: 'a1',
        text: 'Maya: the pottery workshop is on Saturday 13 April in Studio 2',
        timestamp: '2024-04-02T09:00:00Z',
        sessionId: 's1',
      },
      {
        id: 'a2',
        text: 'Maya: the pottery workshop moved to Sunday 14 April, Studio 5',
        timestamp: '2024-04-09T17:40:00Z',
        sessionId: 's2',
      },
      {
        id: 'a3',
        text: 'Maya bought basil seeds for the garden',
        timestamp: '2024-04-06T10:00:00Z',
        sessionId: 's3',
      },
    ];
    const form = new FormData();
    form.set('user_id', 'maya');
    form.set('format', 'unified');
    form.set('file', new File([lines.map((line) => JSON.stringify(line)).join('\n')], 'chats.jsonl'));
    const imported = await app.request('/v1/memories/import', {
      method: 'POST',
      headers: { authorization: 'Bearer k' },
      body: form,
    });
    expect(imported.status, await imported.clone().text()).toBe(200);
    const added = await post('/v1/memories', {
      user_id: 'leo',
      memories: [
        {
          id: 'l1',
          text: 'Leo secret: pottery workshop surprise gift for Maya, code 7788',
          timestamp: '2024-04-05',
        },
      ],
    });
    expect(added.status).toBe(200);
  });
  afterAll(async () => {
    await graphmemix.close();
  });

  it('keeps users apart on search, retrieve, answer, get and view', async () => {
    expect(await graphmemix.store.countMemories('maya')).toBe(3);
    expect(await graphmemix.store.countMemories('leo')).toBe(1);
    const question = 'pottery workshop surprise gift code';
    const search = await (await post('/v1/search', { user_id: 'maya', query: question })).text();
    const retrieve = await (await post('/v1/retrieve', { user_id: 'maya', question })).text();
    const answer = await (await post('/v1/answer', { user_id: 'maya', question })).text();
    const view = await (
      await app.request(`/view?user_id=maya&q=${encodeURIComponent(question)}`, { headers })
    ).text();
    for (const body of [search, retrieve, answer, view]) {
      expect(body).toContain('pottery');
      // Leo's text, not its bare number: a body's timings are floats, and "1.37788..." once failed this check.
      expect(body).not.toContain('code 7788');
      expect(body).not.toContain('Leo secret');
      expect(body).not.toMatch(/\bl1\b/);
    }
    expect((await app.request('/v1/memories/l1?user_id=maya', { headers })).status).toBe(404);
    const leo = (await (await post('/v1/retrieve', { user_id: 'leo', question })).json()) as {
      evidence: { memory_id: string }[];
    };
    expect(leo.evidence.map((e) => e.memory_id)).toEqual(['l1']);
  });

  it('leaves the store unchanged on 400 and 413', async () => {
    const before = await graphmemix.store.countMemories('maya');
    const tooBig = await post('/v1/memories', {
      user_id: 'maya',
      memories: [{ id: 'big', text: 'x'.repeat(100_000) }],
    });
    expect(tooBig.status).toBe(413);
    const malformed = await app.request('/v1/memories', {
      method: 'POST',
      headers,
      body: '{"user_id":"maya","memories":[{"id":"z"',
    });
    expect(malformed.status).toBe(400);
    const badRecord = await post('/v1/memories', {
      user_id: 'maya',
      memories: [{ id: 'z', text: 'ok', timestamp: 'not a date' }],
    });
    expect(badRecord.status).toBe(400);
    expect(
      ((await badRecord.json()) as { error: { location: { field: string } } }).error.location.field,
    ).toBe('memories.0.timestamp');
    expect(await graphmemix.store.countMemories('maya')).toBe(before);
    expect(await graphmemix.getMemory('maya', 'z')).toBeUndefined();
  });
});
