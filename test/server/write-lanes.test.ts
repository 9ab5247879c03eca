import { afterEach, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createMcpHttpApp } from '../../src/mcp/serve-mcp.ts';
import { createServer } from '../../src/server/create-server.ts';
import { expectOneLanePerKey, laneRecorder } from '../support/lane-recorder.ts';
import { postToolCall } from '../support/mcp-tool-call.ts';

/** Where each write method takes its options (WriteOptions): the argument after its payload. */
const OPTIONS_AT = {
  addMemories: 2,
  addMessages: 3,
  updateMemory: 3,
  deleteMemory: 2,
  ingest: 1,
  deleteUser: 1,
} as const;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function archive(): Promise<Graphmemix> {
  const gm = await openGraphmemix({ db: 'memory:' });
  cleanups.push(() => gm.close());
  return gm;
}

describe('write lanes: each key waits for the writer in its own lane', () => {
  it('REST passes the calling key as the lane of every write route (adds, update, delete, import, forget)', async () => {
    const { gm, calls: written } = laneRecorder(await archive(), OPTIONS_AT);
    const app = createServer({ graphmemix: gm, apiKeys: ['key-of-ann-0001=ann', 'key-of-bob-0001=bob'] });
    const send = (key: string, method: string, path: string, body: object) =>
      app.request(path, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    for (const [key, user] of [
      ['key-of-ann-0001', 'ann'],
      ['key-of-bob-0001', 'bob'],
    ] as const) {
      const add = { user_id: user, memories: [{ id: 'm1', text: 'the garden party is on Sunday' }] };
      expect((await send(key, 'POST', '/v1/memories', add)).status).toBe(200);
      const chat = { user_id: user, messages: [{ role: 'user', content: 'I moved to Lisbon' }] };
      expect((await send(key, 'POST', '/v1/memories', chat)).status).toBe(200);
      const patch = { user_id: user, text: 'the garden party is on Saturday' };
      expect((await send(key, 'PATCH', '/v1/memories/m1', patch)).status).toBe(200);
      const gone = await app.request(`/v1/memories/m1?user_id=${user}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${key}` },
      });
      expect(gone.status).toBe(200);
      const form = new FormData();
      form.set('user_id', user);
      form.set('format', 'unified');
      form.set('file', new File([JSON.stringify({ id: 'f1', text: 'imported from a file' })], 'a.jsonl'));
      const imported = await app.request('/v1/memories/import', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        body: form,
      });
      expect(imported.status).toBe(200);
      const forgotten = await app.request(`/v1/users/${user}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${key}` },
      });
      expect(forgotten.status).toBe(200);
    }
    const perKey = ['addMemories', 'addMessages', 'updateMemory', 'deleteMemory', 'ingest', 'deleteUser'];
    expect(written.map((w) => w.method)).toEqual([...perKey, ...perKey]);
    expectOneLanePerKey(written, perKey.length, 'key-of-');
  });

  it('MCP over HTTP passes the key as the lane of its write tools (adds, update, delete, forget)', async () => {
    const { gm, calls: written } = laneRecorder(await archive(), OPTIONS_AT);
    const app = createMcpHttpApp({ graphmemix: gm, apiKeys: ['key-of-ann-0001=ann'] });
    const call = (name: string, args: Record<string, unknown>) =>
      postToolCall(app, 'key-of-ann-0001', name, args);
    await call('add_memory', { user_id: 'ann', memories: [{ id: 'm1', text: 'the party is on Sunday' }] });
    await call('add_memory', { user_id: 'ann', messages: [{ role: 'user', content: 'I moved to Lisbon' }] });
    await call('update_memory', { user_id: 'ann', memory_id: 'm1', text: 'the party is on Saturday' });
    await call('delete_memory', { user_id: 'ann', memory_id: 'm1' });
    await call('delete_user', { user_id: 'ann' });
    expect(written.map((w) => w.method)).toEqual([
      'addMemories',
      'addMessages',
      'updateMemory',
      'deleteMemory',
      'deleteUser',
    ]);
    expect(new Set(written.map((w) => w.lane)).size).toBe(1);
    expect(written[0]!.lane).toMatch(/^[0-9a-f]{16,}$/);
  });
});
