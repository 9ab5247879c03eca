/**
 * A real local HTTP server speaking the OpenAI wire format, for tests of anything that calls a model.
 *
 *   const server = await startFakeOpenAIServer();
 *   server.enqueue('chat', { type: 'json', value: { selected: [{ id: 'C00', score: 4 }] } });
 *   server.enqueue('chat', { type: 'error', status: 429, retryAfter: 1 });
 *   const chat = createOpenAICompatibleChat({ baseUrl: server.baseUrl, model: 'fake-model' });
 *   ... server.requests[0].body.messages ...
 *   await server.close();
 *
 * Routes: POST {baseUrl}/chat/completions ('chat') and POST {baseUrl}/embeddings ('embeddings'), where
 * baseUrl ends in /v1. Each request takes the next scripted reply of its route; when that queue is empty
 * the route's handler answers (setHandler / options.handlers). Without a handler, chat answers HTTP 400
 * "no scripted reply" (not retried, so a forgotten script fails fast) and embeddings answers deterministic
 * unit vectors derived from a hash of each input (`fakeEmbedding`).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeRoute = 'chat' | 'embeddings';

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** One scripted reply. `delayMs` (any kind) waits before answering: use it for slow replies / timeouts. */
export type FakeReply = (
  | /** Chat reply whose message content is JSON.stringify(value). */
  { type: 'json'; value: unknown; usage?: FakeUsage }
  /** Chat reply with this exact content: prose, malformed JSON, '' or null (a reply without content). */
  | { type: 'text'; content: string | null; usage?: FakeUsage }
  /** Embedding reply with these vectors (index = position unless `order` reorders the data array). */
  | { type: 'vectors'; vectors: number[][]; order?: number[]; usage?: FakeUsage }
  /** An HTTP error with an OpenAI-style error body; `retryAfter` sets the Retry-After header verbatim. */
  | { type: 'error'; status: number; retryAfter?: number | string; message?: string }
  /** Any status and JSON body, sent as is. */
  | { type: 'body'; status?: number; body: unknown; headers?: Record<string, string> }
  /** Destroy the socket without answering (a dropped connection). */
  | { type: 'drop' }
  /**
   * A 200 reply of `bytes` bytes streamed in chunks with back-pressure (never built in memory), stopping when
   * the client goes away; `sent.bytes` counts what was written. For reply-size caps.
   */
  | { type: 'huge'; bytes: number; sent?: { bytes: number }; contentLength?: boolean }
) & { delayMs?: number };

export interface FakeRequest {
  route: FakeRoute;
  path: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (or the raw text when it was not JSON). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary wire fields; typing them adds nothing.
  body: any;
}

export type FakeHandler = (request: FakeRequest) => FakeReply | Promise<FakeReply>;

export interface FakeOpenAIServerOptions {
  /** Handlers used when a route's queue is empty. */
  handlers?: Partial<Record<FakeRoute, FakeHandler>>;
  /** Dimension of the default embedding vectors (default 16). */
  embeddingDimensions?: number;
}

