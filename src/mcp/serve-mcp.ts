import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import { assertJsonDepth, assertNoProtoKeys } from '../api-schemas/json-depth.ts';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { Graphmemix } from '../graphmemix-api.ts';
import { readPoolOf } from '../read-workers/with-read-workers.ts';
import { apiKeyAuth } from '../shell-kit/api-key-auth.ts';
import { type ApiKeyGrant, parseApiKeys } from '../shell-kit/api-keys.ts';
import { errorResponse, httpError } from '../shell-kit/error-response.ts';
import { localOriginGuard } from '../shell-kit/local-origin-guard.ts';
import { defaultQuestionShare } from '../shell-kit/question-share.ts';
import { DEFAULT_MAX_BODY_BYTES, requestBodyLimit } from '../shell-kit/request-body-limit.ts';
import { type RequestBudgetOptions, requestBudget } from '../shell-kit/request-budget.ts';
import { ALL_USERS } from '../shell-kit/user-scope.ts';
import { createMcpServer, type McpServerOptions } from './create-mcp-server.ts';
import { StdioMessageFilter } from './stdio-message-filter.ts';

export interface McpStdioOptions extends McpServerOptions {
  /** Longest accepted message line in bytes (default DEFAULT_MAX_BODY_BYTES, as an HTTP body). */
  maxMessageBytes?: number;
  /** The streams to serve (default the process's stdin and stdout; tests pass their own). */
  stdin?: Readable;
  stdout?: Writable;
}

/**
 * Serves MCP over stdio until the client closes the stream. Nothing else may write to stdout while this
 * runs (it carries JSON-RPC), so progress and errors go to stderr.
 */
export async function serveMcpStdio(graphmemix: Graphmemix, options: McpStdioOptions = {}): Promise<void> {
  const {
    maxMessageBytes = DEFAULT_MAX_BODY_BYTES,
    stdin = process.stdin,
    stdout = process.stdout,
  } = options;
  const server = createMcpServer(graphmemix, options);
  // Oversized and non-JSON lines are answered here and never reach the SDK (see StdioMessageFilter).
  const filter = new StdioMessageFilter(
    maxMessageBytes,
    (line) => stdout.write(line),
    (message) => process.stderr.write(`${message}\n`),
  );
  stdin.pipe(filter);
  // The SDK's own buffer limit sits above the filter's, so it never closes the session itself.
  const transport = new StdioServerTransport(filter, stdout, { maxBufferSize: maxMessageBytes + 1024 });
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    filter.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}

export interface McpHttpOptions {
  graphmemix: Graphmemix;
  /** Same forms as the REST API: `key=alice|bob`, `key=*`, a bare key (every user) or grant objects. */
  apiKeys?: readonly (string | ApiKeyGrant)[];
  open?: boolean;
  /** The listening port, for open mode's Host/Origin check. */
  port?: number | (() => number | undefined);
  /** The archive's media store (add_memory references files only in the user's folder of it). */
  mediaDir?: string;
  /** Largest accepted request body (default DEFAULT_MAX_BODY_BYTES, as the REST API). */
  maxBodyBytes?: number;
  /** Bounds on the request bodies in flight, as the REST API's (src/shell-kit/request-budget.ts). */
  budget?: Omit<RequestBudgetOptions, 'maxBodyBytes'>;
}

/**
 * MCP over streamable HTTP at `/mcp`, stateless: each request gets a fresh server and transport, so no
 * session state lives in the process and requests of different users never share one. Same key rules as
 * the REST API.
 */
export function createMcpHttpApp(options: McpHttpOptions): Hono {
  const { grants } = parseApiKeys(options.apiKeys ?? []);
  if (!options.open && grants.length === 0) {
    throw new GraphmemixError('CONFIG', 'API keys are required for MCP over HTTP unless started with --open');
  }
  const app = new Hono();
  app.onError((error, c) =>
    errorResponse(
      c,
      error,
      grants.map((grant) => grant.key),
    ),
  );
  app.notFound((c) => errorResponse(c, httpError('NOT_FOUND', `no route ${c.req.method} ${c.req.path}`)));
  if (options.open) {
    app.use('*', localOriginGuard(options.port === undefined ? {} : { port: options.port }));
    app.use('*', async (c, next) => {
      c.set('userScope', ALL_USERS);
      c.set('caller', 'local');
      await next();
    });
  } else {
    app.use('/mcp', apiKeyAuth(grants));
  }
  // Before the SDK's transport reads the body (it would read any size whole).
  app.use('/mcp', requestBodyLimit(options.maxBodyBytes));
  app.use(
    '/mcp',
    requestBudget({
      ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
      callers: options.open ? 1 : grants.length,
      ...options.budget,
    }),
  );
  // One key's share of the question capacity, as the REST API's question routes (none in open mode).
  const questions = defaultQuestionShare({
    keys: options.open ? 0 : grants.length,
    capacity: readPoolOf(options.graphmemix)?.capacity,
    share: options.budget?.perCallerQuestions,
  });
  app.all('/mcp', async (c) => {
    const caller = c.get('caller') ?? 'unknown';
    // The key's users bound every tool of this request's server.
    const server = createMcpServer(options.graphmemix, {
      scope: c.get('userScope') ?? { all: false, users: new Set<string>() },
      ...(questions === undefined ? {} : { questionSlot: () => questions.take(caller) }),
      lane: caller,
      ...(options.mediaDir === undefined ? {} : { mediaDir: options.mediaDir }),
    });
    // No sessionIdGenerator: stateless mode.
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    if (c.req.method !== 'POST') return transport.handleRequest(c.req.raw);
    // The body's nesting is bounded before anything parses it (the transport's own JSON.parse would spend
    // seconds on a body of nested brackets); what parses goes to the transport as its parsed body.
    const text = await c.req.text();
    assertJsonDepth(text);
    let parsedBody: unknown;
    try {
      parsedBody = JSON.parse(text);
    } catch {
      // Malformed: the transport answers with its own JSON-RPC parse error, from the same bytes.
      const { method, headers, url } = c.req.raw;
      return transport.handleRequest(new Request(url, { method, headers, body: text }));
    }
    assertNoProtoKeys(parsedBody);
    return transport.handleRequest(c.req.raw, { parsedBody });
  });
  return app;
}
