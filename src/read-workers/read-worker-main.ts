/**
 * Entry of a read worker thread: owns one read-only connection to the archive and runs the public API's
 * question methods (retrieve, answer, search), several at a time (model-backed questions mostly wait on the
 * network), so the CPU-heavy pipeline never runs on the event loop that serves HTTP and health checks.
 * See read-worker-pool.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openGraphmemix } from '../graphmemix.ts';
import { createModels } from '../providers/create-models.ts';
import {
  allowMediaRoot,
  allowRemoteMedia,
  type MediaAccessPolicy,
  resetMediaAccess,
  setMediaLimits,
} from '../providers/to-image-url.ts';
import type { ReadReply, ReadRequest, ReadWorkerData } from './read-worker-protocol.ts';
import { toWireError } from './wire-error.ts';

const data = workerData as ReadWorkerData;
const port = parentPort!;
applyMediaPolicy(data.mediaPolicy);
// Read-only: a question never writes, and a reader thread must never be able to.
const gm = await openGraphmemix({
  ...data.openOptions,
  db: data.db,
  readonly: true,
  ...(data.modelConfig === undefined ? {} : { models: createModels(data.modelConfig) }),
});

const running = new Map<number, { controller: AbortController; done: Promise<void> }>();
let closing = false;

port.on('message', (request: ReadRequest) => {
  if (request.type === 'abort') {
    running.get(request.id)?.controller.abort(new DOMException(request.reason, 'AbortError'));
    return;
  }
  if (request.type === 'close') {
    closing = true;
    for (const call of running.values()) call.controller.abort(new DOMException('closing', 'AbortError'));
    void Promise.allSettled([...running.values()].map((call) => call.done)).then(async () => {
      await gm.close();
      port.close();
    });
    return;
  }
  if (closing) return;
  if (request.mediaPolicy) applyMediaPolicy(request.mediaPolicy);
  const controller = new AbortController();
  const done = run(request.id, request.method, request.args, controller.signal).finally(() =>
    running.delete(request.id),
  );
  running.set(request.id, { controller, done });
});
port.postMessage({ id: 0, type: 'result', value: 'ready' } satisfies ReadReply);

async function run(id: number, method: string, args: unknown[], signal: AbortSignal): Promise<void> {
  try {
    const [contextId, input, options] = args as [string, never, Record<string, unknown> | undefined];
    const withSignal = { ...(options ?? {}), signal };
    let value: unknown;
    if (method === 'retrieve') value = await gm.retrieve(contextId, input, withSignal);
    else if (method === 'answer') value = await gm.answer(contextId, input, withSignal);
    // A search that does not take a signal ignores the extra key.
    else if (method === 'search')
      value = await gm.searchMemories(contextId, input, withSignal as { k?: number });
    // A filtered page reads up to FILTER_PAGE_WORK index rows (~15-45 ms): off the caller's event loop.
    else if (method === 'list') value = await gm.listMemories(contextId, input);
    else throw new Error(`unknown read method ${method}`);
    port.postMessage({ id, type: 'result', value } satisfies ReadReply);
  } catch (error) {
    port.postMessage({ id, type: 'error', error: toWireError(error) } satisfies ReadReply);
  }
}

/** Mirrors the opening thread's policy exactly (roots may have been added there since the last call). */
function applyMediaPolicy(policy: MediaAccessPolicy): void {
  resetMediaAccess();
  for (const root of policy.roots) allowMediaRoot(root);
  allowRemoteMedia(policy.remotePrefixes);
  setMediaLimits({ maxFileBytes: policy.maxFileBytes });
}
