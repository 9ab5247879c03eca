import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertJsonDepth, MAX_JSON_DEPTH, parseRequestJson } from '../../src/api-schemas/json-depth.ts';
import { createMcpHttpApp } from '../../src/mcp/serve-mcp.ts';
import { StdioMessageFilter } from '../../src/mcp/stdio-message-filter.ts';
import { jsonRequest, type SecurityWorld, startSecurityWorld } from './security-harness.ts';

// Round 52 audit: a body of nested brackets kept JSON.parse on the event loop for seconds before any bound
// was checked. Every shell now measures the nesting first.
const nested = (depth: number, inner = '0') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
/** A body of MAX_JSON_DEPTH + 1 levels followed by a megabyte of brackets a parse would walk. */
const hostile = () => `{"user_id":"alice","memories":${'['.repeat(1024 * 1024)}`;

describe('the JSON depth bound', () => {
  it('allows MAX_JSON_DEPTH levels, refuses one more as TOO_LARGE, and skips brackets inside strings', () => {
    expect(() => assertJsonDepth(nested(MAX_JSON_DEPTH))).not.toThrow();
    expect(() => assertJsonDepth(nested(MAX_JSON_DEPTH + 1))).toThrow(
      expect.objectContaining({ code: 'TOO_LARGE' }),
    );
    const inString = JSON.stringify({ text: `${'['.repeat(500)} \\" {{{ "` });
    expect(() => assertJsonDepth(inString)).not.toThrow();
    // An escaped quote does not end the string; the brackets after it are still inside.
    expect(() => assertJsonDepth(`["a\\"${'['.repeat(200)}"]`)).not.toThrow();
    expect(() => assertJsonDepth(`["a\\\\", ${nested(MAX_JSON_DEPTH)}]`)).toThrow(
      expect.objectContaining({ code: 'TOO_LARGE' }),
    );
    expect(parseRequestJson('{"a":[1,{"b":2}]}', 'body')).toEqual({ a: [1, { b: 2 }] });
    expect(() => parseRequestJson('{"a":', 'request body')).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', message: expect.stringContaining('request body') }),
    );
  });
});

describe('every shell refuses a deeply nested body before parsing it', () => {
  let world: SecurityWorld;
  beforeAll(async () => {
    world = await startSecurityWorld();
  });
  afterAll(async () => {
    await world.close();
  });

  it('HTTP JSON routes answer 413 TOO_LARGE and store nothing', async () => {
    for (const path of ['/v1/memories', '/v1/retrieve', '/v1/search']) {
      const response = await world.app.request(path, { ...jsonRequest('POST', 'ka'), body: hostile() });
      expect(response.status, path).toBe(413);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('TOO_LARGE');
    }
    const patch = await world.app.request('/v1/memories/m1', {
      ...jsonRequest('PATCH', 'ka'),
      body: `{"user_id":"alice","metadata":${nested(100, '{}')}}`,
    });
    expect(patch.status).toBe(413);
    expect((await world.graphmemix.listMemories('alice')).memories).toHaveLength(0);
  });

  it('the metadata filter of a listing and the multipart memories field too', async () => {
    const listing = await world.app.request(
      `/v1/memories?user_id=alice&metadata=${encodeURIComponent(nested(80, '{}'))}`,
      { headers: { authorization: 'Bearer ka' } },
    );
    expect(listing.status).toBe(413);
    expect(((await listing.json()) as { error: { location: { field?: string } } }).error.location.field).toBe(
      'filters.metadata',
    );
    const form = new FormData();
    form.set('user_id', 'alice');
    form.set('memories', nested(MAX_JSON_DEPTH + 1));
    const upload = await world.app.request('/v1/memories', {
      method: 'POST',
      headers: { authorization: 'Bearer ka' },
      body: form,
    });
    expect(upload.status).toBe(413);
  });

  it('MCP over HTTP answers 413, and a well-formed call and a malformed one still get their answers', async () => {
    const app = createMcpHttpApp({ graphmemix: world.graphmemix, apiKeys: ['ka=alice'] });
    const headers = {
      authorization: 'Bearer ka',
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const deep = await app.request('/mcp', { method: 'POST', headers, body: hostile() });
    expect(deep.status).toBe(413);
    const list = await app.request('/mcp', {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(list.status).toBe(200);
    expect(JSON.stringify(await list.json())).toContain('retrieve_evidence');
    const malformed = await app.request('/mcp', { method: 'POST', headers, body: '{"jsonrpc":' });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });

  it('a __proto__ key anywhere in request JSON is refused by name, not dropped', async () => {
    await world.graphmemix.addMemories('alice', [
      { id: 'kept', text: 'a cat on the roof', metadata: { color: 'red' } },
    ]);
    // The schema alone dropped the key: a filter of only it matched every memory.
    const filtered = await world.app.request('/v1/search', {
      ...jsonRequest('POST', 'ka'),
      body: '{"user_id":"alice","query":"cat","filters":{"metadata":{"__proto__":"x"}}}',
    });
    expect(filtered.status).toBe(400);
    expect(JSON.stringify(await filtered.json())).toContain('__proto__');
    const added = await world.app.request('/v1/memories', {
      ...jsonRequest('POST', 'ka'),
      body: '{"user_id":"alice","memories":[{"id":"p","text":"t","metadata":{"__proto__":{"admin":true}}}]}',
    });
    expect(added.status).toBe(400);
    expect(await world.graphmemix.getMemory('alice', 'p')).toBeUndefined();
    const replies: string[] = [];
    const filter = new StdioMessageFilter(1024 * 1024, (line) => replies.push(line));
    filter.resume();
    const ended = new Promise((resolve) => filter.on('end', resolve));
    filter.end('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"__proto__":{}}}\n');
    await ended;
    expect(JSON.parse(replies[0]!)).toMatchObject({ error: { data: { code: 'INVALID_INPUT' } } });
  });

  it('MCP over stdio answers the line with TOO_LARGE and passes the next one', async () => {
    const replies: string[] = [];
    const filter = new StdioMessageFilter(16 * 1024 * 1024, (line) => replies.push(line));
    const out: Buffer[] = [];
    filter.on('data', (chunk: Buffer) => out.push(chunk));
    const ended = new Promise((resolve) => filter.on('end', resolve));
    filter.write(`${hostile()}\n`);
    filter.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`);
    filter.end();
    await ended;
    expect(replies).toHaveLength(1);
    expect(JSON.parse(replies[0]!)).toMatchObject({ error: { data: { code: 'TOO_LARGE' } } });
    expect(Buffer.concat(out).toString('utf8')).toContain('tools/list');
  });
});
