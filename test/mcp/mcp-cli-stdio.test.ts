import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { BIN } from '../support/repo-paths.ts';

const textOf = (result: unknown) => {
  const first = (result as CallToolResult).content[0];
  return first?.type === 'text' ? first.text : '';
};

describe('graphmemix mcp (real CLI over stdio)', () => {
  it('adds, retrieves and deletes through the tools against a real archive, per user', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gmx-mcp-cli-'));
    const client = new Client({ name: 'cli-test', version: '1.0.0' });
    try {
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [BIN, 'mcp', '--db', join(dir, 'archive.db')],
          cwd: process.cwd(),
          env: { PATH: process.env.PATH ?? '', HOME: dir, OPENAI_API_KEY: '' },
          stderr: 'pipe',
        }),
      );
      const add = async (user: string, memories: { id: string; text: string; timestamp: string }[]) => {
        const result = await client.callTool({ name: 'add_memory', arguments: { user_id: user, memories } });
        expect(result.isError, textOf(result)).toBeFalsy();
      };
      await add('alice', [
        {
          id: 'a1',
          text: 'The pottery workshop is on Saturday in Studio 2',
          timestamp: '2024-04-01T10:00:00Z',
        },
        {
          id: 'a2',
          text: 'Update: the pottery workshop moved to Sunday, Studio 5',
          timestamp: '2024-04-05T10:00:00Z',
        },
        { id: 'a3', text: 'Bought new running shoes', timestamp: '2024-04-06T10:00:00Z' },
      ]);
      await add('bob', [
        {
          id: 'b1',
          text: 'Bob private: pottery workshop gift card PIN 4242',
          timestamp: '2024-04-02T10:00:00Z',
        },
      ]);

      const retrieved = await client.callTool({
        name: 'retrieve_evidence',
        arguments: { user_id: 'alice', question: 'Where and when is the pottery workshop?', k: 5 },
      });
      expect(retrieved.isError, textOf(retrieved)).toBeFalsy();
      const body = JSON.parse(textOf(retrieved)) as { evidence: { memory_id: string; text: string }[] };
      const ids = body.evidence.map((e) => e.memory_id);
      // Which pottery memories make the forest is the pipeline's call; they must be alice's and on topic.
      expect(ids.some((id) => id === 'a1' || id === 'a2')).toBe(true);
      expect(ids.every((id) => ['a1', 'a2', 'a3'].includes(id))).toBe(true);
      // Bob's text, not its bare number (a score or timing may hold those digits).
      expect(textOf(retrieved)).not.toContain('PIN 4242');

      const search = await client.callTool({
        name: 'search_memories',
        arguments: { user_id: 'alice', query: 'gift card PIN' },
      });
      expect(textOf(search)).not.toContain('PIN 4242');
      const cross = await client.callTool({
        name: 'delete_memory',
        arguments: { user_id: 'alice', memory_id: 'b1' },
      });
      expect(cross.isError).toBe(true);
      const own = await client.callTool({
        name: 'delete_memory',
        arguments: { user_id: 'bob', memory_id: 'b1' },
      });
      expect(own.isError, textOf(own)).toBeFalsy();
    } finally {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
