import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { sdkErrorCode } from '../../src/mcp/sdk-tool-errors.ts';
import { createMcpHttpApp } from '../../src/mcp/serve-mcp.ts';
import { createFakeGraphmemix } from '../support/fake-graphmemix.ts';
import { postToolCall } from '../support/mcp-tool-call.ts';
import { REPO_ROOT, TSX_IMPORT } from '../support/repo-paths.ts';

const TOOLS = [
  'add_memory',
  'answer_question',
  'delete_memory',
  'delete_user',
  'forget_user',
  'get_memory',
  'list_memories',
  'list_users',
  'memory_history',
  'retrieve_evidence',
  'search_memories',
  'update_memory',
  'user_stats',
];

function textOf(result: unknown): string {
  const first = (result as CallToolResult).content[0];
  return first?.type === 'text' ? first.text : '';
}

const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

describe('MCP server', () => {
  it('serves every tool over real stdio and scopes every call by user_id', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', TSX_IMPORT, join(REPO_ROOT, 'test/support/fake-mcp-stdio.ts')],
      cwd: process.cwd(),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    clients.push(client);
    await client.connect(transport);

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(TOOLS);
    for (const tool of tools) {
      expect(tool.description?.length ?? 0).toBeGreaterThan(80);
      // list_users lists the users the server may touch; every other tool acts on one user.
      if (tool.name !== 'list_users')
        expect((tool.inputSchema.required ?? []) as string[]).toContain('user_id');
    }

    const retrieved = await client.callTool({
      name: 'retrieve_evidence',
      arguments: { user_id: 'alice', question: 'Where is the offsite and is it a surprise party?' },
    });
    expect(retrieved.isError).toBeFalsy();
    const body = JSON.parse(textOf(retrieved)) as { evidence: { memory_id: string; text: string }[] };
    expect(body.evidence.map((e) => e.memory_id)).toContain('a1');
    expect(body.evidence.some((e) => e.memory_id === 'b1' || e.text.includes('Bob'))).toBe(false);

    const added = await client.callTool({
      name: 'add_memory',
      arguments: { user_id: 'alice', memories: [{ id: 'a3', text: 'Alice paid the Sintra hotel deposit' }] },
    });
    expect(JSON.parse(textOf(added))).toMatchObject({ user_id: 'alice', imported: 1 });

    const searched = await client.callTool({
      name: 'search_memories',
      arguments: { user_id: 'alice', query: 'Sintra secret party' },
    });
    const hits = (JSON.parse(textOf(searched)) as { results: { memory_id: string }[] }).results.map(
      (h) => h.memory_id,
    );
    expect(hits).toContain('a3');
    expect(hits).not.toContain('b1');

    // Deleting bob's memory through alice's scope fails with a code and leaves bob's archive alone.
    const crossDelete = await client.callTool({
      name: 'delete_memory',
      arguments: { user_id: 'alice', memory_id: 'b1' },
    });
    expect(crossDelete.isError).toBe(true);
    expect(JSON.parse(textOf(crossDelete)).error.code).toBe('NOT_FOUND');
    const bobSearch = await client.callTool({
      name: 'search_memories',
      arguments: { user_id: 'bob', query: 'surprise party' },
    });
    expect(textOf(bobSearch)).toContain('b1');

    const answered = await client.callTool({
      name: 'answer_question',
      arguments: { user_id: 'alice', question: 'Who booked train tickets?' },
    });
    expect(JSON.parse(textOf(answered))).toHaveProperty('answered');

    // Schema validation happens before the tool runs: a missing user_id is a tool error, not a crash.
    // It carries our error shape and code (the SDK's own text has none), naming the field.
    const invalid = await client.callTool({ name: 'search_memories', arguments: { query: 'x' } });
    expect(invalid.isError).toBe(true);
    const invalidError = (JSON.parse(textOf(invalid)) as { error: { code: string; message: string } }).error;
    expect(invalidError.code).toBe('INVALID_INPUT');
    expect(invalidError.message).toContain('user_id');
    expect(sdkErrorCode('something else broke')).toBe('INTERNAL');
    const unknown = await client.callTool({ name: 'no_such_tool', arguments: {} });
    expect(JSON.parse(textOf(unknown))).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });

  it('serves streamable HTTP with bearer keys', async () => {
    const graphmemix = createFakeGraphmemix();
    await graphmemix.addMemories('alice', [{ id: 'a1', text: 'Alice likes green tea' }]);
    const app = createMcpHttpApp({ graphmemix, apiKeys: ['k1'] });
    const fetchApp = (input: string | URL | Request, init?: RequestInit) =>
      Promise.resolve(app.request(input instanceof Request ? input : String(input), init));

    const denied = await app.request('http://local/mcp', { method: 'POST', body: '{}' });
    expect(denied.status).toBe(401);

    const client = new Client({ name: 'http-test', version: '1.0.0' });
    clients.push(client);
    await client.connect(
      new StreamableHTTPClientTransport(new URL('http://local/mcp'), {
        fetch: fetchApp,
        requestInit: { headers: { authorization: 'Bearer k1' } },
      }),
    );
    const result = await client.callTool({
      name: 'search_memories',
      arguments: { user_id: 'alice', query: 'green tea' },
    });
    expect(textOf(result)).toContain('a1');
    expect(() => createMcpHttpApp({ graphmemix })).toThrow(expect.objectContaining({ code: 'CONFIG' }));
  });

  it('over HTTP refuses a body over the limit before the SDK reads it, and the archive is untouched', async () => {
    const graphmemix = createFakeGraphmemix();
    const app = createMcpHttpApp({ graphmemix, apiKeys: ['k1'], maxBodyBytes: 4096 });
    const call = (text: string) =>
      postToolCall(app, 'k1', 'add_memory', { user_id: 'alice', memories: [{ id: 'big', text }] });
    const refused = await call('x'.repeat(10_000));
    expect(refused.status).toBe(413);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('TOO_LARGE');
    expect(graphmemix.calls).toEqual([]);
    // The same call under the limit reaches the tool.
    const accepted = await call('a small memory');
    expect(accepted.status).toBe(200);
    expect(graphmemix.calls.map((c) => c.method)).toEqual(['addMemories']);
  });

  it('refuses a call whose arguments hold more values than an HTTP body may, before its schema parse', async () => {
    const graphmemix = createFakeGraphmemix();
    const app = createMcpHttpApp({ graphmemix, apiKeys: ['k1'] });
    const response = await postToolCall(app, 'k1', 'add_memory', {
      user_id: 'alice',
      memories: [{ id: 'm', text: 'x', assets: new Array(60_000).fill(0) }],
    });
    const reply = (await response.json()) as { result: { isError: boolean; content: { text: string }[] } };
    expect(reply.result.isError).toBe(true);
    const error = (JSON.parse(reply.result.content[0]!.text) as { error: { code: string; message: string } })
      .error;
    expect(error.code).toBe('TOO_LARGE');
    expect(error.message).toContain('more than the maximum of 50000 elements');
    expect(graphmemix.calls).toEqual([]);
  });
});
