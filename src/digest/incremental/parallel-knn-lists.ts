import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { workerExecArgv } from '../../store/worker-exec-argv.ts';
import { shared } from '../semantic/shared-array.ts';
import type { KnnSpace } from '../semantic/tfidf-space.ts';
import { TopKLists } from '../semantic/top-k-lists.ts';
import { type BoundedKnnIndex, type BoundedKnnTuning, boundedKnnIndex } from './bounded-knn-lists.ts';
import {
  type ExactKnnIndex,
  type ExactKnnTuning,
  exactKnnIndex,
  exactKnnIndexSlices,
} from './exact-knn-lists.ts';
import { exactWorkBound, workBoundPassed } from './exact-work-bound.ts';
import {
  HELPER_CANCELLED,
  HELPER_WAITING,
  type KnnWorkerData,
  type KnnWorkerReply,
  knnSearcher,
} from './knn-worker-protocol.ts';

/**
 * Below this many documents a pass runs on the calling thread alone: a helper takes 230-310 ms to start from
 * the TypeScript sources (tsx's loader), about what the whole exact pass costs at 10k (0.5 s), and at 10k the
 * import was measured slower with it (bench/ingest-probe.ts: semantic_knn step 1.33 -> 1.49-1.69 s).
 */
export const PARALLEL_KNN_FROM = 25_000;
/** Documents a thread claims at a time: small enough to balance the last claims, large enough to be rare. */
export const PARALLEL_KNN_CHUNK = 256;
/**
 * The claim when the calling thread pauses between its chunks (a compaction in steps): the writes queued on
 * its event loop wait one chunk, ~35-65 ms at 100k with 256 (docs/living-archive.md "Round 27").
 */
export const PAUSED_KNN_CHUNK = 64;
/** Most threads a pass uses by default (the calling thread included). */
export const MAX_KNN_THREADS = 8;
/**
 * Memory all helper threads of one pass may hold together. Each holds lists for EVERY document (an offer goes
 * to both documents of a pair) plus per-document scratch, ~114 MB at 1M memories (helperBytes): without a
 * bound, 7 helpers on an 8-core machine would add ~0.8 GB to a 1M import whose peak is ~1.45 GB with one
 * (bench:scale, round 14). 160 MiB allows one helper at 1M, two at 500k, seven up to ~190k memories.
 */
export const KNN_HELPER_MEMORY_BYTES = 160 * 1024 * 1024;

/** What one helper thread allocates for a pass over n documents: lists (12k + 10 B each), scratch, query. */
export function helperBytes(n: number, k: number, vocabularySize: number): number {
  return n * (12 * k + 10 + 8) + vocabularySize * 8;
}

/** Which all-pairs pass: exact (compaction) or bounded (bulk imports into large contexts). */
export type KnnPass =
  | {
      kind: 'exact';
      tuning?: ExactKnnTuning;
      /**
       * Most candidates (postings read, documents scanned) the pass may visit over all threads; once passed the
       * threads stop and the result says so (`workBoundPassed`, lists incomplete). Absent: unbounded.
       */
      maxVisits?: number;
    }
  | { kind: 'bounded'; tuning?: BoundedKnnTuning };

export interface ParallelKnnOptions {
  /** Threads, the calling one included (default: defaultKnnThreads()). 1 runs the pass on this thread. */
  threads?: number;
  /** Documents from which helper threads are started (default PARALLEL_KNN_FROM; tests lower it). */
  parallelFrom?: number;
  /** Documents per claim (default PARALLEL_KNN_CHUNK; PAUSED_KNN_CHUNK with `pause`). */
  chunk?: number;
  /** The helper thread's module (default: knn-worker-main; tests pass one that fails). */
  helperEntry?: URL;
  /** Wait until every helper has started before searching (tests: so helpers surely search). */
  waitForHelpers?: boolean;
  /** Memory the helpers may take together (default KNN_HELPER_MEMORY_BYTES); fewer helpers when it is short. */
  helperMemoryBytes?: number;
  /**
   * Awaited by this thread between its chunks (a compaction in steps: the writes queued on this thread's event
   * loop run between them, instead of waiting for the whole pass). Absent: this thread's chunks run back to back.
   */
  pause?: () => Promise<void>;
}

