import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { Graphmemix } from '../graphmemix-api.ts';
import { apiKeyAuth } from '../server/api-key-auth.ts';
import { errorResponse, httpError } from '../server/error-response.ts';
import { createMcpServer } from './create-mcp-server.ts';

/**
 * Serves MCP over stdio until the client closes the stream. Nothing else may write to stdout while this
 * runs (it carries JSON-RPC), so progress and errors go to stderr.
 */
export async function serveMcpStdio(graphmemix: Graphmemix): Promise<void> {
  const server = createMcpServer(graphmemix);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}

export interface McpHttpOptions {
  graphmemix: Graphmemix;
  apiKeys?: readonly string[];
  open?: boolean;
}

/**
 * MCP over streamable HTTP at `/mcp`, stateless: each request gets a fresh server and transport, so no
 * session state lives in the process and requests of different users never share one. Same key rules as
 * the REST API.
 */
export function createMcpHttpApp(options: McpHttpOptions): Hono {
  const keys = (options.apiKeys ?? []).filter((key) => key.trim() !== '');
  if (!options.open && keys.length === 0) {
    throw new GraphmemixError('CONFIG', 'API keys are required for MCP over HTTP unless started with --open');
  }
  const app = new Hono();
  app.onError((error, c) => errorResponse(c, error));
  app.notFound((c) => errorResponse(c, httpError('NOT_FOUND', `no route ${c.req.method} ${c.req.path}`)));
  if (!options.open) app.use('/mcp', apiKeyAuth(keys));
  app.all('/mcp', async (c) => {
    const server = createMcpServer(options.graphmemix);
    // No sessionIdGenerator: stateless mode.
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    return transport.handleRequest(c.req.raw);
  });
  return app;
}
