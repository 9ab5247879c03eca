/**
 * A helper thread of parallelKnnLists (parallel-knn-lists.ts): claims chunks of documents from the shared
 * counter, searches them into lists of its own and posts the lists back (transferred). It imports only the
 * kNN kernels, so it starts in a few tens of milliseconds.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { TopKLists } from '../semantic/top-k-lists.ts';
import {
  HELPER_STARTED,
  HELPER_WAITING,
  type KnnWorkerData,
  type KnnWorkerReply,
  knnSearcher,
} from './knn-worker-protocol.ts';

const data = workerData as KnnWorkerData;
const port = parentPort!;
const reply = (message: KnnWorkerReply, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

try {
  // Cancelled (the caller's thread ran out of chunks before this one started): nothing to do.
  if (
    Atomics.compareExchange(data.control, 1 + data.slot, HELPER_WAITING, HELPER_STARTED) === HELPER_WAITING
  ) {
    reply({ type: 'started' });
    const { index, k, chunk, control } = data;
    const n = index.space.size;
    const chunks = Math.ceil(n / chunk);
    let lists: TopKLists | undefined;
    let search: ((from: number, to: number) => void) | undefined;
    for (let c = Atomics.add(control, 0, 1); c < chunks; c = Atomics.add(control, 0, 1)) {
      if (lists === undefined) {
        lists = new TopKLists(n, k);
        search = knnSearcher(index, lists, data.work);
      }
      search!(c * chunk, Math.min(n, (c + 1) * chunk));
    }
    if (lists === undefined) reply({ type: 'done', arrays: null });
    else {
      const arrays = lists.arrays();
      reply({ type: 'done', arrays }, [
        arrays.neighbour.buffer as ArrayBuffer,
        arrays.score.buffer as ArrayBuffer,
        arrays.count.buffer as ArrayBuffer,
        arrays.kth.buffer as ArrayBuffer,
      ]);
    }
  }
} catch (error) {
  reply({
    type: 'failed',
    error: `kNN helper thread failed: ${error instanceof Error ? error.message : String(error)}`,
  });
}
