import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { createMcpHttpApp } from '../../src/mcp/serve-mcp.ts';
import { startServer } from '../../src/server/start-server.ts';
import { checkListenKeys, MIN_NETWORK_KEY_CHARS, parseApiKeys } from '../../src/shell-kit/api-keys.ts';
import { userScope } from '../../src/shell-kit/user-scope.ts';
import {
  connectMcp,
  jsonRequest,
  SecurityTally,
  type SecurityWorld,
  startSecurityWorld,
  toolError,
} from './security-harness.ts';

// Issue #12 item 2: a key touches only its users; any other user's data answers 404 (as if it did not
// exist) on every route and MCP tool, and nothing is read, written or deleted.
const tally = new SecurityTally();
let world: SecurityWorld;

type RouteCall = (key: string, user: string) => Response | Promise<Response>;

function form(fields: Record<string, string | File>): FormData {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) data.set(name, value);
  return data;
}

const ROUTES: Record<string, RouteCall> = {
  'POST /v1/memories (new)': (key, user) =>
    world.app.request(
      '/v1/memories',
      jsonRequest('POST', key, { user_id: user, memories: [{ id: 'planted', text: 'x' }] }),
    ),
  'POST /v1/memories (overwrite)': (key, user) =>
    world.app.request(
      '/v1/memories',
      jsonRequest('POST', key, { user_id: user, memories: [{ id: `${user[0]}1`, text: 'overwritten' }] }),
    ),
  'POST /v1/memories (multipart)': (key, user) =>
    world.app.request('/v1/memories', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form({
        user_id: user,
        memories: JSON.stringify([{ id: 'up' }]),
        'asset:up': new File([Buffer.from('bytes')], 'a.png'),
      }),
    }),
  'POST /v1/memories/import': (key, user) =>
    world.app.request('/v1/memories/import', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form({
        user_id: user,
        format: 'unified',
        file: new File([JSON.stringify({ id: 'imported', text: 'x' })], 'm.jsonl'),
      }),
    }),
  'GET /v1/memories/:id': (key, user) =>
    world.app.request(`/v1/memories/${user[0]}1?user_id=${user}`, jsonRequest('GET', key)),
  'DELETE /v1/memories/:id': (key, user) =>
    world.app.request(`/v1/memories/${user[0]}1?user_id=${user}`, jsonRequest('DELETE', key)),
  'POST /v1/search': (key, user) =>
    world.app.request('/v1/search', jsonRequest('POST', key, { user_id: user, query: 'secret plan' })),
  'POST /v1/retrieve': (key, user) =>
    world.app.request('/v1/retrieve', jsonRequest('POST', key, { user_id: user, question: 'secret plan?' })),
  'POST /v1/answer': (key, user) =>
    world.app.request(
      '/v1/answer',
      jsonRequest('POST', key, { user_id: user, question: 'secret plan?', verifiers: 'offline' }),
    ),
  'GET /view': (key, user) =>
    world.app.request(`/view?user_id=${user}&q=secret%20plan`, jsonRequest('GET', key)),
  'DELETE /v1/users/:id': (key, user) => world.app.request(`/v1/users/${user}`, jsonRequest('DELETE', key)),
  'POST /v1/memories (messages)': (key, user) =>
    world.app.request(
      '/v1/memories',
      jsonRequest('POST', key, { user_id: user, messages: [{ role: 'user', content: 'planted' }] }),
    ),
  'GET /v1/memories (list)': (key, user) =>
    world.app.request(`/v1/memories?user_id=${user}&agent_id=x`, jsonRequest('GET', key)),
  'PATCH /v1/memories/:id': (key, user) =>
    world.app.request(
      `/v1/memories/${user[0]}1`,
      jsonRequest('PATCH', key, { user_id: user, text: 'overwritten' }),
    ),
  'GET /v1/memories/:id/history': (key, user) =>
    world.app.request(`/v1/memories/${user[0]}1/history?user_id=${user}`, jsonRequest('GET', key)),
  'GET /v1/users/:id': (key, user) => world.app.request(`/v1/users/${user}`, jsonRequest('GET', key)),
  'GET /v1/users/:id/memories': (key, user) =>
    world.app.request(`/v1/users/${user}/memories`, jsonRequest('GET', key)),
};

/** [key, a user it must not touch] */
const CROSS: [string, string][] = [
  ['ka', 'bob'],
  ['ka', 'carol'],
  ['kb', 'alice'],
];

