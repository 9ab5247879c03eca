import type { Command } from 'commander';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { isLoopbackHost } from '../../shell-kit/api-keys.ts';
import { announceNewArchive } from '../archive-checks.ts';
import { addLimitOptions, type LimitFlags, limitFlagInput, parseListenFlags } from '../limit-flags.ts';
import { DB_FLAG, DB_FLAG_HELP } from '../resolve-db.ts';
import { untilSignal } from './serve-command.ts';

interface McpFlags extends LimitFlags {
  db: string;
  http?: boolean;
  port: string;
  host: string;
  open?: boolean;
  config?: string;
  users?: string;
}

export function registerMcpCommand(program: Command): void {
  const command = program
    .command('mcp')
    .description(
      'Run the MCP server (tools add_memory, search_memories, retrieve_evidence, answer_question, delete_memory).',
    )
    .option(DB_FLAG, DB_FLAG_HELP)
    .option('--http', 'serve streamable HTTP at /mcp instead of stdio')
    .option('--port <n>', 'HTTP port', '8788')
    .option('--host <host>', 'HTTP interface to bind', '127.0.0.1')
    .option('--open', 'HTTP without API keys (loopback only)');
  addLimitOptions(
    command,
    'largest accepted request body (HTTP) or message line (stdio) in bytes (default 16 MiB)',
  )
    .option('--config <file>', 'model config file')
    .option(
      '--users <ids>',
      'stdio: the user ids the tools may touch, separated by | (default: $GRAPHMEMIX_MCP_USERS, else every user)',
    )
    .addHelpText(
      'after',
      `
Examples:
  $ graphmemix mcp --db archive.db                  # stdio, for Claude Desktop / Cursor / any MCP client
  $ graphmemix mcp --db archive.db --users 'alice|bob'  # stdio, tools touch alice and bob only
  $ GRAPHMEMIX_API_KEYS='ka=alice,kroot=*' graphmemix mcp --db archive.db --http --port 8788
Client config (stdio):
  {"mcpServers":{"graphmemix":{"command":"npx","args":["graphmemix","mcp","--db","/path/archive.db"]}}}`,
    )
    .action(async (flags: McpFlags) => {
      // Loaded on use, so other commands do not pay for the MCP SDK and the store.
      const { createMcpHttpApp, serveMcpStdio } = await import('../../mcp/index.ts');
      const { openShellGraphmemix } = await import('../../shell-kit/open-shell-graphmemix.ts');
      const { apiKeysFromEnv } = await import('../../server/index.ts');
      const { mediaDirFor } = await import('../../shell-kit/open-shell-graphmemix.ts');
      if (!flags.http) {
        const { userScope } = await import('../../shell-kit/user-scope.ts');
        const users = stdioUsers(flags.users ?? process.env.GRAPHMEMIX_MCP_USERS);
        const input = parseListenFlags({
          db: flags.db,
          port: flags.port,
          host: flags.host,
          ...limitFlagInput(flags),
        });
        const { refuseHttpOnlyLimits, resolveServerLimits } = await import(
          '../../shell-kit/server-limits.ts'
        );
        refuseHttpOnlyLimits(input, 'MCP over stdio');
        const { loadModelConfig } = await import('../../index.ts');
        const config = loadModelConfig(flags.config ? { path: flags.config } : {});
        const limits = resolveServerLimits(input, config.limits);
        // stdout carries JSON-RPC: anything logged by libraries must go to stderr instead.
        console.log = console.error;
        console.info = console.error;
        announceNewArchive(flags.db);
        const graphmemix = await openShellGraphmemix({
          db: flags.db,
          modelConfig: config,
          resumeForgets: true,
          limits,
        });
        try {
          await serveMcpStdio(graphmemix, {
            scope: userScope(users),
            mediaDir: graphmemix.mediaDir ?? mediaDirFor(flags.db),
            ...(limits.maxBodyBytes === undefined ? {} : { maxMessageBytes: limits.maxBodyBytes }),
          });
        } finally {
          // The client closed the session: MCP's stdio shutdown expects a prompt exit (SIGTERM, then SIGKILL,
          // follow if it does not come), so a compaction under way stops at its next step, flagged for a
          // restart by the next write, rather than being killed half-way with its mark left for the lease.
          await graphmemix.close({ background: 'stop' });
        }
        return;
      }
      const input = parseListenFlags({
        db: flags.db,
        port: flags.port,
        host: flags.host,
        open: flags.open === true,
        ...limitFlagInput(flags),
      });
      if (input.open && !isLoopbackHost(input.host)) {
        throw new GraphmemixError('CONFIG', `--open binds 127.0.0.1 only; refusing host ${input.host}`);
      }
      const { loadModelConfig } = await import('../../index.ts');
      const config = loadModelConfig(flags.config ? { path: flags.config } : {});
      const { resolveServerLimits } = await import('../../shell-kit/server-limits.ts');
      const limits = resolveServerLimits(input, config.limits);
      const { checkListenKeys } = await import('../../shell-kit/api-keys.ts');
      // Keys from the environment and from the config file's `apiKeys`, as `serve` takes them; checked before
      // the archive opens.
      const apiKeys = [...apiKeysFromEnv(), ...(config.apiKeys ?? [])];
      const warnings = checkListenKeys(apiKeys, { host: input.host, open: input.open === true });
      announceNewArchive(input.db);
      const graphmemix = await openShellGraphmemix({
        db: input.db,
        modelConfig: config,
        resumeForgets: true,
        limits,
      });
      const { serve } = await import('@hono/node-server');
      for (const warning of warnings) process.stderr.write(`${warning}\n`);
      let boundPort: number | undefined;
      // Listening for the signal before the ready line: a supervisor may stop the server the moment it reads it.
      const stopped = untilSignal();
      const app = createMcpHttpApp({
        graphmemix,
        apiKeys,
        open: input.open === true,
        port: () => boundPort,
        mediaDir: graphmemix.mediaDir ?? mediaDirFor(input.db),
        ...(limits.maxBodyBytes === undefined ? {} : { maxBodyBytes: limits.maxBodyBytes }),
        budget: limits.budget,
      });
      const server = serve({ fetch: app.fetch, port: input.port, hostname: input.host }, (info) => {
        boundPort = info.port;
        process.stderr.write(`graphmemix MCP (streamable HTTP) on http://${info.address}:${info.port}/mcp\n`);
      });
      const { tuneHttpServer } = await import('../../shell-kit/tune-http-server.ts');
      tuneHttpServer(server as import('node:http').Server, limits.connections);
      await stopped;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      // As `serve`: a shutdown stops the automatic compactions under way at their next step.
      await graphmemix.close({ background: 'stop' });
    });
}

/** `alice|bob` -> ['alice','bob']; nothing (or `*`) -> every user: stdio MCP is a process its owner started. */
function stdioUsers(value: string | undefined): '*' | string[] {
  const users = (value ?? '')
    .split('|')
    .map((user) => user.trim())
    .filter(Boolean);
  if (users.length === 0 || users.includes('*')) return '*';
  for (const user of users) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/.test(user)) {
      throw new GraphmemixError('INVALID_INPUT', `--users: invalid user id "${user}"`, {
        location: { field: 'users' },
      });
    }
  }
  return users;
}
