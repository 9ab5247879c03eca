import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { ResolvedModelConfig } from '../providers/model-config.ts';
import { mediaAccessPolicy } from '../providers/to-image-url.ts';
import { workerExecArgv } from '../store/worker-exec-argv.ts';
import type { ReadMethod, ReadReply, ReadRequest, ReadWorkerData } from './read-worker-protocol.ts';
import { fromWireError } from './wire-error.ts';

export interface ReadWorkerPoolOptions {
  db: string;
  /** Worker threads (default: one per core but one; at least 1, at most 8). */
  size?: number;
  /**
   * Calls one worker runs at once (default 8, the default per-endpoint model concurrency): model-backed
   * questions mostly wait on the network, so a worker interleaves several.
   */
  concurrency?: number;
  /** Calls waiting for a worker before new ones are refused with BUSY (default 64). */
  maxQueue?: number;
  modelConfig?: ResolvedModelConfig;
  /** Scalar archive options the workers open with (see ReadWorkerData.openOptions). */
  openOptions?: Record<string, string | number | boolean>;
  /** The worker script (tests run a scripted one); default: the real read worker. */
  entry?: URL;
}

export interface ReadPoolStats {
  size: number;
  ready: number;
  running: number;
  queued: number;
  /** Workers replaced after a crash since the pool started. */
  replaced: number;
}

interface Call {
  id: number;
  /** Whose call (RetrieveOptions.lane): waiting calls of different lanes take turns. */
  lane: string;
  method: ReadMethod;
  args: unknown[];
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** Settled already (aborted): the worker's late reply is dropped; the call holds its slot until then. */
  settled: boolean;
  detach: () => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  dead: boolean;
  calls: Map<number, Call>;
  lastPolicy?: string;
}

export const DEFAULT_READ_CONCURRENCY = 8;
export const DEFAULT_READ_QUEUE = 64;
/** How long close() lets a worker finish before terminating it. */
const CLOSE_GRACE_MS = 5_000;
/** A worker that dies before it is ready this many times in a row fails the pool (no respawn loop). */
const MAX_START_FAILURES = 3;

/** Default pool ceiling: each worker holds its own connection and index caches (memory grows per worker). */
export const MAX_DEFAULT_READ_WORKERS = 8;

/** One worker per core but one (the event loop's), at least 1, at most MAX_DEFAULT_READ_WORKERS. */
export function defaultReadWorkers(): number {
  return Math.min(MAX_DEFAULT_READ_WORKERS, Math.max(1, availableParallelism() - 1));
}

/** The pool size for a requested one (absent: the default; at least 1). */
export function resolvePoolSize(size: number | undefined): number {
  return Math.max(1, Math.floor(size ?? defaultReadWorkers()));
}

/**
 * Read worker threads for questions (retrieve, answer, search), each with its own read-only connection to
 * the same SQLite file (WAL: readers never wait for the writer). A bounded queue gives backpressure: when it
 * is full a call fails at once with BUSY (HTTP 503 + Retry-After) instead of piling up until connections
 * reset. An AbortSignal drops a queued call, or posts an abort to the worker running it. A crashed worker
 * fails only its own in-flight calls (INTERNAL) and is replaced.
 */
export class ReadWorkerPool {
  readonly size: number;
  private readonly concurrency: number;
  private readonly maxQueue: number;
  private readonly data: Omit<ReadWorkerData, 'mediaPolicy'>;
  private readonly entry: URL;
  private readonly slots: Slot[] = [];
  /** Waiting calls by lane, in arrival order; lanes iterate in the order they take their turn. */
  private readonly lanes = new Map<string, Call[]>();
  private queued = 0;
  private nextId = 1;
  private closed = false;
  private failure: Error | undefined;
  private startFailures = 0;
  private replaced = 0;
  private readonly firstReady: Promise<void>;
  private markStarted: () => void = () => {};
  private markStartFailed: (error: Error) => void = () => {};

  /** Questions it takes at once before refusing: each worker's running calls plus the queue. */
  get capacity(): number {
    return this.size * this.concurrency + this.maxQueue;
  }

