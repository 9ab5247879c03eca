import type { Command } from 'commander';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import type { RunningServer } from '../../server/index.ts';
import { isLoopbackHost } from '../../shell-kit/api-keys.ts';
import { announceNewArchive } from '../archive-checks.ts';
import { addLimitOptions, type LimitFlags, limitFlagInput, parseListenFlags } from '../limit-flags.ts';
import { DB_FLAG, DB_FLAG_HELP } from '../resolve-db.ts';

interface ServeFlags extends LimitFlags {
  db: string;
  port: string;
  host: string;
  open?: boolean;
  config?: string;
  json?: boolean;
}

export function registerServeCommand(program: Command): void {
  const command = program
    .command('serve')
    .description(
      'Serve the HTTP API (and the viewer at /view) over an archive. Keys: GRAPHMEMIX_API_KEYS=key=alice|bob,...',
    )
    .option(DB_FLAG, DB_FLAG_HELP)
    .option('--port <n>', 'port to listen on', '8787')
    .option('--host <host>', 'interface to bind', '127.0.0.1')
    .option('--open', 'open local mode: no API keys, binds 127.0.0.1 only')
    .option('--config <file>', 'model config file (default: $GRAPHMEMIX_CONFIG or ./graphmemix.config.json)');
  addLimitOptions(command, 'largest accepted request body in bytes (default 16 MiB)')
    .option('--json', 'print the listening address as JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ GRAPHMEMIX_API_KEYS='ka=alice,kb=bob|carol,kroot=*' graphmemix serve --db archive.db --port 8787
  $ graphmemix serve --db archive.db --open
  $ graphmemix serve --db archive.db --max-pending-writes 64 --key-requests-in-flight 8
  $ curl -s localhost:8787/v1/retrieve -H 'authorization: Bearer ka' \\
      -H 'content-type: application/json' \\
      -d '{"user_id":"alice","question":"When is the design review?","k":10}'`,
    )
    .action(async (flags: ServeFlags) => {
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
      // Loaded on use: the CLI starts fast and other commands do not load the server stack.
      const { mediaDirFor, openShellGraphmemix } = await import('../../shell-kit/open-shell-graphmemix.ts');
      const { apiKeysFromEnv, startServer } = await import('../../server/index.ts');
      const { checkListenKeys } = await import('../../shell-kit/api-keys.ts');
      // Keys from the environment and from the config file's `apiKeys` (same entry form).
      const { loadModelConfig } = await import('../../index.ts');
      const config = loadModelConfig(flags.config ? { path: flags.config } : {});
      const { resolveServerLimits } = await import('../../shell-kit/server-limits.ts');
      const limits = resolveServerLimits(input, config.limits);
      const apiKeys = [...apiKeysFromEnv(), ...(config.apiKeys ?? [])];
      for (const warning of checkListenKeys(apiKeys, { host: input.host, open: input.open === true })) {
        process.stderr.write(`${warning}\n`);
      }
      announceNewArchive(input.db);
      const graphmemix = await openShellGraphmemix({
        db: input.db,
        modelConfig: config,
        resumeForgets: true,
        limits,
      });
      let server: RunningServer;
      try {
        server = await startServer({
          graphmemix,
          port: input.port,
          host: input.host,
          open: input.open === true,
          apiKeys,
          mediaDir: graphmemix.mediaDir ?? mediaDirFor(input.db),
          ...(limits.maxBodyBytes === undefined ? {} : { maxBodyBytes: limits.maxBodyBytes }),
          budget: limits.budget,
          connections: limits.connections,
        });
      } catch (error) {
        await graphmemix.close();
        throw error;
      }
      // Listening for the signal before the ready line: a supervisor may stop the server the moment it reads it.
      const stopped = untilSignal();
      if (flags.json)
        process.stdout.write(`${JSON.stringify({ url: server.url, open: input.open === true })}\n`);
      else
        process.stdout.write(
          `graphmemix API on ${server.url} (${input.open ? 'open local mode, no API keys' : 'bearer API keys required'}); viewer at ${server.url}/view?user_id=<id>&q=<question>\n`,
        );
      await stopped;
      await server.close();
      // A shutdown does not wait out a compaction under way (minutes on a large user): it stops at its next
      // step, and the user's next write, after the restart, starts it again.
      await graphmemix.close({ background: 'stop' });
    });
}

/** Resolves on SIGINT/SIGTERM so the store is closed cleanly (WAL checkpoint) before exit. */
export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}
