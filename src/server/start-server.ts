import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import { apiKeyEntriesFromEnv, checkKeyLengths, isLoopbackHost } from '../shell-kit/api-keys.ts';
import type { ConnectionLimits } from '../shell-kit/connection-guard.ts';
import { tuneHttpServer } from '../shell-kit/tune-http-server.ts';
import { createServer, type ServerOptions } from './create-server.ts';

export interface StartServerOptions extends ServerOptions {
  port?: number;
  host?: string;
  /** Open connections per client address and in all (defaults: connection-guard.ts). */
  connections?: ConnectionLimits;
}

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Key entries from GRAPHMEMIX_API_KEYS (comma-separated; each `key=alice|bob`, `key=*` or a bare key), the
 * documented way to configure them. Parsed by `parseApiKeys`.
 */
export function apiKeysFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return apiKeyEntriesFromEnv(env);
}

/**
 * Listens with @hono/node-server. Open mode (no keys) binds loopback only and refuses any other host, so an
 * unauthenticated archive is never exposed on a network interface by accident.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  if (options.open && !isLoopbackHost(host)) {
    throw new GraphmemixError(
      'CONFIG',
      `--open serves without API keys and binds 127.0.0.1 only; refusing host ${host}`,
    );
  }
  // Short keys are refused where other machines can try keys (the CLI prints the loopback warning).
  if (!options.open) checkKeyLengths(options.apiKeys ?? [], host);
  let boundPort: number | undefined;
  // Open mode checks Host/Origin against the port actually bound (port 0 picks one at listen).
  const app = createServer({ ...options, port: () => boundPort });
  return new Promise((resolve, reject) => {
    const server = serve(
      { fetch: app.fetch, port: options.port ?? 8787, hostname: host },
      (info: AddressInfo) => {
        boundPort = info.port;
        const shown = info.family === 'IPv6' ? `[${info.address}]` : info.address;
        resolve({
          url: `http://${shown}:${info.port}`,
          port: info.port,
          close: () =>
            new Promise<void>((done) => {
              server.close(() => done());
              // Keep-alive sockets would hold close() open for their idle timeout.
              (server as { closeAllConnections?: () => void }).closeAllConnections?.();
            }),
        });
      },
    );
    tuneHttpServer(server as Server, options.connections);
    server.once('error', reject);
  });
}
