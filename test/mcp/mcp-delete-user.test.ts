import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { createMcpServer } from '../../src/mcp/create-mcp-server.ts';

describe('MCP delete_user', () => {
  it('forgets every memory of one user and answers NOT_FOUND for an unknown user', async () => {
    const gm = await openGraphmemix({ db: ':memory:' });
    await gm.addMemories('ann', [
      { id: 'a', text: 'ann note' },
      { id: 'b', text: 'another ann note' },
    ]);
    await gm.addMemories('bob', [{ id: 'c', text: 'bob note' }]);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = createMcpServer(gm);
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);

    const done = (await client.callTool({
      name: 'delete_user',
      arguments: { user_id: 'ann' },
    })) as CallToolResult;
    expect(done.isError).toBeFalsy();
    expect(done.structuredContent).toEqual({ user_id: 'ann', deleted: true, memories: 2, media_files: 0 });
    expect(await gm.store.countMemories('ann')).toBe(0);
    expect(await gm.store.countMemories('bob')).toBe(1);

    const missing = (await client.callTool({
      name: 'delete_user',
      arguments: { user_id: 'ann' },
    })) as CallToolResult;
    expect(missing.isError).toBe(true);
    const first = missing.content[0];
    expect(first?.type === 'text' && JSON.parse(first.text).error.code).toBe('NOT_FOUND');

    await client.close();
    await server.close();
    await gm.close();
  });
});