  constructor(options: ReadWorkerPoolOptions) {
    this.size = resolvePoolSize(options.size);
    this.concurrency = Math.max(1, Math.floor(options.concurrency ?? DEFAULT_READ_CONCURRENCY));
    this.maxQueue = Math.max(0, Math.floor(options.maxQueue ?? DEFAULT_READ_QUEUE));
    this.data = {
      db: options.db,
      ...(options.modelConfig === undefined ? {} : { modelConfig: options.modelConfig }),
      ...(options.openOptions === undefined ? {} : { openOptions: options.openOptions }),
    };
    // From TypeScript sources the worker needs tsx's loader in its own thread (the .mjs entry registers it).
    this.entry =
      options.entry ??
      new URL(
        import.meta.url.endsWith('.ts') ? './read-worker-tsx-entry.mjs' : './read-worker-main.js',
        import.meta.url,
      );
    this.firstReady = new Promise<void>((resolve, reject) => {
      this.markStarted = resolve;
      this.markStartFailed = reject;
    });
    // Observed through started(); a pool nobody awaits must not raise an unhandled rejection.
    this.firstReady.catch(() => {});
    for (let i = 0; i < this.size; i++) this.spawn();
  }

  /** Resolves once every worker has opened the archive; rejects if they cannot (bad file, bad config). */
  async started(): Promise<void> {
    await this.firstReady;
  }

  stats(): ReadPoolStats {
    let running = 0;
    for (const slot of this.slots) running += slot.calls.size;
    return {
      size: this.size,
      ready: this.slots.filter((slot) => slot.ready).length,
      running,
      queued: this.queued,
      replaced: this.replaced,
    };
  }

  /**
   * Runs one question method in a worker. `args` must be structured-cloneable (no signal inside). Waiting
   * calls are handed out one lane at a time, round robin (`lane`: who asks, e.g. an API key's name), so a
   * caller with many questions queued delays another's by one turn, not by everything it queued.
   */
  run<T>(method: ReadMethod, args: unknown[], signal?: AbortSignal, lane = ''): Promise<T> {
    if (this.closed) return Promise.reject(storeError('the read workers are closed'));
    if (this.failure) return Promise.reject(this.failure);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<T>((resolve, reject) => {
      const call: Call = {
        id: this.nextId++,
        lane,
        method,
        args,
        resolve: resolve as (value: unknown) => void,
        reject,
        settled: false,
        detach: () => {},
      };
      // A free worker takes the call at once only when nobody waits (else it would jump the lanes' turns).
      if (this.queued > 0 || !this.dispatch(call)) {
        if (this.queued >= this.maxQueue) {
          reject(
            new GraphmemixError('BUSY', 'too many questions in progress; retry shortly', {
              details: { retryAfterS: 1, queued: this.queued },
            }),
          );
          return;
        }
        this.enqueue(call);
        this.pump();
      }
      if (signal) {
        const onAbort = () => this.abort(call, signal);
        signal.addEventListener('abort', onAbort, { once: true });
        call.detach = () => signal.removeEventListener('abort', onAbort);
      }
    });
  }

  /** Rejects what waits, stops the workers (they abort what runs) and waits for their threads to end. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const call of this.drainQueue()) settle(call, storeError('the read workers are closed'));
    await Promise.all(
      this.slots.map((slot) => {
        for (const call of slot.calls.values()) settle(call, storeError('the read workers are closed'));
        if (slot.dead) return undefined;
        const exited = new Promise<void>((resolve) => slot.worker.once('exit', () => resolve()));
        slot.worker.ref();
        if (!slot.ready) void slot.worker.terminate();
        else {
          slot.worker.postMessage({ type: 'close' } satisfies ReadRequest);
          // A question that ignores its abort (or a socket held open) must not keep close() waiting.
          const force = setTimeout(() => void slot.worker.terminate(), CLOSE_GRACE_MS);
          void exited.then(() => clearTimeout(force));
        }
        return exited;
      }),
    );
  }

  private spawn(): void {
    // No inherited flags (workerExecArgv): the .mjs entry registers tsx's loader once.
    const worker = new Worker(this.entry, {
      workerData: { ...this.data, mediaPolicy: mediaAccessPolicy() } satisfies ReadWorkerData,
      execArgv: workerExecArgv(),
    });
    const slot: Slot = { worker, ready: false, dead: false, calls: new Map() };
    this.slots.push(slot);
    worker.on('message', (reply: ReadReply) => this.onReply(slot, reply));
    worker.on('error', (error) => this.onDeath(slot, `read worker failed: ${error.message}`));
    worker.on('exit', (code) => this.onDeath(slot, `read worker exited with code ${code}`));
  }

  private onReply(slot: Slot, reply: ReadReply): void {
    if (reply.id === 0) {
      slot.ready = true;
      this.startFailures = 0;
      if (this.slots.every((s) => s.ready)) this.markStarted();
      this.idle(slot);
      this.pump();
      return;
    }
    const call = slot.calls.get(reply.id);
    if (!call) return;
    slot.calls.delete(reply.id);
    if (reply.type === 'result') {
      if (!call.settled) {
        call.settled = true;
        call.detach();
        call.resolve(reply.value);
      }
    } else settle(call, fromWireError(reply.error));
    this.idle(slot);
    this.pump();
  }

  private onDeath(slot: Slot, why: string): void {
    if (slot.dead) return;
    slot.dead = true;
    this.slots.splice(this.slots.indexOf(slot), 1);
    if (this.closed) return;
    const error = new GraphmemixError('INTERNAL', `${why}; its questions were not answered`);
    for (const call of slot.calls.values()) settle(call, error);
    slot.calls.clear();
    if (!slot.ready && ++this.startFailures >= MAX_START_FAILURES) {
      // It cannot even open the archive: fail loudly instead of respawning forever.
      this.failure = storeError(`read workers cannot start: ${why}`);
      this.markStartFailed(this.failure);
      for (const call of this.drainQueue()) settle(call, this.failure);
      return;
    }
    this.replaced++;
    this.spawn();
  }

  private enqueue(call: Call): void {
    const waiting = this.lanes.get(call.lane);
    if (waiting) waiting.push(call);
    else this.lanes.set(call.lane, [call]);
    this.queued++;
  }

  /** Hands queued calls to workers with room: the first lane's oldest call, then that lane goes last. */
  private pump(): void {
    for (const [lane, waiting] of this.lanes) {
      const call = waiting[0]!;
      if (!this.dispatch(call)) return;
      waiting.shift();
      this.queued--;
      // Map iteration visits a key re-set during it again, after the others: the lane's next turn.
      this.lanes.delete(lane);
      if (waiting.length > 0) this.lanes.set(lane, waiting);
    }
  }