async function snapshot(): Promise<string> {
  const rows = [];
  for (const [user, id] of [
    ['alice', 'a1'],
    ['bob', 'b1'],
    ['carol', 'c1'],
  ] as const) {
    rows.push(JSON.stringify(await world.graphmemix.getMemory(user, id)));
    for (const planted of ['planted', 'up', 'imported']) {
      rows.push(String((await world.graphmemix.getMemory(user, planted)) !== undefined));
    }
    const dir = join(world.mediaDir, user);
    rows.push(existsSync(dir) ? readdirSync(dir).join(',') : '-');
  }
  return rows.join('\n');
}

beforeAll(async () => {
  world = await startSecurityWorld();
  for (const user of ['alice', 'bob', 'carol']) {
    await world.graphmemix.addMemories(user, [
      { id: `${user[0]}1`, text: `${user} secret plan: the vault code` },
    ]);
  }
});
afterAll(async () => {
  await world.close();
  tally.print('keys bound to users');
});

describe('HTTP: every route refuses other users with an existence-hiding 404', () => {
  for (const [route, call] of Object.entries(ROUTES)) {
    it(route, async () => {
      for (const [key, user] of CROSS) {
        const handled = tally.tried(`HTTP cross-user: ${route}`);
        const before = await snapshot();
        world.fake.reset();
        const response = await call(key, user);
        expect(response.status, `${key} -> ${user}`).toBe(404);
        const body = (await response.json()) as { error: { code: string; message: string } };
        expect(body.error.code).toBe('NOT_FOUND');
        expect(JSON.stringify(body)).not.toContain('vault code');
        expect(await snapshot()).toBe(before);
        expect(world.fake.requests).toEqual([]);
        // The same answer as for a user that does not exist at all.
        const ghost = await call(key, 'ghost-user');
        expect(ghost.status).toBe(404);
        const ghostBody = JSON.stringify(await ghost.json())
          .replaceAll('ghost-user', user)
          .replaceAll('g1', `${user[0]}1`);
        expect(ghostBody).toBe(JSON.stringify(body));
        handled();
      }
    });
  }

  it('GET /v1/users lists only the users of the key', async () => {
    const handled = tally.tried('HTTP cross-user: GET /v1/users');
    const mine = await world.app.request('/v1/users', jsonRequest('GET', 'ka'));
    expect(mine.status).toBe(200);
    const users = ((await mine.json()) as { users: { user_id: string }[] }).users.map((u) => u.user_id);
    expect(users).toEqual(['alice']);
    handled();
  });

  it('a user id in the path is decoded once: a lone % or an encoded % is a 404, never a 500 or another id', async () => {
    const handled = tally.tried('HTTP cross-user: encoded path ids');
    for (const path of ['/v1/users/%', '/v1/users/%25', '/v1/users/%2561lice', '/v1/users/%E0%A4%A']) {
      const response = await world.app.request(path, jsonRequest('GET', 'ka'));
      expect(response.status, path).toBe(404);
    }
    expect((await world.app.request('/v1/users/alice', jsonRequest('GET', 'ka'))).status).toBe(200);
    handled();
  });

  it('controls: own users, * keys and bare keys are served', async () => {
    const allowed: [string, string][] = [
      ['ka', 'alice'],
      ['kb', 'bob'],
      ['kb', 'carol'],
      ['kroot', 'bob'],
      ['kold', 'carol'],
    ];
    for (const [key, user] of allowed) {
      const handled = tally.tried('controls: allowed key/user');
      const response = await ROUTES['GET /v1/memories/:id']?.(key, user);
      expect(response?.status, `${key} -> ${user}`).toBe(200);
      handled();
    }
    const handled = tally.tried('controls: wrong key');
    expect((await ROUTES['POST /v1/search']?.('nope', 'alice'))?.status).toBe(401);
    handled();
  });
});

const TOOL_CALLS: Record<string, (user: string) => Record<string, unknown>> = {
  add_memory: (user) => ({ user_id: user, memories: [{ id: `${user[0]}1`, text: 'overwritten' }] }),
  search_memories: (user) => ({ user_id: user, query: 'secret plan' }),
  retrieve_evidence: (user) => ({ user_id: user, question: 'secret plan?' }),
  answer_question: (user) => ({ user_id: user, question: 'secret plan?', verifiers: 'offline' }),
  delete_memory: (user) => ({ user_id: user, memory_id: `${user[0]}1` }),
  list_memories: (user) => ({ user_id: user }),
  get_memory: (user) => ({ user_id: user, memory_id: `${user[0]}1` }),
  update_memory: (user) => ({ user_id: user, memory_id: `${user[0]}1`, text: 'overwritten' }),
  memory_history: (user) => ({ user_id: user, memory_id: `${user[0]}1` }),
  user_stats: (user) => ({ user_id: user }),
  delete_user: (user) => ({ user_id: user }),
  forget_user: (user) => ({ user_id: user }),
};

