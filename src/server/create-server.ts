import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { Graphmemix } from '../graphmemix-api.ts';
import { apiKeyAuth } from './api-key-auth.ts';
import { errorResponse, httpError } from './error-response.ts';
import { registerMemoryRoutes } from './memory-routes.ts';
import { buildOpenApiDocument } from './openapi-document.ts';
import { registerQueryRoutes } from './query-routes.ts';
import { registerUserRoutes } from './user-routes.ts';

export interface ServerOptions {
  graphmemix: Graphmemix;
  /** Bearer keys; at least one is required unless `open`. */
  apiKeys?: readonly string[];
  /** Open local mode: no keys (the caller must bind loopback only; `startServer` enforces it). */
  open?: boolean;
  /** Largest accepted request body in bytes (default 16 MiB, room for a few photos). */
  maxBodyBytes?: number;
  /** Where uploaded media is saved (default: a fresh folder under the OS temp dir). */
  mediaDir?: string;
}

export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/**
 * The HTTP API as a Hono app: testable with `app.request()` (no port), served by `startServer`.
 * Routes are scoped by `user_id`; errors are `{"error":{"code","message"}}` with the stable codes.
 */
export function createServer(options: ServerOptions): Hono {
  const keys = (options.apiKeys ?? []).filter((key) => key.trim() !== '');
  if (!options.open && keys.length === 0) {
    throw new GraphmemixError(
      'CONFIG',
      'API keys are required: set GRAPHMEMIX_API_KEYS (comma-separated) or start in open local mode (--open)',
    );
  }
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  // The archive's media folder when it has one: deleting a memory or a user then removes its uploads too.
  const mediaDir =
    options.mediaDir ?? options.graphmemix.mediaDir ?? mkdtempSync(join(tmpdir(), 'graphmemix-media-'));
  const app = new Hono();

  app.onError((error, c) => errorResponse(c, error));
  app.notFound((c) => errorResponse(c, httpError('NOT_FOUND', `no route ${c.req.method} ${c.req.path}`)));

  app.get('/v1/health', (c) => c.json({ status: 'ok', version }));
  app.get('/openapi.json', (c) => c.json(buildOpenApiDocument(version)));

  if (!options.open) {
    app.use('/v1/*', async (c, next) => (c.req.path === '/v1/health' ? next() : apiKeyAuth(keys)(c, next)));
    app.use('/view', apiKeyAuth(keys));
  }
  // The limit is checked before any handler reads the body, so an oversized request changes nothing.
  app.use(
    '/v1/*',
    bodyLimit({
      maxSize: maxBodyBytes,
      onError: (c) => errorResponse(c, httpError('TOO_LARGE', `request body exceeds ${maxBodyBytes} bytes`)),
    }),
  );

  registerMemoryRoutes(app, { graphmemix: options.graphmemix, mediaDir });
  registerQueryRoutes(app, options.graphmemix);
  registerUserRoutes(app, options.graphmemix);
  return app;
}
