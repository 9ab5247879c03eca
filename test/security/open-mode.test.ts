import { request as httpRequest } from 'node:http';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createMcpHttpApp } from '../../src/mcp/serve-mcp.ts';
import { createServer } from '../../src/server/create-server.ts';
import { type RunningServer, startServer } from '../../src/server/start-server.ts';
import { SecurityTally } from './security-harness.ts';

// Issue #12 item 6: in --open mode a page on another origin cannot write (text/plain and form posts are
// 415, foreign Origin 403) and DNS rebinding fails (foreign Host 403).
const tally = new SecurityTally();
const PORT = 8787;
let graphmemix: Graphmemix;
let app: Hono;
let mcpApp: Hono;

const write = { user_id: 'alice', memories: [{ id: 'm1', text: 'overwritten by a web page' }] };

interface Case {
  category: string;
  name: string;
  url?: string;
  method?: string;
  path?: string;
  headers: Record<string, string>;
  body?: string | FormData;
  status: number;
}

const local = `http://localhost:${PORT}`;
const CASES: Case[] = [
  // Simple (no-preflight) cross-origin writes a browser page can send.
  {
    category: 'content type',
    name: 'text/plain JSON body',
    headers: { 'content-type': 'text/plain' },
    status: 415,
  },
  {
    category: 'content type',
    name: 'text/plain;charset=utf-8',
    headers: { 'content-type': 'text/plain;charset=UTF-8' },
    status: 415,
  },
  {
    category: 'content type',
    name: 'form-urlencoded',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    status: 415,
  },
  { category: 'content type', name: 'no content-type', headers: {}, status: 415 },
  {
    category: 'content type',
    name: 'multipart to a JSON-only route',
    path: '/v1/search',
    headers: {},
    body: new FormData(),
    status: 415,
  },
  {
    category: 'content type',
    name: 'application/json-seq lookalike',
    headers: { 'content-type': 'application/jsonx' },
    status: 415,
  },
  // Cross-origin requests that carry an Origin.
  { category: 'origin', name: 'foreign origin', headers: { origin: 'https://evil.example' }, status: 403 },
  { category: 'origin', name: 'opaque null origin', headers: { origin: 'null' }, status: 403 },
  { category: 'origin', name: 'other local port', headers: { origin: 'http://localhost:9999' }, status: 403 },
  { category: 'origin', name: 'https scheme', headers: { origin: `https://localhost:${PORT}` }, status: 403 },
  {
    category: 'origin',
    name: 'lookalike host',
    headers: { origin: `http://localhost.evil.example:${PORT}` },
    status: 403,
  },
  {
    category: 'origin',
    name: 'userinfo trick',
    headers: { origin: `http://localhost:${PORT}@evil.example` },
    status: 403,
  },
  {
    category: 'origin',
    name: 'sec-fetch-site cross-site',
    headers: { 'sec-fetch-site': 'cross-site' },
    status: 403,
  },
  // DNS rebinding: the page's own name resolves to 127.0.0.1, so Host carries that name.
  { category: 'host', name: 'rebinding name', url: `http://evil.example:${PORT}`, headers: {}, status: 403 },
  { category: 'host', name: 'nip.io name', url: `http://127.0.0.1.nip.io:${PORT}`, headers: {}, status: 403 },
  { category: 'host', name: 'wrong port', url: 'http://localhost:8788', headers: {}, status: 403 },
  { category: 'host', name: 'no port (80)', url: 'http://localhost', headers: {}, status: 403 },
  { category: 'host', name: 'Host header only', headers: { host: `evil.example:${PORT}` }, status: 403 },
  { category: 'host', name: 'trailing-dot name', url: `http://localhost.:${PORT}`, headers: {}, status: 403 },
  {
    category: 'host',
    name: 'GET /view rebinding',
    method: 'GET',
    url: `http://evil.example:${PORT}`,
    path: '/view?user_id=alice&q=x',
    headers: {},
    status: 403,
  },
  {
    category: 'host',
    name: 'DELETE rebinding',
    method: 'DELETE',
    url: `http://evil.example:${PORT}`,
    path: '/v1/memories/m1?user_id=alice',
    headers: {},
    status: 403,
  },
];

