import { Worker } from 'node:worker_threads';
import type { ErrorCode } from '../errors/error-codes.ts';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import {
  CLOSE_STOPPING_BACKGROUND,
  type WriteMethod,
  type WriteReply,
  type WriteRequest,
  type WriteWorkerData,
} from './write-worker-protocol.ts';

/**
 * The main-thread side of the write worker: a worker thread that owns the archive's write connection, so a
 * 10k-memory import or a relation update never blocks the event loop that serves questions and health
 * checks (SQLite WAL lets this thread keep reading while the worker writes). Calls are queued in the worker
 * and answered in order; a GraphmemixError keeps its code and location across the thread boundary.
 */
export class WriteWorkerClient {
  private readonly worker: Worker;
  private readonly ready: Promise<void>;
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

  constructor(data: WriteWorkerData) {
    // From TypeScript sources the worker needs tsx's loader in its own thread (the .mjs entry registers
    // it); a compiled build has a .js sibling that loads directly.
    const fromSources = import.meta.url.endsWith('.ts');
    const entry = new URL(
      fromSources ? './write-worker-tsx-entry.mjs' : './write-worker-main.js',
      import.meta.url,
    );
    // No inherited flags: under `tsx` the parent's execArgv carries tsx's loader, and registering it twice in
    // one thread hangs module loading; the .mjs entry registers it once.
    this.worker = new Worker(entry, { workerData: data, execArgv: [] });
    let markReady: () => void = () => {};
    let markFailed: (error: unknown) => void = () => {};
    this.ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      markFailed = reject;
    });
    this.worker.on('message', (reply: WriteReply) => {
      if (reply.id === 0) {
        markReady();
        // Idle, the worker must not keep a CLI process alive on its own (ref'd again per call).
        if (this.pending.size === 0) this.worker.unref();
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
    const fail = (error: Error) => {
      this.failure = error;
      markFailed(error);
      for (const call of this.pending.values()) call.reject(error);
      this.pending.clear();
    };
    this.worker.on('error', (error) => fail(storeError(`write worker failed: ${error.message}`, error)));
    this.worker.on('exit', (code) => {
      if (code !== 0) fail(storeError(`write worker exited with code ${code}`));
      else fail(storeError('write worker is closed'));
    });
  }

  /** Resolves once the worker has opened the archive (a bad path rejects here). */
  async started(): Promise<void> {
    await this.ready;
  }

  async call<T>(method: WriteMethod, args: unknown[], onProgress?: (items: number) => void): Promise<T> {
    await this.ready;
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
    try {
      await this.ready;
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
