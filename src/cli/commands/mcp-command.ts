import type { Command } from 'commander';
import { parseInput } from '../../api-schemas/parse-input.ts';
import { listenFlagsSchema } from '../../api-schemas/route-schemas.ts';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { untilSignal } from './serve-command.ts';

interface McpFlags {
  db: string;
  http?: boolean;
  port: string;
  host: string;
  open?: boolean;
  config?: string;
}

export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description(
      'Run the MCP server (tools add_memory, search_memories, retrieve_evidence, answer_question, delete_memory).',
    )
    .requiredOption('--db <file>', 'archive database file')
    .option('--http', 'serve streamable HTTP at /mcp instead of stdio')
    .option('--port <n>', 'HTTP port', '8788')
    .option('--host <host>', 'HTTP interface to bind', '127.0.0.1')
    .option('--open', 'HTTP without API keys (loopback only)')
    .option('--config <file>', 'model config file')
    .addHelpText(
      'after',
      `
Examples:
  $ graphmemix mcp --db archive.db                  # stdio, for Claude Desktop / Cursor / any MCP client
  $ GRAPHMEMIX_API_KEYS=secret graphmemix mcp --db archive.db --http --port 8788
Client config (stdio):
  {"mcpServers":{"graphmemix":{"command":"npx","args":["graphmemix","mcp","--db","/path/archive.db"]}}}`,
    )
    .action(async (flags: McpFlags) => {
      // Loaded on use, so other commands do not pay for the MCP SDK and the store.
      const { createMcpHttpApp, serveMcpStdio } = await import('../../mcp/serve-mcp.ts');
      const { openShellGraphmemix } = await import('../../server/open-shell-graphmemix.ts');
      const { apiKeysFromEnv } = await import('../../server/start-server.ts');
      if (!flags.http) {
        // stdout carries JSON-RPC: anything logged by libraries must go to stderr instead.
        console.log = console.error;
        console.info = console.error;
        const graphmemix = await openShellGraphmemix({
          db: flags.db,
          ...(flags.config ? { config: flags.config } : {}),
        });
        try {
          await serveMcpStdio(graphmemix);
        } finally {
          await graphmemix.close();
        }
        return;
      }
      const input = parseInput(listenFlagsSchema, {
        db: flags.db,
        port: flags.port,
        host: flags.host,
        open: flags.open === true,
      });
      if (input.open && !['127.0.0.1', 'localhost', '::1'].includes(input.host)) {
        throw new GraphmemixError('CONFIG', `--open binds 127.0.0.1 only; refusing host ${input.host}`);
      }
      const graphmemix = await openShellGraphmemix({
        db: input.db,
        ...(flags.config ? { config: flags.config } : {}),
      });
      const { serve } = await import('@hono/node-server');
      const app = createMcpHttpApp({ graphmemix, apiKeys: apiKeysFromEnv(), open: input.open === true });
      const server = serve({ fetch: app.fetch, port: input.port, hostname: input.host }, (info) => {
        process.stderr.write(`graphmemix MCP (streamable HTTP) on http://${info.address}:${info.port}/mcp\n`);
      });
      await untilSignal();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await graphmemix.close();
    });
}