export interface ParallelKnnResult {
  lists: TopKLists;
  /** Threads that searched documents (1 when the pass ran on the calling thread alone). */
  threads: number;
  /**
   * Set when a helper thread failed: one that had claimed documents makes the pass run again on the calling
   * thread (same lists, `threads` 1); one that failed before claiming any is only reported.
   */
  helperFailure?: string;
  /** Set when an exact pass visited more than its `maxVisits`: it stopped, and `lists` are incomplete. */
  workBoundPassed?: true;
}

/**
 * Threads for a kNN pass: GRAPHMEMIX_KNN_THREADS when set (1 = no helper threads), else the machine's
 * available parallelism, at most MAX_KNN_THREADS.
 */
export function defaultKnnThreads(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.GRAPHMEMIX_KNN_THREADS;
  if (text !== undefined && text !== '') {
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1 || value > 256) {
      throw new GraphmemixError(
        'INVALID_INPUT',
        `GRAPHMEMIX_KNN_THREADS must be an integer in 1..256, got "${text}"`,
        { location: { field: 'GRAPHMEMIX_KNN_THREADS' } },
      );
    }
    return value;
  }
  return Math.max(1, Math.min(MAX_KNN_THREADS, availableParallelism()));
}

/**
 * The all-pairs kNN lists of a space (exactKnnLists or boundedKnnLists) searched by several threads: the
 * index is built once on SharedArrayBuffers, helper threads and this one claim chunks of documents from one
 * atomic counter (in ascending order, as the exact search requires of each thread), each thread fills lists
 * of its own, and this thread merges them. The result equals the one-thread pass: a list keeps the k best of
 * what it is offered whatever the order, the bounded search's candidates depend on the index alone, and an
 * exact search that misses other threads' offers has a lower threshold, so it only scores more candidates
 * (test/digest/incremental/parallel-knn-lists.test.ts compares them).
 *
 * This thread searches from the start; a helper that has not claimed a chunk when the counter runs out is
 * cancelled, not awaited, so a small pass never waits for a thread to start. A helper that fails makes the
 * pass run again here (reported in `helperFailure`): the chunks it claimed are not known to be done.
 */
export async function parallelKnnLists(
  space: KnnSpace,
  k: number,
  pass: KnnPass,
  options: ParallelKnnOptions = {},
): Promise<ParallelKnnResult> {
  const n = space.size;
  const chunk = Math.max(
    1,
    Math.floor(options.chunk ?? (options.pause === undefined ? PARALLEL_KNN_CHUNK : PAUSED_KNN_CHUNK)),
  );
  const chunks = Math.ceil(n / chunk);
  const asked = options.threads ?? defaultKnnThreads();
  const wanted = Number.isFinite(asked) ? Math.max(1, Math.floor(asked)) : 1;
  const affordable =
    1 +
    Math.floor((options.helperMemoryBytes ?? KNN_HELPER_MEMORY_BYTES) / helperBytes(n, k, space.df.length));
  const threads = n >= (options.parallelFrom ?? PARALLEL_KNN_FROM) ? Math.min(wanted, chunks, affordable) : 1;
  const shared = sharedSpace(space);
  const pause = options.pause;
  const index: ExactKnnIndex | BoundedKnnIndex =
    pass.kind === 'bounded'
      ? boundedKnnIndex(shared, k, pass.tuning)
      : pause === undefined
        ? exactKnnIndex(shared, pass.tuning)
        : await inSlices(exactKnnIndexSlices(shared, pass.tuning), pause);
  const newBound = () =>
    pass.kind === 'exact' && pass.maxVisits !== undefined ? exactWorkBound(pass.maxVisits) : undefined;
  let work = newBound();
  // The result of a pass: a bounded exact pass that stopped says so (its lists are incomplete).
  const result = (lists: TopKLists, threads: number, helperFailure?: string): ParallelKnnResult => ({
    lists,
    threads,
    ...(helperFailure === undefined ? {} : { helperFailure }),
    ...(work !== undefined && workBoundPassed(work) ? { workBoundPassed: true as const } : {}),
  });
  const alone = async (): Promise<TopKLists> => {
    // A pass run again here (a helper failed) counts its visits afresh: the failed run's are not its own.
    work = newBound();
    const lists = new TopKLists(n, k);
    const search = knnSearcher(index, lists, work);
    if (pause === undefined) search(0, n);
    else {
      // Ascending chunks, as a thread of the parallel pass searches them: the same lists.
      for (let from = 0; from < n; from += chunk) {
        search(from, Math.min(n, from + chunk));
        await pause();
      }
    }
    return lists;
  };
  // The index's last slice (a sort of the suffixed documents) and the first chunk are not one stall.
  if (pause !== undefined) await pause();
  if (threads <= 1) return result(await alone(), 1);

  const control = new Int32Array(new SharedArrayBuffer(4 * threads));
  const helpers = Array.from({ length: threads - 1 }, (_, w) =>
    startHelper(
      { index, k, chunk, control, slot: w, ...(work === undefined ? {} : { work }) },
      options.helperEntry,
    ),
  );
  const lists = new TopKLists(n, k);
  try {
    if (options.waitForHelpers) await Promise.all(helpers.map((helper) => helper.started));
    const search = knnSearcher(index, lists, work);
    for (let c = Atomics.add(control, 0, 1); c < chunks; c = Atomics.add(control, 0, 1)) {
      search(c * chunk, Math.min(n, (c + 1) * chunk));
      if (pause !== undefined) await pause();
    }
  } catch (error) {
    // Nothing will read the helpers' lists: stop them rather than let them search on.
    for (const helper of helpers) void helper.worker.terminate();
    throw error;
  }
  let searched = 1;
  let failure: string | undefined;
  let failedToStart: string | undefined;
  for (const [w, helper] of helpers.entries()) {
    if (Atomics.compareExchange(control, 1 + w, HELPER_WAITING, HELPER_CANCELLED) === HELPER_WAITING) {
      // It claimed nothing, so the lists are complete without it; one that could not even start is reported.
      if (helper.failure !== undefined) failedToStart ??= helper.failure;
      void helper.worker.terminate();
      continue;
    }
    const reply = await helper.reply;
    if (reply.type === 'failed') failure ??= reply.error;
    else if (reply.type === 'done' && reply.arrays !== null && failure === undefined) {
      lists.merge(new TopKLists(n, k, reply.arrays));
      searched++;
    }
  }
  if (failure !== undefined) return result(await alone(), 1, failure);
  return result(lists, searched, failedToStart);
}

