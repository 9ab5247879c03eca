/** An app that answers fetch-style requests (Hono's `app.request`): the MCP HTTP app in tests. */
interface RequestApp {
  request(input: string, init: RequestInit): Response | Promise<Response>;
}

/** One JSON-RPC tools/call posted to an MCP HTTP app with bearer `key`. */
export function postToolCall(
  app: RequestApp,
  key: string,
  name: string,
  args: Record<string, unknown>,
): Promise<Response> {
  return Promise.resolve(
    app.request('http://local/mcp', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name, arguments: args },
      }),
    }),
  );
}