export interface FakeOpenAIServer {
  /** e.g. http://127.0.0.1:40123/v1 */
  baseUrl: string;
  /** Every request received, in arrival order (including ones answered with errors or drops). */
  requests: FakeRequest[];
  /** Requests being answered right now, and the most seen at once (for concurrency tests). */
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Append scripted replies to a route's queue; each request takes one. */
  enqueue(route: FakeRoute, ...replies: FakeReply[]): void;
  setHandler(route: FakeRoute, handler: FakeHandler | undefined): void;
  /** Requests received on one route. */
  requestsFor(route: FakeRoute): FakeRequest[];
  /** Forget queued replies, recorded requests and the in-flight peak (handlers stay). For beforeEach. */
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeOpenAIServer(
  options: FakeOpenAIServerOptions = {},
): Promise<FakeOpenAIServer> {
  const queues: Record<FakeRoute, FakeReply[]> = { chat: [], embeddings: [] };
  const handlers: Partial<Record<FakeRoute, FakeHandler>> = { ...options.handlers };
  const dimensions = options.embeddingDimensions ?? 16;
  const requests: FakeRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;

  const server = createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let done = false;
    const finish = (): void => {
      if (!done) {
        done = true;
        inFlight--;
      }
    };
    res.on('close', finish);
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        send(res, 500, { error: { message: `fake server failure: ${String(error)}` } });
      }
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = (req.url ?? '').split('?')[0] ?? '';
    const route = routeOf(path);
    if (req.method !== 'POST' || route === undefined) {
      send(res, 404, { error: { message: `fake server: no route ${req.method} ${path}` } });
      return;
    }
    const request: FakeRequest = { route, path, headers: req.headers, body: parseJson(raw) };
    requests.push(request);
    const reply = queues[route].shift() ?? (await defaultReply(request));
    if (reply.delayMs !== undefined && reply.delayMs > 0) {
      await waitOrClose(reply.delayMs, res);
      if (res.destroyed) return; // the client gave up (timeout/abort)
    }
    respond(res, request, reply);
  }

  function defaultReply(request: FakeRequest): FakeReply | Promise<FakeReply> {
    const handler = handlers[request.route];
    if (handler) return handler(request);
    if (request.route === 'embeddings') {
      const inputs: unknown[] = Array.isArray(request.body?.input)
        ? request.body.input
        : [request.body?.input];
      return { type: 'vectors', vectors: inputs.map((input) => fakeEmbedding(input, dimensions)) };
    }
    return { type: 'error', status: 400, message: 'fake-openai-server: no scripted reply for chat' };
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    enqueue(route, ...replies) {
      queues[route].push(...replies);
    },
    setHandler(route, handler) {
      if (handler) handlers[route] = handler;
      else delete handlers[route];
    },
    requestsFor(route) {
      return requests.filter((request) => request.route === route);
    },
    reset() {
      queues.chat.length = 0;
      queues.embeddings.length = 0;
      requests.length = 0;
      maxInFlight = inFlight;
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}

/** The default embedding of one input: a deterministic unit vector from sha256 of its JSON. */
export function fakeEmbedding(input: unknown, dimensions = 16): number[] {
  const vector: number[] = [];
  let counter = 0;
  while (vector.length < dimensions) {
    const digest = createHash('sha256')
      .update(`${counter++}:${JSON.stringify(input)}`)
      .digest();
    for (let i = 0; i + 1 < digest.length && vector.length < dimensions; i += 2) {
      vector.push((digest.readUInt16BE(i) / 65535) * 2 - 1);
    }
  }
  const norm = Math.hypot(...vector) || 1;
  // Rounded through Float32 so tests can compare with a client's Float32Array exactly.
  return vector.map((x) => Math.fround(x / norm));
}

function respond(res: ServerResponse, request: FakeRequest, reply: FakeReply): void {
  const model = typeof request.body?.model === 'string' ? request.body.model : 'fake-model';
  switch (reply.type) {
    case 'drop':
      res.socket?.destroy();
      return;
    case 'huge':
      void streamHuge(res, reply);
      return;
    case 'error': {
      const headers: Record<string, string> = {};
      if (reply.retryAfter !== undefined) headers['retry-after'] = String(reply.retryAfter);
      const message = reply.message ?? `fake error ${reply.status}`;
      send(res, reply.status, { error: { message, type: 'fake_error', code: reply.status } }, headers);
      return;
    }
    case 'body':
      send(res, reply.status ?? 200, reply.body, reply.headers);
      return;
    case 'vectors': {
      const data = reply.vectors.map((embedding, index) => ({ object: 'embedding', index, embedding }));
      const ordered = reply.order ? reply.order.map((i) => data[i]) : data;
      const count = Array.isArray(request.body?.input) ? request.body.input.length : 1;
      const usage = reply.usage ?? { prompt_tokens: count, completion_tokens: 0, total_tokens: count };
      send(res, 200, { object: 'list', model, data: ordered, usage });
      return;
    }
    case 'json':
    case 'text': {
      const content = reply.type === 'json' ? JSON.stringify(reply.value) : reply.content;
      const prompt = Math.ceil(JSON.stringify(request.body?.messages ?? '').length / 4);
      const completion = Math.ceil((content ?? '').length / 4);
      const usage = reply.usage ?? {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
      };
      send(res, 200, {
        id: `chatcmpl-fake-${Math.floor(Math.random() * 1e9)}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage,
      });
      return;
    }
  }
}

function routeOf(path: string): FakeRoute | undefined {
  if (path === '/v1/chat/completions') return 'chat';
  if (path === '/v1/embeddings') return 'embeddings';
  return undefined;
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

async function streamHuge(
  res: ServerResponse,
  reply: { bytes: number; sent?: { bytes: number }; contentLength?: boolean },
): Promise<void> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (reply.contentLength) headers['content-length'] = String(reply.bytes);
  res.writeHead(200, headers);
  const chunk = Buffer.alloc(64 * 1024, 'a');
  let left = reply.bytes;
  let closed = false;
  res.on('close', () => {
    closed = true;
  });
  while (left > 0 && !closed) {
    const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
    left -= piece.length;
    if (reply.sent) reply.sent.bytes += piece.length;
    if (!res.write(piece)) {
      await new Promise<void>((resolve) => {
        res.once('drain', resolve);
        res.once('close', resolve);
      });
    }
  }
  if (!closed) res.end();
}

/** Waits `ms`, returning early when the client closes the connection. */
function waitOrClose(ms: number, res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    res.on('close', done);
    function done(): void {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    }
  });
}
