import { afterEach, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createMcpHttpApp } from '../../src/mcp/serve-mcp.ts';
import { createServer } from '../../src/server/create-server.ts';
import { expectOneLanePerKey, laneRecorder } from '../support/lane-recorder.ts';
import { postToolCall } from '../support/mcp-tool-call.ts';

/** Where each write method takes its options (WriteOptions): the argument after its payload. */
const OPTIONS_AT = { addMemories: 2, addMessages: 3, updateMemory: 3, deleteMemory: 2 } as const;

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
  it('REST passes the calling key as the lane of every write route', async () => {
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
    }
    expect(written.map((w) => w.method)).toEqual([
      ...['addMemories', 'addMessages', 'updateMemory', 'deleteMemory'],
      ...['addMemories', 'addMessages', 'updateMemory', 'deleteMemory'],
    ]);
    expectOneLanePerKey(written, 4, 'key-of-');
  });

  it('MCP over HTTP passes the key as the lane of its write tools', async () => {
    const { gm, calls: written } = laneRecorder(await archive(), OPTIONS_AT);
    const app = createMcpHttpApp({ graphmemix: gm, apiKeys: ['key-of-ann-0001=ann'] });
    const call = (name: string, args: Record<string, unknown>) =>
      postToolCall(app, 'key-of-ann-0001', name, args);
    await call('add_memory', { user_id: 'ann', memories: [{ id: 'm1', text: 'the party is on Sunday' }] });
    await call('add_memory', { user_id: 'ann', messages: [{ role: 'user', content: 'I moved to Lisbon' }] });
    await call('update_memory', { user_id: 'ann', memory_id: 'm1', text: 'the party is on Saturday' });
    await call('delete_memory', { user_id: 'ann', memory_id: 'm1' });
    expect(written.map((w) => w.method)).toEqual([
      'addMemories',
      'addMessages',
      'updateMemory',
      'deleteMemory',
    ]);
    expect(new Set(written.map((w) => w.lane)).size).toBe(1);
    expect(written[0]!.lane).toMatch(/^[0-9a-f]{16,}$/);
  });
});