  private drainQueue(): Call[] {
    const calls = [...this.lanes.values()].flat();
    this.lanes.clear();
    this.queued = 0;
    return calls;
  }

  private dispatch(call: Call): boolean {
    let best: Slot | undefined;
    for (const slot of this.slots) {
      if (!slot.ready || slot.dead || slot.calls.size >= this.concurrency) continue;
      if (!best || slot.calls.size < best.calls.size) best = slot;
    }
    if (!best) return false;
    best.calls.set(call.id, call);
    // Roots allowed in this thread since the worker started (a server's upload folder) must reach it too.
    const policy = mediaAccessPolicy();
    const policyKey = JSON.stringify(policy);
    const request: ReadRequest = {
      type: 'call',
      id: call.id,
      method: call.method,
      args: call.args,
      ...(policyKey === best.lastPolicy ? {} : { mediaPolicy: policy }),
    };
    // Keep the process alive while a question is in flight; idle workers never hold a CLI open.
    best.worker.ref();
    try {
      best.worker.postMessage(request);
    } catch (error) {
      // Arguments that cannot be cloned (too deep, functions) fail this call only, never the worker.
      best.calls.delete(call.id);
      if (best.calls.size === 0) best.worker.unref();
      settle(call, uncloneable(error));
      return true;
    }
    best.lastPolicy = policyKey;
    return true;
  }

  private abort(call: Call, signal: AbortSignal): void {
    if (call.settled) return;
    const waiting = this.lanes.get(call.lane);
    const queued = waiting?.indexOf(call) ?? -1;
    if (queued >= 0) {
      waiting!.splice(queued, 1);
      this.queued--;
      if (waiting!.length === 0) this.lanes.delete(call.lane);
    } else {
      const slot = this.slots.find((s) => s.calls.has(call.id));
      const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason);
      slot?.worker.postMessage({ type: 'abort', id: call.id, reason } satisfies ReadRequest);
    }
    settle(call, abortReason(signal));
  }

  private idle(slot: Slot): void {
    if (slot.calls.size === 0) slot.worker.unref();
  }
}

function settle(call: Call, error: unknown): void {
  if (call.settled) return;
  call.settled = true;
  call.detach();
  call.reject(error);
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason instanceof Error
    ? signal.reason
    : new DOMException(String(signal.reason ?? 'aborted'), 'AbortError');
}

function storeError(message: string): GraphmemixError {
  return new GraphmemixError('STORE', message);
}

function uncloneable(error: unknown): GraphmemixError {
  return new GraphmemixError(
    'INVALID_INPUT',
    `the call's arguments cannot be passed to a worker: ${(error as Error).message}`,
    { cause: error },
  );
}
