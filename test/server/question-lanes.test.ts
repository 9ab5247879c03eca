import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createMcpHttpApp } from '../../src/mcp/serve-mcp.ts';
import { readPoolOf } from '../../src/read-workers/with-read-workers.ts';
import { createServer } from '../../src/server/create-server.ts';
import { expectOneLanePerKey, laneRecorder } from '../support/lane-recorder.ts';
import { postToolCall } from '../support/mcp-tool-call.ts';

/** Where each question method takes its options (RetrieveOptions and the like). */
const OPTIONS_AT = { retrieve: 2, answer: 2, searchMemories: 2, listMemories: 1 } as const;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function twoUsers(): Promise<Graphmemix> {
  const gm = await openGraphmemix({ db: 'memory:' });
  cleanups.push(() => gm.close());
  await gm.addMemories('ann', [{ id: 'a', text: 'the garden party is on Sunday' }]);
  await gm.addMemories('bob', [{ id: 'b', text: 'the budget review is on Monday' }]);
  return gm;
}

describe('question lanes: each key waits for the read workers in its own lane', () => {
  it('REST passes the calling key as the lane of every question route and listing page', async () => {
    const { gm, calls: asked } = laneRecorder(await twoUsers(), OPTIONS_AT);
    const app = createServer({ graphmemix: gm, apiKeys: ['key-of-ann-0001=ann', 'key-of-bob-0001=bob'] });
    const ask = (key: string, path: string, body?: object) =>
      app.request(path, {
        method: body ? 'POST' : 'GET',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    for (const [key, user] of [
      ['key-of-ann-0001', 'ann'],
      ['key-of-bob-0001', 'bob'],
    ] as const) {
      expect((await ask(key, '/v1/search', { user_id: user, query: 'party' })).status).toBe(200);
      expect((await ask(key, '/v1/retrieve', { user_id: user, question: 'when?' })).status).toBe(200);
      expect((await ask(key, '/v1/answer', { user_id: user, question: 'when?' })).status).toBe(200);
      expect((await ask(key, `/view?user_id=${user}&q=when`)).status).toBe(200);
      expect((await ask(key, `/v1/memories?user_id=${user}`)).status).toBe(200);
    }
    expect(asked.map((a) => a.method)).toEqual([
      ...['searchMemories', 'retrieve', 'answer', 'retrieve', 'listMemories'],
      ...['searchMemories', 'retrieve', 'answer', 'retrieve', 'listMemories'],
    ]);
    expectOneLanePerKey(asked, 5, 'key-of-');
  });

  it('MCP over HTTP passes the key as the lane of its question tools and list_memories', async () => {
    const { gm, calls: asked } = laneRecorder(await twoUsers(), OPTIONS_AT);
    const app = createMcpHttpApp({ graphmemix: gm, apiKeys: ['key-of-ann-0001=ann'] });
    const call = (name: string, args: Record<string, unknown>) =>
      postToolCall(app, 'key-of-ann-0001', name, args);
    await call('search_memories', { user_id: 'ann', query: 'party' });
    await call('retrieve_evidence', { user_id: 'ann', question: 'when?' });
    await call('answer_question', { user_id: 'ann', question: 'when?' });
    await call('list_memories', { user_id: 'ann' });
    expect(asked.map((a) => a.method)).toEqual(['searchMemories', 'retrieve', 'answer', 'listMemories']);
    expect(new Set(asked.map((a) => a.lane)).size).toBe(1);
    expect(asked[0]!.lane).toMatch(/^[0-9a-f]{16,}$/);
  });

  it("with one read worker, another key's question is answered before the flooding key's queue", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gmx-lanes-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const gm = await openGraphmemix({
      db: join(dir, 'a.db'),
      readWorkers: { size: 1, concurrency: 1, maxQueue: 64 },
    });
    cleanups.push(() => gm.close());
    const filler = Array.from({ length: 300 }, (_, i) => ({
      id: `m${i}`,
      text: `note ${i} about the garden party, the budget review and the trip to Lisbon in spring`,
    }));
    await gm.addMemories('ann', filler);
    await gm.addMemories('bob', filler);
    const app = createServer({ graphmemix: gm, apiKeys: ['key-of-ann-0001=ann', 'key-of-bob-0001=bob'] });
    const done: string[] = [];
    const retrieve = async (key: string, user: string, tag: string) => {
      const response = await app.request('/v1/retrieve', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ user_id: user, question: 'when is the garden party and the budget review?' }),
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      done.push(tag);
    };
    const flood = Array.from({ length: 12 }, (_, i) => retrieve('key-of-ann-0001', 'ann', `ann${i}`));
    const pool = readPoolOf(gm)!;
    for (let i = 0; i < 200 && pool.stats().queued < 11; i++) await new Promise((r) => setTimeout(r, 5));
    expect(pool.stats().queued).toBe(11);
    await Promise.all([...flood, retrieve('key-of-bob-0001', 'bob', 'bob')]);
    // First come, first served put bob's question last; in its own lane it waits for one of ann's.
    expect(done.indexOf('bob')).toBeLessThanOrEqual(2);
  });
});
