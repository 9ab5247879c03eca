import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createMcpServer } from '../../src/mcp/create-mcp-server.ts';
import { createServer } from '../../src/server/create-server.ts';
import { userScope } from '../../src/shell-kit/user-scope.ts';

const USERS = ['u3', 'u1', 'u5', 'u2', 'u4'];
let gm: Graphmemix;
let app: ReturnType<typeof createServer>;

beforeAll(async () => {
  gm = await openGraphmemix({ db: 'memory:' });
  for (const [index, user] of USERS.entries()) {
    await gm.addMemories(
      user,
      Array.from({ length: index + 1 }, (_, i) => ({ id: `m${i}`, text: `note ${i}` })),
    );
  }
  app = createServer({ graphmemix: gm, apiKeys: ['all=*', 'some=u5|u2|ghost|u4'] });
});
afterAll(async () => {
  await gm.close();
});

const get = async (key: string, path: string) => {
  const response = await app.request(path, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

async function walk(page: (cursor?: string) => Promise<{ users: unknown[]; next_cursor: unknown }>) {
  const seen: unknown[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const body = await page(cursor);
    seen.push(...body.users);
    cursor = (body.next_cursor as string | null) ?? undefined;
    pages++;
  } while (cursor && pages < 10);
  return { seen, pages };
}

describe('paging of users (library, HTTP, MCP)', () => {
  it('library: keyset pages by id with an opaque cursor, one store page read per call', async () => {
    const spy = vi.spyOn(gm.store, 'listContexts');
    const first = await gm.listUsers({ limit: 2 });
    expect(first.users).toEqual([
      { userId: 'u1', memories: 2 },
      { userId: 'u2', memories: 4 },
    ]);
    expect(spy).toHaveBeenLastCalledWith({ limit: 3 });
    const second = await gm.listUsers({ limit: 2, cursor: first.nextCursor! });
    expect(second.users.map((u) => u.userId)).toEqual(['u3', 'u4']);
    expect(spy).toHaveBeenLastCalledWith({ limit: 3, afterId: 'u2' });
    const last = await gm.listUsers({ limit: 2, cursor: second.nextCursor! });
    expect(last).toEqual({ users: [{ userId: 'u5', memories: 3 }] });
    expect((await gm.listUsers()).users).toHaveLength(5);
    spy.mockRestore();
    await expect(gm.listUsers({ limit: 0 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(gm.listUsers({ cursor: 'not a cursor!' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    // A memory cursor is not a user cursor.
    const memoryCursor = (await gm.listMemories('u5', { limit: 1 })).nextCursor!;
    await expect(gm.listUsers({ cursor: memoryCursor })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('HTTP: every user for a * key, only its own users for a bound key; bad paging input is a 400', async () => {
    const all = await walk(async (cursor) => {
      const response = await get('all', `/v1/users?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      return response.body as { users: unknown[]; next_cursor: unknown };
    });
    expect(all.pages).toBe(3);
    expect(all.seen).toEqual(
      ['u1', 'u2', 'u3', 'u4', 'u5'].map((id, i) => ({ user_id: id, memories: [2, 4, 1, 5, 3][i] })),
    );
    const some = await walk(async (cursor) => {
      const response = await get('some', `/v1/users?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      return response.body as { users: unknown[]; next_cursor: unknown };
    });
    // "ghost" has no archive: never listed; u1 and u3 belong to other keys.
    expect(some.seen).toEqual([
      { user_id: 'u2', memories: 4 },
      { user_id: 'u4', memories: 5 },
      { user_id: 'u5', memories: 3 },
    ]);
    expect(some.pages).toBe(2);
    for (const query of ['limit=0', 'limit=201', 'limit=x', 'cursor=%2F%2F', 'user_id=u1']) {
      const bad = await get('all', `/v1/users?${query}`);
      expect(bad.status, query).toBe(400);
    }
  });

  it('MCP list_users: the same pages, within the server scope', async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = createMcpServer(gm, { scope: userScope(['u4', 'u1']) });
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    const page = (await client.callTool({ name: 'list_users', arguments: { limit: 1 } })) as CallToolResult;
    expect(page.structuredContent).toMatchObject({ users: [{ user_id: 'u1', memories: 2 }] });
    const next = (await client.callTool({
      name: 'list_users',
      arguments: { limit: 1, cursor: (page.structuredContent as { next_cursor: string }).next_cursor },
    })) as CallToolResult;
    expect(next.structuredContent).toEqual({ users: [{ user_id: 'u4', memories: 5 }], next_cursor: null });
    await client.close();
    await server.close();
  });
});
