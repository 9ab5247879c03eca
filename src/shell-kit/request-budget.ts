import type { MiddlewareHandler } from 'hono';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import { DEFAULT_MAX_BODY_BYTES } from './request-body-limit.ts';

declare module 'hono' {
  interface ContextVariableMap {
    /** Who sent the request, for per-caller bounds: a digest of its key, or 'local' in open mode. */
    caller: string;
  }
}

/** Bounds on what requests hold at once (src/shell-kit/request-budget.ts); defaults from the body limit. */
export interface RequestBudgetOptions {
  /** The largest accepted body (the reservation of a body whose length is not declared). */
  maxBodyBytes?: number;
  /** Body bytes of all requests in flight (default 16 bodies of the largest size: 256 MiB). */
  totalBytes?: number;
  /** Body bytes of one caller's requests in flight (default 4 bodies of the largest size: 64 MiB). */
  perCallerBytes?: number;
  /** Requests (other than GET / HEAD / OPTIONS) of one caller in flight (default 64). */
  perCallerRequests?: number;
  /**
   * Questions of one caller in progress, the viewer's GET included (default: half the read workers' capacity when there are several keys; applied by QuestionShare,
   * src/shell-kit/question-share.ts, on the question routes and MCP's question tools).
   */
  perCallerQuestions?: number;
  /**
   * Body bytes one caller may send per second, on average (default 16 MiB/s; bursts up to its byte share).
   * A body is read and parsed on the event loop before anything can refuse it (~45 ms per 14 MB), so a key
   * resending large bodies that are then refused kept the loop busy however few it had in flight.
   */
  perCallerBytesPerSecond?: number;
  /**
   * How many callers there can be (the keys; 1 in open mode). With one, the per-caller shares default to the
   * totals: they keep one key from crowding out others, and a lone key (a backend writing for its users) has
   * none to crowd out. Explicit per-caller values apply regardless.
   */
  callers?: number;
}

export const DEFAULT_CALLER_REQUESTS = 64;

/**
 * A key's average body rate by default: 16 MiB/s, several times what the writer stores (a 1 MB record took
 * ~0.4 s: ~2.5 MB/s of text), so only a client sending bodies faster than they can be stored (refused ones,
 * resent) meets it; at that rate parsing takes ~5% of the event loop (~45 ms per 14 MB).
 */
export const DEFAULT_CALLER_BYTES_PER_SECOND = 16 * 1024 * 1024;

const WITHOUT_BODY = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Admits a request with a body only while the bodies in flight stay within the budget, and refuses it
 * (BUSY, 503 + Retry-After) before any of it is read otherwise. A body lives in memory until its request
 * ends (parsed records wait in the write queue for their turn), so the per-request size limit alone let
 * one client hold any number of them: many concurrent uploads grew the process without bound. The
 * per-caller share keeps one key from taking the whole budget, or every slot of the write queue, from
 * the others. A body's reservation is its declared Content-Length, or the largest accepted size when it
 * is streamed without one (requestBodyLimit stops it there). Runs after the auth (the caller is known).
 */
export function requestBudget(options: RequestBudgetOptions = {}): MiddlewareHandler {
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const totalBytes = options.totalBytes ?? 16 * maxBody;
  const alone = options.callers !== undefined && options.callers <= 1;
  const perCallerBytes = options.perCallerBytes ?? (alone ? totalBytes : Math.min(4 * maxBody, totalBytes));
  const perCallerRequests =
    options.perCallerRequests ?? (alone ? Number.POSITIVE_INFINITY : DEFAULT_CALLER_REQUESTS);
  const rate = new BodyRate(
    options.perCallerBytesPerSecond ?? (alone ? Number.POSITIVE_INFINITY : DEFAULT_CALLER_BYTES_PER_SECOND),
    perCallerBytes,
  );
  let heldBytes = 0;
  const callers = new Map<string, { bytes: number; requests: number }>();
  return async (c, next) => {
    if (WITHOUT_BODY.has(c.req.method)) return next();
    const bytes = declaredBytes(c.req.header('content-length'), c.req.header('transfer-encoding'), maxBody);
    const caller = c.get('caller') ?? 'unknown';
    const held = callers.get(caller) ?? { bytes: 0, requests: 0 };
    const refusal =
      held.requests + 1 > perCallerRequests
        ? `this key has ${held.requests} requests in progress`
        : held.bytes + bytes > perCallerBytes
          ? `this key's requests in progress hold ${held.bytes} body bytes`
          : heldBytes + bytes > totalBytes
            ? `requests in progress hold ${heldBytes} body bytes`
            : undefined;
    if (refusal !== undefined) {
      throw new GraphmemixError('BUSY', `${refusal}; retry shortly`, { details: { retryAfterS: 1 } });
    }
    const wait = rate.take(caller, bytes);
    if (wait > 0) {
      throw new GraphmemixError(
        'BUSY',
        `this key is sending bodies faster than its rate; retry in ${wait} s`,
        {
          details: { retryAfterS: wait },
        },
      );
    }
    held.bytes += bytes;
    held.requests += 1;
    heldBytes += bytes;
    callers.set(caller, held);
    try {
      await next();
    } finally {
      held.bytes -= bytes;
      held.requests -= 1;
      heldBytes -= bytes;
      // One entry per caller with a request in flight: the map never outgrows the callers active now.
      if (held.requests === 0) callers.delete(caller);
    }
  };
}

/** A body's reservation: its declared length, the largest size when streamed without one, else none. */
function declaredBytes(length: string | undefined, encoding: string | undefined, maxBody: number): number {
  if (length !== undefined && /^\d+$/.test(length.trim())) return Math.min(Number(length.trim()), maxBody);
  return encoding === undefined ? 0 : maxBody;
}

/**
 * Each caller's body bytes per second, as a token bucket: `burst` bytes at once (its byte share, so whatever it
 * may have in flight it may also send at once), refilled at `perSecond`. One entry per caller that sent a body
 * (callers are keys: a bounded set).
 */
export class BodyRate {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Takes `bytes` of the caller's rate: 0 when taken, else the whole seconds until they would be. */
  take(caller: string, bytes: number): number {
    if (!Number.isFinite(this.perSecond) || bytes === 0) return 0;
    const now = this.now();
    const bucket = this.buckets.get(caller) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    this.buckets.set(caller, bucket);
    // A body larger than the burst can never fit the bucket: it is admitted once the bucket is full.
    const need = Math.min(bytes, this.burst);
    if (bucket.tokens < need) return Math.max(1, Math.ceil((need - bucket.tokens) / this.perSecond));
    bucket.tokens -= bytes;
    return 0;
  }
}