beforeAll(async () => {
  graphmemix = await openGraphmemix({ db: 'memory:' });
  await graphmemix.addMemories('alice', [{ id: 'm1', text: 'the original memory' }]);
  app = createServer({ graphmemix, open: true, port: PORT });
  mcpApp = createMcpHttpApp({ graphmemix, open: true, port: PORT });
});
afterAll(async () => {
  await graphmemix.close();
  tally.print('open mode');
});

async function unchanged(): Promise<boolean> {
  return (await graphmemix.getMemory('alice', 'm1'))?.text === 'the original memory';
}

describe('open mode refuses cross-origin writes and foreign hosts', () => {
  for (const c of CASES) {
    it(`${c.category}: ${c.name}`, async () => {
      const handled = tally.tried(`HTTP API: ${c.category}`);
      const headers = { 'content-type': 'application/json', ...c.headers };
      if (!('content-type' in c.headers) && c.category === 'content type')
        delete (headers as Record<string, string>)['content-type'];
      const response = await app.request(`${c.url ?? local}${c.path ?? '/v1/memories'}`, {
        method: c.method ?? 'POST',
        headers,
        ...(c.method === 'GET' || c.method === 'DELETE' ? {} : { body: c.body ?? JSON.stringify(write) }),
      });
      expect(response.status).toBe(c.status);
      expect(await unchanged()).toBe(true);
      handled();
    });
  }

  it('MCP over HTTP in open mode: the same guard', async () => {
    for (const c of CASES.filter((x) => x.method === undefined && x.path === undefined)) {
      const handled = tally.tried(`MCP HTTP: ${c.category}`);
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...c.headers,
      };
      if (!('content-type' in c.headers) && c.category === 'content type')
        delete (headers as Record<string, string>)['content-type'];
      const response = await mcpApp.request(`${c.url ?? local}/mcp`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'add_memory', arguments: write },
        }),
      });
      expect(response.status, c.name).toBe(c.status);
      expect(await unchanged()).toBe(true);
      handled();
    }
  });

  it('a DELETE without a body needs no content type; with a foreign origin or a text body it is refused', async () => {
    await graphmemix.addMemories('alice', [{ id: 'gone', text: 'a memory to delete' }]);
    const handled = tally.tried('HTTP API: bodiless delete');
    const url = `${local}/v1/memories/gone?user_id=alice`;
    const foreign = await app.request(url, { method: 'DELETE', headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    const texted = await app.request(url, {
      method: 'DELETE',
      headers: { 'content-type': 'text/plain', 'content-length': '2' },
      body: '{}',
    });
    expect(texted.status).toBe(415);
    const chunked = await app.request(url, { method: 'DELETE', headers: { 'transfer-encoding': 'chunked' } });
    expect(chunked.status).toBe(415);
    expect(await graphmemix.getMemory('alice', 'gone')).toBeDefined();
    const plain = await app.request(url, { method: 'DELETE' });
    expect(plain.status).toBe(200);
    expect(await graphmemix.getMemory('alice', 'gone')).toBeUndefined();
    handled();
  });

  it('controls: loopback names with the port and same-origin JSON are served', async () => {
    for (const host of [`localhost:${PORT}`, `127.0.0.1:${PORT}`, `[::1]:${PORT}`]) {
      const handled = tally.tried('controls: same-origin');
      const response = await app.request(`http://${host}/v1/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: `http://${host}` },
        body: JSON.stringify({ user_id: 'alice', query: 'original' }),
      });
      expect(response.status, host).toBe(200);
      handled();
    }
  });
});

describe('a real listener checks the Host header against the port it bound', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ graphmemix, open: true, port: 0 });
  });
  afterAll(async () => {
    await server.close();
  });
  const send = (host: string) =>
    new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: server.port, path: '/v1/health', method: 'GET', headers: { host } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });

  it('rebinding Host is 403, the bound one 200', async () => {
    const handled = tally.tried('listener: host');
    expect(await send(`evil.example:${server.port}`)).toBe(403);
    expect(await send(`localhost:${server.port + 1}`)).toBe(403);
    expect(await send(`127.0.0.1:${server.port}`)).toBe(200);
    handled();
  });
});
