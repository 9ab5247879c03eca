/**
 * Entry of the write worker thread: owns one write connection to the archive and runs the public API's write
 * methods one at a time, in arrival order (one at a time per user where the store lets users' writes run side
 * by side: PostgreSQL), so digest work (parsing, views, relations) never runs on the event loop that answers
 * reads. See write-worker-client.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { DEFAULT_CONTEXT_ID } from '../digest/ingest-stages.ts';
import { isGraphmemixError } from '../errors/graphmemix-error.ts';
import { openGraphmemix } from '../graphmemix.ts';
import { WriteLanes } from '../graphmemix-write-lanes.ts';
import { createModels } from '../providers/create-models.ts';
import { allowMediaRoot, allowRemoteMedia, setMediaLimits } from '../providers/to-image-url.ts';
import {
  CLOSE_STOPPING_BACKGROUND,
  type WriteReply,
  type WriteRequest,
  type WriteWorkerData,
} from './write-worker-protocol.ts';

const data = workerData as WriteWorkerData;
const port = parentPort!;
for (const root of data.mediaPolicy.roots) allowMediaRoot(root);
allowRemoteMedia(data.mediaPolicy.remotePrefixes);
setMediaLimits({ maxFileBytes: data.mediaPolicy.maxFileBytes });
/** Aborted when the close that stops background work arrives, before the writes queued ahead of it end. */
const stopCompactions = new AbortController();
const gm = await openGraphmemix({
  stopCompactions: stopCompactions.signal,
  db: data.db,
  ...(data.modelConfig === undefined ? {} : { models: createModels(data.modelConfig) }),
  ...(data.ocr === undefined ? {} : { ocr: data.ocr }),
  ...(data.mediaDir === undefined ? {} : { mediaDir: data.mediaDir }),
  ...(data.mediaDigest === undefined ? {} : { mediaDigest: data.mediaDigest }),
  ...(data.compaction === undefined ? {} : { compaction: data.compaction }),
  ...(data.semanticUpdates === undefined ? {} : { semanticUpdates: data.semanticUpdates }),
  ...(data.resumeForgets === undefined ? {} : { resumeForgets: data.resumeForgets }),
  ...(data.recoverRelations === undefined ? {} : { recoverRelations: data.recoverRelations }),
  // The calling thread's facade bounds the writes it sends here.
  maxPendingWrites: Number.POSITIVE_INFINITY,
});

/**
 * Requests in arrival order per user; a request naming no user (close, an import whose file names its users,
 * waiting for media) after all before it. The library's queue decides what runs (one write at a time on
 * SQLite, users taking turns): holding a user's request here until the one before it (of any user) had ended
 * made a small write wait for another user's whole backlog.
 */
// No slot bound here: a request's turn may wait for its user's import, and the library's queue bounds the
// writes that run (PARALLEL_WRITE_LANES, or 1).
const lanes = new WriteLanes(true, Number.POSITIVE_INFINITY);
/**
 * Forgets and imports into one user still running their pieces after their lane went on (close waits for
 * them, as it did before).
 */