async function expectToolsRefuse(client: Client, surface: string, users: string[]): Promise<void> {
  for (const [tool, args] of Object.entries(TOOL_CALLS)) {
    for (const user of users) {
      const handled = tally.tried(`${surface}: ${tool}`);
      const before = await snapshot();
      const result = await client.callTool({ name: tool, arguments: args(user) });
      expect(toolError(result)?.code, `${tool} -> ${user}`).toBe('NOT_FOUND');
      expect(JSON.stringify(result)).not.toContain('vault code');
      expect(await snapshot()).toBe(before);
      handled();
    }
  }
}

describe('MCP: every tool refuses users outside its scope', () => {
  it('in process / stdio with --users alice', async () => {
    const client = await connectMcp(world.graphmemix, {
      scope: userScope(['alice']),
      mediaDir: world.mediaDir,
    });
    await expectToolsRefuse(client, 'MCP (--users alice)', ['bob', 'carol']);
    const handled = tally.tried('controls: allowed key/user');
    const ok = await client.callTool({
      name: 'search_memories',
      arguments: TOOL_CALLS.search_memories?.('alice'),
    });
    expect(ok.isError).toBeFalsy();
    handled();
    await client.close();
  });

  it('streamable HTTP with key ka=alice', async () => {
    const app = createMcpHttpApp({ graphmemix: world.graphmemix, apiKeys: ['ka=alice', 'kroot=*'] });
    const client = new Client({ name: 'sec', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('http://local/mcp'), {
        fetch: (input, init) =>
          Promise.resolve(app.request(input instanceof Request ? input : String(input), init)),
        requestInit: { headers: { authorization: 'Bearer ka' } },
      }),
    );
    await expectToolsRefuse(client, 'MCP HTTP (ka=alice)', ['bob', 'carol']);
    await client.close();
  });
});

describe('key entries', () => {
  it('parse key=users, key=*, bare keys (counted for the warning) and base64 keys ending in =', () => {
    const handled = tally.tried('key parsing');
    const { grants, bareKeys } = parseApiKeys([
      'ka=alice',
      'kb=bob|carol',
      'kroot=*',
      'kold',
      'c2VjcmV0==alice',
      'eA==',
    ]);
    expect(grants).toEqual([
      { key: 'ka', users: ['alice'] },
      { key: 'kb', users: ['bob', 'carol'] },
      { key: 'kroot', users: '*' },
      { key: 'kold', users: '*' },
      { key: 'c2VjcmV0=', users: ['alice'] },
      { key: 'eA==', users: '*' },
    ]);
    expect(bareKeys).toBe(2);
    expect(() => parseApiKeys(['k=../etc'])).toThrow(expect.objectContaining({ code: 'CONFIG' }));
    handled();
  });

  it('short keys: refused on a host other machines reach, a warning on loopback; no keys, no start', async () => {
    const handled = tally.tried('short keys on a network interface');
    const long = 'k'.repeat(MIN_NETWORK_KEY_CHARS);
    const short = 'k'.repeat(MIN_NETWORK_KEY_CHARS - 1);
    expect(checkListenKeys([`${long}=alice`], { host: '0.0.0.0', open: false })).toEqual([]);
    const refused = (() => {
      try {
        checkListenKeys([`${long}=alice`, `${short}=bob`], { host: '0.0.0.0', open: false });
      } catch (error) {
        return error as { code: string; message: string };
      }
      return undefined;
    })();
    expect(refused?.code).toBe('CONFIG');
    expect(refused?.message).toContain('1 API key(s) shorter than 16 characters: refused on 0.0.0.0');
    // A key never appears in a message.
    expect(refused?.message).not.toContain(short);
    expect(checkListenKeys([`${short}=bob`], { host: '127.0.0.1', open: false })).toEqual([
      'warning: 1 API key(s) shorter than 16 characters; fine on loopback, refused on any other interface',
    ]);
    expect(checkListenKeys([], { host: '127.0.0.1', open: true })).toEqual([]);
    expect(() => checkListenKeys([], { host: '127.0.0.1', open: false })).toThrow(/API keys are required/);
    // The library's listener applies the same rule.
    const gm = await openGraphmemix({ db: 'memory:' });
    try {
      await expect(
        startServer({ graphmemix: gm, apiKeys: [`${short}=bob`], host: '0.0.0.0', port: 0 }),
      ).rejects.toMatchObject({
        code: 'CONFIG',
      });
      const server = await startServer({
        graphmemix: gm,
        apiKeys: [`${long}=bob`],
        host: '0.0.0.0',
        port: 0,
      });
      const health = await fetch(`http://127.0.0.1:${server.port}/v1/health`);
      expect(health.status).toBe(200);
      await server.close();
    } finally {
      await gm.close();
    }
    handled();
  });
});
