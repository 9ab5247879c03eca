import { Worker } from 'node:worker_threads';
import type { ErrorCode } from '../errors/error-codes.ts';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import { workerExecArgv } from '../store/worker-exec-argv.ts';
import {
  CLOSE_STOPPING_BACKGROUND,
  type WriteMethod,
  type WriteReply,
  type WriteRequest,
  type WriteWorkerData,
} from './write-worker-protocol.ts';

/**
 * Deaths in a row of replacement write workers that never became ready after which the client gives up (no
 * respawn loop: a worker that cannot open the archive will not open it the next time either).
 */
export const WRITE_WORKER_EARLY_DEATHS = 3;

/**
 * The main-thread side of the write worker: a worker thread that owns the archive's write connection, so a
 * 10k-memory import or a relation update never blocks the event loop that serves questions and health
 * checks (SQLite WAL lets this thread keep reading while the worker writes). Calls are queued in the worker
 * and answered in order; a GraphmemixError keeps its code and location across the thread boundary.
 *
 * A worker that dies while running (an uncaught error in it) fails only the calls in flight (STORE; a write's
 * transaction either committed or rolled back, and writes are idempotent by id, so the caller may send it
 * again) and is replaced by a new one, which opens the archive and finds the work a stopped writer leaves
 * (drain backlogs, pending media, forgets when the facade resumes them), as a restarted server would. Before,
 * every later write of the process failed with "write worker exited" while reads went on.
 */
export class WriteWorkerClient {
  private worker!: Worker;
  /** The current worker's start: replaced when a worker is replaced. */
  private ready!: Promise<void>;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    {
      resolve: (value: unknown) => void;
      reject: (error: unknown) => void;
      onProgress?: (items: number) => void;
    }
  >();
  private failure: Error | undefined;
  private closing = false;
  /** Workers that never became ready, in a row (after one that did). */
  private earlyDeaths = 0;
  private everReady = false;
  /** Workers started because a running one died, since the client started. */
  replaced = 0;

  constructor(private readonly data: WriteWorkerData) {
    this.spawn();
  }

  private spawn(): void {
    // From TypeScript sources the worker needs tsx's loader in its own thread (the .mjs entry registers
    // it); a compiled build has a .js sibling that loads directly.
    const fromSources = import.meta.url.endsWith('.ts');
    const entry = new URL(
      fromSources ? './write-worker-tsx-entry.mjs' : './write-worker-main.js',
      import.meta.url,
    );
    // No inherited flags (workerExecArgv): the .mjs entry registers tsx's loader once.
    const worker = new Worker(entry, { workerData: this.data, execArgv: workerExecArgv() });
    this.worker = worker;
    let becameReady = false;
    let markReady: () => void = () => {};
    let markFailed: (error: unknown) => void = () => {};
    this.ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      markFailed = reject;
    });
    // Nobody may be waiting for this start (a replacement): its failure is read through call() and started().
    this.ready.catch(() => undefined);
    worker.on('message', (reply: WriteReply) => {
      if (reply.id === 0) {
        becameReady = true;
        this.everReady = true;
        this.earlyDeaths = 0;
        markReady();
        // Idle, the worker must not keep a CLI process alive on its own (ref'd again per call).
        if (this.pending.size === 0) worker.unref();
        return;
      }
      const call = this.pending.get(reply.id);
      if (!call) return;
      if (reply.type === 'progress') {
        call.onProgress?.(reply.items);
        return;
      }
      this.pending.delete(reply.id);
      if (reply.type === 'result') call.resolve(reply.value);
      else call.reject(toError(reply.error));
    });
    let died = false;
    const die = (error: Error) => {
      // 'error' is followed by 'exit': one death.
      if (died) return;
      died = true;
      for (const call of this.pending.values()) call.reject(error);
      this.pending.clear();
      if (this.closing) {
        this.failure = error;
        markFailed(error);
        return;
      }
      // The first worker failing to start is the archive failing to open (a bad path): no second try.
      if (!becameReady && (!this.everReady || ++this.earlyDeaths >= WRITE_WORKER_EARLY_DEATHS)) {
        this.failure = error;
        markFailed(error);
        return;
      }
      if (becameReady) this.replaced += 1;
      this.spawn();
      markFailed(error);
    };
    worker.on('error', (error) => die(storeError(`write worker failed: ${error.message}`, error)));
    worker.on('exit', (code) => {
      if (code !== 0 || !this.closing) die(storeError(`write worker exited with code ${code}`));
      else die(storeError('write worker is closed'));
    });
  }

  /** Resolves once the worker has opened the archive (a bad path rejects here). */
  async started(): Promise<void> {
    await this.currentStart();
  }

  /** Waits for the current worker's start, following replacements; throws once the client has failed. */
  private async currentStart(): Promise<void> {
    for (;;) {
      const ready = this.ready;
      try {
        await ready;
        return;
      } catch (error) {
        if (this.failure !== undefined || this.ready === ready) throw this.failure ?? error;
      }
    }
  }

  async call<T>(method: WriteMethod, args: unknown[], onProgress?: (items: number) => void): Promise<T> {
    await this.currentStart();
    if (this.failure) throw this.failure;
    const id = this.nextId++;
    const request: WriteRequest = { id, method, args };
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, {
        resolve: resolve as (value: unknown) => void,
        reject,
        ...(onProgress === undefined ? {} : { onProgress }),
      });
      // Keep the process alive while a write is in flight.
      this.worker.ref();
      try {
        this.worker.postMessage(request);
      } catch (error) {
        // Arguments that cannot be cloned fail this call only: nothing was sent, nothing may stay pending.
        this.pending.delete(id);
        reject(
          new GraphmemixError(
            'INVALID_INPUT',
            `the write cannot be passed to the write worker: ${(error as Error).message}`,
            { cause: error },
          ),
        );
      }
    }).finally(() => {
      if (this.pending.size === 0) this.worker.unref();
    });
  }

  /**
   * Finishes queued writes, closes the worker's connection and ends the thread. `background`: what the
   * worker's facade does with its background work under way (Graphmemix.close).
   */
  async close(background: 'finish' | 'stop' = 'finish'): Promise<void> {
    if (this.failure) return;
    // From here a worker that dies is not replaced.
    this.closing = true;
    try {
      await this.currentStart();
    } catch {
      return;
    }
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.ref();
    this.worker.postMessage(background === 'stop' ? CLOSE_STOPPING_BACKGROUND : 'close');
    await exited;
  }
}

function toError(error: {
  name: string;
  message: string;
  code?: string;
  location?: unknown;
  details?: unknown;
}): Error {
  if (error.code === undefined) return new Error(error.message);
  const rebuilt = new GraphmemixError(error.code as ErrorCode, error.message, {
    ...(error.details === undefined ? {} : { details: error.details as Record<string, unknown> }),
  });
  // The message already carries the location prefix; keep the structured location too.
  Object.assign(rebuilt, { location: error.location ?? {}, message: error.message });
  return rebuilt;
}

function storeError(message: string, cause?: unknown): GraphmemixError {
  return new GraphmemixError('STORE', message, cause === undefined ? {} : { cause });
}
