import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { createServer } from '../../src/server/create-server.ts';
import { startServer } from '../../src/server/start-server.ts';
import { createFakeGraphmemix } from '../support/fake-graphmemix.ts';

const KEY = 'test-key-123';
const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

function setup(options: { maxBodyBytes?: number } = {}) {
  const graphmemix = createFakeGraphmemix();
  const mediaDir = mkdtempSync(join(tmpdir(), 'gmx-media-'));
  const app = createServer({ graphmemix, apiKeys: [KEY], mediaDir, ...options });
  const post = (path: string, body: unknown, headers: Record<string, string> = auth) =>
    app.request(path, {
      method: 'POST',
      headers,
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const get = (path: string, headers: Record<string, string> = auth) => app.request(path, { headers });
  return { graphmemix, mediaDir, app, post, get };
}

async function seed(post: ReturnType<typeof setup>['post']) {
  const alice = await post('/v1/memories', {
    user_id: 'alice',
    memories: [
      {
        id: 'a1',
        text: 'Alice booked the flight to Lisbon for the conference',
        timestamp: '2024-03-01T10:00:00Z',
      },
      { id: 'a2', text: 'The Lisbon conference moved to Porto in April', timestamp: '2024-03-05T09:00:00Z' },
      { id: 'shared', text: 'Lisbon flight receipt', timestamp: '2024-03-02' },
    ],
  });
  const bob = await post('/v1/memories', {
    user_id: 'bob',
    memories: [
      { id: 'b1', text: 'Bob also flies to Lisbon for the conference', timestamp: '2024-03-03' },
      { id: 'shared', text: 'Bob Lisbon secret note', timestamp: '2024-03-04' },
    ],
  });
  expect(alice.status).toBe(200);
  expect(bob.status).toBe(200);
}

const errorCode = async (response: Response) =>
  ((await response.json()) as { error: { code: string } }).error.code;

describe('HTTP API', () => {
  let ctx: ReturnType<typeof setup>;
  beforeEach(async () => {
    ctx = setup();
    await seed(ctx.post);
  });

  it('adds, gets and deletes memories scoped by user', async () => {
    const got = await ctx.get('/v1/memories/a1?user_id=alice');
    expect(got.status).toBe(200);
    expect(((await got.json()) as { memory: { text: string } }).memory.text).toContain('flight to Lisbon');
    const deleted = await ctx.app.request('/v1/memories/a1?user_id=alice', {
      method: 'DELETE',
      headers: auth,
    });
    expect(deleted.status).toBe(200);
    expect(ctx.graphmemix.count('alice')).toBe(2);
    const again = await ctx.get('/v1/memories/a1?user_id=alice');
    expect(again.status).toBe(404);
    expect(await errorCode(again)).toBe('NOT_FOUND');
  });

  it('retrieve answers with evidence memory_ids, forest and trace', async () => {
    const response = await ctx.post('/v1/retrieve', {
      user_id: 'alice',
      question: 'Where is the Lisbon conference?',
      k: 5,
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      evidence: { memory_id: string; rank: number }[];
      forest: { trees: unknown[]; trace: { swaps: unknown[] } };
      trace: { flags: string[] };
    };
    expect(body.evidence.length).toBeGreaterThan(0);
    expect(body.evidence[0]?.rank).toBe(1);
    expect(body.forest.trees.length).toBeGreaterThan(0);
    expect(Array.isArray(body.trace.flags)).toBe(true);
  });

  it('never returns user B memories to user A through any route', async () => {
    const ids = (items: { memory_id: string }[]) => items.map((item) => item.memory_id);
    const bobIds = new Set(['b1']);
    const search = (await (
      await ctx.post('/v1/search', { user_id: 'alice', query: 'Lisbon conference Bob' })
    ).json()) as {
      results: { memory_id: string; memory: { text: string; contextId: string } }[];
      flags: string[];
    };
    expect(search.results.length).toBeGreaterThan(0);
    expect(search.flags).toEqual([]);
    for (const hit of search.results) {
      expect(bobIds.has(hit.memory_id)).toBe(false);
      expect(hit.memory.contextId).toBe('alice');
      expect(hit.memory.text).not.toContain('Bob');
    }
    for (const route of ['/v1/retrieve', '/v1/answer']) {
      const body = (await (
        await ctx.post(route, { user_id: 'alice', question: 'Bob Lisbon secret note' })
      ).json()) as {
        evidence: { memory_id: string; text: string }[];
        pool: { memoryId: string }[];
      };
      expect(ids(body.evidence).some((id) => bobIds.has(id))).toBe(false);
      expect(body.evidence.every((item) => !item.text.includes('Bob'))).toBe(true);
      expect(body.pool.every((c) => !bobIds.has(c.memoryId))).toBe(true);
    }
    // Same id in both archives: each user sees only their own record.
    const shared = (await (await ctx.get('/v1/memories/shared?user_id=alice')).json()) as {
      memory: { text: string };
    };
    expect(shared.memory.text).toBe('Lisbon flight receipt');
    expect((await ctx.get('/v1/memories/b1?user_id=alice')).status).toBe(404);
    const del = await ctx.app.request('/v1/memories/b1?user_id=alice', { method: 'DELETE', headers: auth });
    expect(del.status).toBe(404);
    expect(ctx.graphmemix.count('bob')).toBe(2);
    const view = await ctx.get('/view?user_id=alice&q=Bob%20secret%20note');
    expect(view.status).toBe(200);
    const html = await view.text();
    expect(html).not.toContain('Bob Lisbon secret note');
    expect(html).not.toContain('"b1"');
    expect(ctx.graphmemix.calls.filter((call) => call.contextId === 'bob').map((c) => c.method)).toEqual([
      'addMemories',
    ]);
  });

  it('refuses requests without a valid key on every protected route', async () => {
    const routes: [string, string][] = [
      ['POST', '/v1/memories'],
      ['POST', '/v1/memories/import'],
      ['GET', '/v1/memories/a1?user_id=alice'],
      ['DELETE', '/v1/memories/a1?user_id=alice'],
      ['POST', '/v1/search'],
      ['POST', '/v1/retrieve'],
      ['POST', '/v1/answer'],
      ['GET', '/view?user_id=alice&q=x'],
    ];
    for (const [method, path] of routes) {
      for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: KEY }]) {
        const init: RequestInit = { method, headers };
        if (method === 'POST')
          init.body = JSON.stringify({ user_id: 'alice', memories: [{ id: 'x', text: 'y' }] });
        const response = await ctx.app.request(path, init);
        expect(response.status, `${method} ${path}`).toBe(401);
        expect(await errorCode(response)).toBe('UNAUTHORIZED');
      }
    }
    expect(ctx.graphmemix.count('alice')).toBe(3);
    expect((await ctx.app.request('/v1/health')).status).toBe(200);
  });

  it('rejects malformed input with 400 INVALID_INPUT and leaves the store unchanged', async () => {
    const bad: unknown[] = [
      '{"user_id": "alice", "memories": [',
      '',
      { memories: [{ id: 'x', text: 'no user' }] },
      { user_id: 'alice', memories: [] },
      { user_id: '../etc', memories: [{ id: 'x', text: 'path user' }] },
      { user_id: 'alice', memories: [{ text: 'no id' }] },
      { user_id: 'alice', memories: [{ id: 'x', text: 42 }] },
    ];
    for (const body of bad) {
      const response = await ctx.post('/v1/memories', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(await errorCode(response)).toBe('INVALID_INPUT');
    }
    // THE record schema validates every record of the body: a bad field (or an unknown one) is a 400 that
    // names it and changes nothing.
    for (const [memory, field] of [
      [{ id: 'x', timestamp: 'soon' }, 'memories.0.timestamp'],
      [{ id: 'x', text: 'hi', timestmap: '2024-01-01' }, 'memories.0.timestmap'],
      [{ id: 'x', text: 'hi', assets: [{ kind: 'image', url: 'u' }] }, 'memories.0.assets.0.url'],
    ] as const) {
      const rejected = await ctx.post('/v1/memories', { user_id: 'alice', memories: [memory] });
      expect(rejected.status).toBe(400);
      const error = ((await rejected.json()) as { error: { code: string; location?: { field?: string } } })
        .error;
      expect(error.code).toBe('INVALID_INPUT');
      expect(error.location?.field).toBe(field);
    }
    // Records that pass the schema but fail the ingest rules (no content) are reported; all rejected -> 400.
    const rejected = await ctx.post('/v1/memories', { user_id: 'alice', memories: [{ id: 'x' }] });
    expect(rejected.status).toBe(400);
    for (const [route, body] of [
      ['/v1/retrieve', { user_id: 'alice' }],
      ['/v1/retrieve', { user_id: 'alice', question: 'x', k: 0 }],
      ['/v1/search', { user_id: 'alice', query: '   ' }],
      ['/v1/answer', 'not json'],
    ] as const) {
      const response = await ctx.post(route, body);
      expect(response.status, route).toBe(400);
      expect(await errorCode(response)).toBe('INVALID_INPUT');
    }
    expect(ctx.graphmemix.count('alice')).toBe(3);
    expect(ctx.graphmemix.count('x')).toBe(0);
  });

  it('answers 413 TOO_LARGE for oversized bodies without touching the store', async () => {
    const small = setup({ maxBodyBytes: 2048 });
    const big = { user_id: 'alice', memories: [{ id: 'big', text: 'x'.repeat(5000) }] };
    const response = await small.post('/v1/memories', big);
    expect(response.status).toBe(413);
    expect(await errorCode(response)).toBe('TOO_LARGE');
    expect(small.graphmemix.count('alice')).toBe(0);
    expect(small.graphmemix.calls).toHaveLength(0);
  });

  it('accepts multipart memories with images saved under the media dir', async () => {
    const form = new FormData();
    form.set('user_id', 'alice');
    form.set('memories', JSON.stringify([{ id: 'p1', timestamp: '2024-03-06T12:00:00Z' }]));
    form.set(
      'asset:p1',
      new File([new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3])], 'ticket.jpg', { type: 'image/jpeg' }),
    );
    const response = await ctx.app.request('/v1/memories', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: form,
    });
    expect(response.status).toBe(200);
    const record = await ctx.graphmemix.getMemory('alice', 'p1');
    expect(record?.kind).toBe('photo');
    expect(record?.assets[0]?.uri).toContain(join(ctx.mediaDir, 'alice'));
    expect(record?.assets[0]?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(readdirSync(join(ctx.mediaDir, 'alice'))).toHaveLength(1);

    const stray = new FormData();
    stray.set('user_id', 'alice');
    stray.set('memories', JSON.stringify([{ id: 'p2', text: 'x' }]));
    stray.set('asset:nope', new File([new Uint8Array([1])], 'a.jpg'));
    const bad = await ctx.app.request('/v1/memories', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: stray,
    });
    expect(bad.status).toBe(400);
    expect(await ctx.graphmemix.getMemory('alice', 'p2')).toBeUndefined();
  });

  it('refuses a record with more uploads than its asset limit before writing any of them', async () => {
    const form = new FormData();
    form.set('user_id', 'alice');
    form.set('memories', JSON.stringify([{ id: 'many', text: 'a photo album' }]));
    for (let i = 0; i < 257; i++)
      form.append('asset:many', new File([new Uint8Array([i % 256, 1])], `${i}.jpg`));
    const response = await ctx.app.request('/v1/memories', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: form,
    });
    expect(response.status).toBe(413);
    const body = (await response.json()) as { error: { code: string; location: { field?: string } } };
    expect(body.error).toMatchObject({ code: 'TOO_LARGE', location: { field: 'memories[0].assets' } });
    // Not one upload was written (saving the first would have made the user's folder).
    expect(existsSync(join(ctx.mediaDir, 'alice'))).toBe(false);
    expect(await ctx.graphmemix.getMemory('alice', 'many')).toBeUndefined();
  });

  it('imports an uploaded file into the user context only', async () => {
    const form = new FormData();
    form.set('user_id', 'carol');
    form.set('format', 'unified');
    const lines = [
      { id: 'c1', text: 'Carol plants tomatoes' },
      { id: 'c2', text: 'Carol waters tomatoes' },
    ];
    form.set('file', new File([lines.map((l) => JSON.stringify(l)).join('\n')], 'archive.jsonl'));
    const response = await ctx.app.request('/v1/memories/import', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: form,
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { imported: number }).imported).toBe(2);
    expect(ctx.graphmemix.count('carol')).toBe(2);
    expect(ctx.graphmemix.count('alice')).toBe(3);
    const badFormat = new FormData();
    badFormat.set('user_id', 'carol');
    badFormat.set('format', 'docx');
    badFormat.set('file', new File(['x'], 'a.docx'));
    const rejected = await ctx.app.request('/v1/memories/import', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: badFormat,
    });
    expect(rejected.status).toBe(400);
  });

  it('publishes an OpenAPI document generated from the route schemas', async () => {
    const doc = (await (await ctx.app.request('/openapi.json')).json()) as {
      openapi: string;
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: { required?: string[] } }> } }>
      >;
    };
    expect(doc.openapi).toBe('3.1.0');
    for (const path of [
      '/v1/memories',
      '/v1/memories/import',
      '/v1/memories/{id}',
      '/v1/users/{user_id}',
      '/v1/search',
      '/v1/retrieve',
      '/v1/answer',
      '/v1/health',
      '/view',
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(
      doc.paths['/v1/retrieve']?.post?.requestBody?.content['application/json']?.schema.required,
    ).toEqual(['user_id', 'question']);
  });

  it('requires keys unless open, and open mode refuses a non-loopback host', async () => {
    const graphmemix = createFakeGraphmemix();
    expect(() => createServer({ graphmemix })).toThrow(expect.objectContaining({ code: 'CONFIG' }));
    const open = createServer({ graphmemix, open: true });
    expect(
      (
        await open.request('/v1/search', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ user_id: 'a', query: 'x' }),
        })
      ).status,
    ).toBe(200);
    await expect(startServer({ graphmemix, open: true, host: '0.0.0.0', port: 0 })).rejects.toMatchObject({
      code: 'CONFIG',
    });
    const running = await startServer({ graphmemix, open: true, port: 0 });
    try {
      const health = await fetch(`${running.url}/v1/health`);
      expect(((await health.json()) as { status: string }).status).toBe('ok');
    } finally {
      await running.close();
    }
  });
});