const pieced = new Set<Promise<void>>();
/** Imports into one user running in pieces, per user. */
const importing = new Map<string, number>();
port.on('message', (request: WriteRequest | 'close' | typeof CLOSE_STOPPING_BACKGROUND) => {
  if (request === 'close' || request === CLOSE_STOPPING_BACKGROUND) {
    // At once: a user's writes queued ahead of the close may be held by its compaction, each waiting for
    // the run's replay (minutes for a flooded user).
    if (request === CLOSE_STOPPING_BACKGROUND) stopCompactions.abort();
    void lanes.run(undefined, async () => {
      await Promise.all(pieced);
      await gm.close({ background: request === 'close' ? 'finish' : 'stop' });
      port.close();
    });
    return;
  }
  // Serialised per lane: one write at a time, like a single writer connection. A forget holds its lane only until
  // it has begun (writes to its context refused): its steps go through the library's write queue, so the writes
  // that arrive meanwhile run between them instead of after the whole forget. A forget of a user whose import
  // is running waits for that import (possibly long) before it begins; the lane goes on at once then: the
  // user's later writes already queue behind the forget in the library (WriteQueue.forContext, in call order),
  // and other users' writes need not wait for that user's import.
  if (request.method === 'forgetContext') {
    const contextId = request.args[0] as string;
    void lanes.run(
      laneOf(request),
      () =>
        new Promise<void>((started) => {
          const done = run(request, started).finally(() => {
            pieced.delete(done);
            started();
          });
          pieced.add(done);
          if (importing.has(contextId)) started();
        }),
    );
    return;
  }
  // An import into one user holds that user from its call on (the library's WriteQueue) and queues its batches
  // one by one, so the requests after it go on at once: other users' writes run between its batches, that
  // user's wait for it.
  if (
    request.method === 'ingest' &&
    (request.args[1] as { contextId?: string } | undefined)?.contextId !== undefined
  ) {
    const contextId = (request.args[1] as { contextId: string }).contextId;
    void lanes.run(laneOf(request), async () => {
      importing.set(contextId, (importing.get(contextId) ?? 0) + 1);
      const done = run(request).finally(() => {
        pieced.delete(done);
        const left = importing.get(contextId)! - 1;
        if (left === 0) importing.delete(contextId);
        else importing.set(contextId, left);
      });
      pieced.add(done);
    });
    return;
  }
  // Waiting for the automatic compactions is no write: it would hold every write behind it, the very writes
  // the compaction's steps let through.
  if (request.method === 'waitForCompactions') {
    const done = run(request).finally(() => pieced.delete(done));
    pieced.add(done);
    return;
  }
  void lanes.run(laneOf(request), async () => {
    // A write to a user whose import runs in pieces waits for that import in the library's queue, where it takes
    // its place in call order at once (QUEUED_AT_CALL): its lane goes on, so the requests behind it (other
    // users' in the one line of a single-writer store) need not wait for the whole import.
    const contextId = laneOf(request);
    if (contextId !== undefined && importing.has(contextId) && QUEUED_AT_CALL.has(request.method)) {
      const done = run(request).finally(() => pieced.delete(done));
      pieced.add(done);
      const before = letGo.get(contextId);
      const all = before === undefined ? done : Promise.all([before, done]).then(() => undefined);
      letGo.set(contextId, all);
      void all.then(() => {
        if (letGo.get(contextId) === all) letGo.delete(contextId);
      });
      return;
    }
    // Any other request of that user (an update reads the memory first) starts after those let go before it.
    if (contextId !== undefined) await letGo.get(contextId);
    await run(request);
  });
});

/** Per user: the writes let go before their end (above) and not finished yet. */
const letGo = new Map<string, Promise<void>>();

/**
 * Methods that take their place in the library's write queue when called (WriteQueue.forContext, before any
 * await): the order of two such calls is their call order. updateMemory reads the memory first, so it keeps its
 * lane until it is done.
 */
const QUEUED_AT_CALL: ReadonlySet<string> = new Set(['addMemories', 'deleteMemory', 'compact']);
port.postMessage({ id: 0, type: 'result', value: 'ready' } satisfies WriteReply);

async function run(request: WriteRequest, onStarted?: () => void): Promise<void> {
  const reply = (message: WriteReply) => port.postMessage(message);
  try {
    const args = [...request.args];
    // A forget's onStarted (functions do not clone) is this thread's, added to the options it was sent; the
    // calling thread's is told by a progress reply.
    if (onStarted) {
      const told = () => {
        onStarted();
        reply({ id: request.id, type: 'progress', items: 0 });
      };
      args[1] = { ...(args[1] as object | undefined), onStarted: told };
    }
    if (request.method === 'ingest') {
      const options = {
        ...(args[1] as object),
        onProgress: (items: number) => reply({ id: request.id, type: 'progress', items }),
      };
      args[1] = options;
    }
    const method = (gm as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[request.method];
    if (typeof method !== 'function') throw new Error(`unknown write method ${request.method}`);
    reply({ id: request.id, type: 'result', value: await method.apply(gm, args) });
  } catch (error) {
    const e = error as Error;
    reply({
      id: request.id,
      type: 'error',
      error: isGraphmemixError(error)
        ? {
            name: e.name,
            message: e.message,
            code: error.code,
            location: error.location,
            details: error.details,
          }
        : { name: e.name, message: e.message },
    });
  }
}

/** The user a request writes to (its lane), or undefined for one that may touch any. */
function laneOf(request: WriteRequest): string | undefined {
  if (request.method === 'ingest') return (request.args[1] as { contextId?: string } | undefined)?.contextId;
  if (request.method === 'waitForMedia' || request.method === 'waitForCompactions') return undefined;
  const contextId = request.args[0];
  return typeof contextId === 'string' && contextId !== '' ? contextId : DEFAULT_CONTEXT_ID;
}