interface Helper {
  worker: Worker;
  /** Resolves when the helper has started (or ended: then `reply` says how). */
  started: Promise<void>;
  /** Its last message: its lists, or why it failed. */
  reply: Promise<KnnWorkerReply>;
  /** Set once it has failed (read without waiting, for a helper that is cancelled). */
  failure?: string;
}

function startHelper(data: KnnWorkerData, helperEntry: URL | undefined): Helper {
  // From TypeScript sources the worker needs tsx's loader in its own thread (the .mjs entry registers it); no
  // inherited flags: tsx's loader registered twice in one thread hangs module loading.
  const entry =
    helperEntry ??
    new URL(
      import.meta.url.endsWith('.ts') ? './knn-worker-tsx-entry.mjs' : './knn-worker-main.js',
      import.meta.url,
    );
  const worker = new Worker(entry, { workerData: data, execArgv: workerExecArgv() });
  const helper = { worker } as Helper;
  let markStarted = () => {};
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  let ended = false;
  const reply = new Promise<KnnWorkerReply>((resolve) => {
    // The first of its reply, an error or its exit ends it (a helper exits after posting its lists).
    const end = (message: KnnWorkerReply) => {
      if (ended) return;
      ended = true;
      if (message.type === 'failed') helper.failure = message.error;
      markStarted();
      resolve(message);
    };
    worker.on('message', (message: KnnWorkerReply) => {
      if (message.type === 'started') markStarted();
      else end(message);
    });
    worker.once('error', (error) =>
      end({ type: 'failed', error: `kNN helper thread failed: ${error.message}` }),
    );
    worker.once('exit', (code) =>
      end({ type: 'failed', error: `kNN helper thread exited with code ${code}` }),
    );
  });
  helper.started = started;
  helper.reply = reply;
  return helper;
}

/** Runs a build to its end, awaiting `pause` at each of its yields. */
async function inSlices<T>(build: Generator<void, T, void>, pause: () => Promise<void>): Promise<T> {
  for (let step = build.next(); ; step = build.next()) {
    if (step.done) return step.value;
    await pause();
  }
}

/** The space's arrays on SharedArrayBuffers (TfidfSpace allocates them there; others are copied once). */
function sharedSpace(space: KnnSpace): KnnSpace {
  return {
    size: space.size,
    docStart: shared(Uint32Array, space.docStart),
    docTerm: shared(Uint32Array, space.docTerm),
    docWeight: shared(Float32Array, space.docWeight),
    df: shared(Uint32Array, space.df),
  };
}
