import { GraphmemixError } from '../errors/index.ts';

/** Connection settings shared by the OpenAI-compatible chat and embedding clients. */
export interface OpenAIEndpointConfig {
  /** e.g. http://localhost:8000/v1 (vLLM), http://localhost:11434/v1 (Ollama), https://api.openai.com/v1 */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Per-call limit, covering the whole request and reading the body (default 180 s: long verifier replies). */
  timeoutMs?: number;
  /** Largest reply body read, in bytes (default DEFAULT_MAX_REPLY_BYTES); a longer one is refused unread. */
  maxReplyBytes?: number;
  headers?: Record<string, string>;
  /** Injected for tests and proxies; defaults to the global (undici) fetch. */
  fetch?: typeof fetch;
}

export const DEFAULT_TIMEOUT_MS = 180_000;

/**
 * 8 MiB: far above any chat or embedding reply graphmemix asks for (1,000-token answers, a few thousand
 * floats per vector batch), far below what would hurt a server holding several replies at once.
 */
export const DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024;

/**
 * POSTs a JSON body to `{baseUrl}{path}` and returns the parsed JSON reply. Every endpoint fault becomes a
 * GraphmemixError with `details.retryable`, which the retry wrapper and structured calls branch on:
 * - MODEL_UNAVAILABLE, retryable: network error, dropped connection, timeout, HTTP 408, 429, 5xx
 *   (details.status, details.retryAfterMs from Retry-After);
 * - MODEL_UNAVAILABLE, not retryable: other HTTP statuses (400, 401, 404, ...) and the caller's abort;
 * - MODEL_OUTPUT, not retryable: a 2xx reply whose body is not JSON; a body over `maxReplyBytes`
 *   (details.reason 'reply_too_large'), refused as soon as the stream passes the cap, never buffered whole.
 */
export async function postOpenAIJson(
  config: OpenAIEndpointConfig,
  path: string,
  body: unknown,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  const url = `${config.baseUrl.replace(/\/+$/, '')}${path}`;
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxReplyBytes = config.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const headers: Record<string, string> = { 'content-type': 'application/json', ...config.headers };
  if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`;
  const details = { url, model: config.model };
  const doFetch = config.fetch ?? fetch;

  let status: number;
  let text: string;
  let retryAfterHeader: string | null;
  try {
    const response = await doFetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: combined,
    });
    status = response.status;
    retryAfterHeader = response.headers.get('retry-after');
    text = await readCapped(response, maxReplyBytes, details);
  } catch (error) {
    if (error instanceof GraphmemixError) throw error;
    if (signal?.aborted) {
      throw new GraphmemixError('MODEL_UNAVAILABLE', `model call aborted (${config.model})`, {
        details: { ...details, reason: 'aborted', retryable: false },
        cause: error,
      });
    }
    const timedOut = timeout.aborted;
    throw new GraphmemixError(
      'MODEL_UNAVAILABLE',
      timedOut
        ? `model call timed out after ${timeoutMs} ms (${config.model} at ${url})`
        : `model endpoint unreachable (${config.model} at ${url}): ${describe(error)}`,
      { details: { ...details, reason: timedOut ? 'timeout' : 'network', retryable: true }, cause: error },
    );
  }

  if (status < 200 || status >= 300) {
    const retryable = status === 408 || status === 429 || status >= 500;
    const retryAfterMs = parseRetryAfter(retryAfterHeader);
    throw new GraphmemixError(
      'MODEL_UNAVAILABLE',
      `model endpoint answered HTTP ${status} (${config.model} at ${url}): ${errorMessage(text)}`,
      {
        details: {
          ...details,
          reason: 'http',
          status,
          retryable,
          ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        },
      },
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new GraphmemixError('MODEL_OUTPUT', `model endpoint sent a body that is not JSON (${url})`, {
      details: { ...details, status, retryable: false, bodyStart: text.slice(0, 200) },
      cause: error,
    });
  }
}

/** Reads the body as a stream, cancelling it (and refusing the reply) once it passes `maxBytes`. */
async function readCapped(
  response: Response,
  maxBytes: number,
  details: { url: string; model: string },
): Promise<string> {
  const tooLarge = (bytes: number): GraphmemixError =>
    new GraphmemixError(
      'MODEL_OUTPUT',
      `model reply is over ${maxBytes} bytes (${details.model} at ${details.url}); refused`,
      {
        details: { ...details, reason: 'reply_too_large', maxReplyBytes: maxBytes, bytes, retryable: false },
      },
    );
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge(declared);
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(total);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function errorMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string };
    if (typeof parsed.error === 'string') return parsed.error;
    if (typeof parsed.error?.message === 'string') return parsed.error.message;
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.slice(0, 200);
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
