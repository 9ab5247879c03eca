import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDrainFailure } from '../../src/digest/incremental/drain-failure-mark.ts';
import { appendBacklog } from '../../src/digest/incremental/semantic-compaction-mark.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createMcpServer } from '../../src/mcp/create-mcp-server.ts';
import { createServer } from '../../src/server/create-server.ts';

// biome-ignore lint/suspicious/noExplicitAny: test bodies are read loosely, field by field
type Json = Record<string, any>;
let gm: Graphmemix;
let app: ReturnType<typeof createServer>;
const headers = { authorization: 'Bearer k', 'content-type': 'application/json' };
const call = async (method: string, path: string, body?: unknown) => {
  const response = await app.request(path, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Json };
};

beforeAll(async () => {
  gm = await openGraphmemix({ db: 'memory:' });
  app = createServer({ graphmemix: gm, apiKeys: ['k=*'] });
});
afterAll(async () => {
  await gm.close();
});

describe('HTTP memory verbs over a real archive', () => {
  it('add (records with top-level scopes, and messages), list, get, update, history, stats, forget', async () => {
    const added = await call('POST', '/v1/memories', {
      user_id: 'zoe',
      agent_id: 'coach',
      metadata: { source: 'import' },
      memories: [
        { id: 'm1', text: 'Run 5k on Saturday', timestamp: '2024-02-03', metadata: { kind: 'plan' } },
        { id: 'm2', text: 'Knee felt sore after the run', timestamp: '2024-02-04', agentId: 'doctor' },
      ],
    });
    expect(added.status).toBe(200);
    expect(added.body.imported).toBe(2);
    const chat = await call('POST', '/v1/memories', {
      user_id: 'zoe',
      run_id: 'session-9',
      messages: [
        { role: 'user', content: 'Remind me to stretch', timestamp: '2024-02-05T08:00:00Z' },
        { role: 'assistant', content: 'Will do.' },
      ],
    });
    expect(chat.status).toBe(200);
    expect(chat.body.memory_ids).toHaveLength(2);

    const page1 = await call('GET', '/v1/memories?user_id=zoe&limit=3');
    expect(page1.body.memories.map((m: { id: string }) => m.id)).toEqual([
      'm1',
      'm2',
      chat.body.memory_ids[0],
    ]);
    const page2 = await call('GET', `/v1/memories?user_id=zoe&limit=3&cursor=${page1.body.next_cursor}`);
    expect(page2.body.memories).toHaveLength(1);
    expect(page2.body.next_cursor).toBeNull();
    const coach = await call('GET', '/v1/memories?user_id=zoe&agent_id=coach');
    expect(coach.body.memories.map((m: { id: string }) => m.id)).toEqual(['m1']);
    expect(coach.body.memories[0].metadata).toEqual({ source: 'import', kind: 'plan' });
    const meta = await call(
      'GET',
      `/v1/memories?user_id=zoe&metadata=${encodeURIComponent(JSON.stringify({ source: 'import' }))}&from=2024-02-04`,
    );
    expect(meta.body.memories.map((m: { id: string }) => m.id)).toEqual(['m2']);
    const session = await call('GET', '/v1/memories?user_id=zoe&run_id=session-9');
    expect(session.body.memories).toHaveLength(2);

    const updated = await call('PATCH', '/v1/memories/m1', { user_id: 'zoe', text: 'Run 10k on Sunday' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ version: 2, changed: true, memory: { text: 'Run 10k on Sunday' } });
    const history = await call('GET', '/v1/memories/m1/history?user_id=zoe');
    expect(
      history.body.versions.map((v: { version: number; memory: { text: string } }) => [
        v.version,
        v.memory.text,
      ]),
    ).toEqual([
      [1, 'Run 5k on Saturday'],
      [2, 'Run 10k on Sunday'],
    ]);
    expect(
      history.body.versions.every((v: { recorded_at: unknown }) => typeof v.recorded_at === 'string'),
    ).toBe(true);
    expect(history.body.next_cursor).toBeNull();
    // Pages of one version: the first gives a cursor, the second (the current version) ends the history.
    const first = await call('GET', '/v1/memories/m1/history?user_id=zoe&limit=1');
    expect(first.body.versions.map((v: { version: number }) => v.version)).toEqual([1]);
    const second = await call(
      'GET',
      `/v1/memories/m1/history?user_id=zoe&limit=1&cursor=${first.body.next_cursor}`,
    );
    expect(second.body).toMatchObject({ versions: [{ version: 2 }], next_cursor: null });
    expect((await call('GET', '/v1/memories/m1/history?user_id=zoe&limit=500')).status).toBe(400);
    expect((await call('GET', '/v1/memories/m1/history?user_id=zoe&cursor=W10')).status).toBe(400);
    expect((await call('GET', '/v1/memories/m1?user_id=zoe')).body.memory.text).toBe('Run 10k on Sunday');

    const filtered = await call('POST', '/v1/search', {
      user_id: 'zoe',
      query: 'run',
      filters: { agent_id: 'doctor' },
    });
    expect(filtered.body.results.map((r: { memory_id: string }) => r.memory_id)).toEqual(['m2']);
    const retrieved = await call('POST', '/v1/retrieve', {
      user_id: 'zoe',
      question: 'What run is planned?',
      verifiers: 'offline',
      filters: { agent_id: 'coach' },
    });
    expect(retrieved.body.evidence.map((e: { memory_id: string }) => e.memory_id)).toEqual(['m1']);

    const users = await call('GET', '/v1/users');
    expect(users.body).toEqual({ users: [{ user_id: 'zoe', memories: 4 }], next_cursor: null });
    const stats = await call('GET', '/v1/users/zoe');
    expect(stats.body).toMatchObject({ user_id: 'zoe', memories: 4, by_kind: { note: 2, message: 2 } });
    expect(typeof stats.body.last_write).toBe('string');
    await gm.waitForCompactions();
    expect((await call('GET', '/v1/users/zoe')).body).toMatchObject({
      knn_approximate: null,
      semantic_pending: null,
    });
    // A failed after-write drain (the mark SemanticDrains writes) is shown while the user's rows wait.
    await appendBacklog(gm.store, 'zoe', ['m1']);
    const at = '2026-01-01T00:00:00.000Z';
    // Its error is a store's or an endpoint's message: redacted like every error that leaves.
    const error = 'connect to postgres://app:hunter22@db.internal/gm failed: disk gone';
    await writeDrainFailure(gm.store, 'zoe', { error, since: at, at, attempts: 2, nextRetryAt: at });
    expect((await call('GET', '/v1/users/zoe')).body.semantic_pending).toEqual({
      drain_failure: {
        error: 'connect to postgres://[redacted]@db.internal/gm failed: disk gone',
        since: at,
        at,
        attempts: 2,
        next_retry_at: at,
      },
    });

    const forgotten = await call('DELETE', '/v1/users/zoe');
    expect(forgotten.body).toMatchObject({ deleted: true, memories: 4 });
    expect((await call('GET', '/v1/users/zoe')).status).toBe(404);
    expect((await call('GET', '/v1/memories/m1/history?user_id=zoe')).status).toBe(404);
    expect(await gm.store.memoryVersions('zoe', 'm1')).toEqual([]);
  });

  it('the OpenAPI document lists every route', async () => {
    const doc = (await (await app.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    for (const [path, method] of [
      ['/v1/memories', 'get'],
      ['/v1/memories', 'post'],
      ['/v1/memories/{id}', 'patch'],
      ['/v1/memories/{id}/history', 'get'],
      ['/v1/users', 'get'],
      ['/v1/users/{user_id}', 'get'],
      ['/v1/users/{user_id}', 'delete'],
    ] as const) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
  });
});

describe('MCP memory verbs over a real archive', () => {
  it('list_memories, get_memory, update_memory, memory_history, user_stats, forget_user', async () => {
    const archive = await openGraphmemix({ db: 'memory:' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = createMcpServer(archive);
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    const tool = async (name: string, args: Record<string, unknown>) => {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      return { error: result.isError === true, value: result.structuredContent as Json };
    };
    await tool('add_memory', {
      user_id: 'ivy',
      messages: [
        { role: 'Ivy', content: 'The book club meets on Tuesday' },
        { role: 'Max', content: 'Noted' },
      ],
    });
    const listed = await tool('list_memories', { user_id: 'ivy', limit: 1 });
    expect(listed.value.memories).toHaveLength(1);
    expect(typeof listed.value.next_cursor).toBe('string');
    const id = listed.value.memories[0].id as string;
    expect((await tool('get_memory', { user_id: 'ivy', memory_id: id })).value.memory.text).toContain(
      'Tuesday',
    );
    const updated = await tool('update_memory', {
      user_id: 'ivy',
      memory_id: id,
      text: 'The book club meets on Wednesday',
    });
    expect(updated.value).toMatchObject({ version: 2, changed: true });
    const history = await tool('memory_history', { user_id: 'ivy', memory_id: id });
    expect(history.value.versions).toHaveLength(2);
    const paged = await tool('memory_history', { user_id: 'ivy', memory_id: id, limit: 1 });
    expect(paged.value.versions).toHaveLength(1);
    const rest = await tool('memory_history', {
      user_id: 'ivy',
      memory_id: id,
      cursor: paged.value.next_cursor,
    });
    expect(rest.value).toMatchObject({ versions: [{ version: 2 }], next_cursor: null });
    expect((await tool('user_stats', { user_id: 'ivy' })).value).toMatchObject({ memories: 2 });
    const unknown = await tool('update_memory', { user_id: 'ivy', memory_id: id, txt: 'x' });
    expect(unknown.error).toBe(true);
    expect((await tool('forget_user', { user_id: 'ivy' })).value).toMatchObject({
      deleted: true,
      memories: 2,
    });
    await client.close();
    await server.close();
    await archive.close();
  });
});
