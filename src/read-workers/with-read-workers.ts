import type { Graphmemix, MemoryPage, SearchResult } from '../graphmemix-api.ts';
import type { AnswerResult, QuestionInput, RetrievalResult } from '../pipeline/retrieval-result.ts';
import type { ResolvedModelConfig } from '../providers/model-config.ts';
import type { ModelSet } from '../providers/model-spec.ts';
import { ReadWorkerPool, resolvePoolSize } from './read-worker-pool.ts';
import type { ReadMethod } from './read-worker-protocol.ts';
import { splitModelConcurrency } from './split-model-concurrency.ts';

/** `openGraphmemix({ readWorkers })`: a size, or the pool's settings. 0 / false: questions run in-thread. */
export type ReadWorkersOption =
  | boolean
  | number
  | {
      size?: number;
      /** Calls one worker runs at once (default 8). */
      concurrency?: number;
      /** Waiting calls before BUSY (default 64). */
      maxQueue?: number;
      modelConfig?: ResolvedModelConfig;
    };

/**
 * Whether questions can run in read workers: a SQLite file opened by this call (in-memory stores and
 * injected stores cannot be shared across threads), and models the workers can rebuild (model objects
 * given without their plain config cannot cross a thread, so those questions stay here).
 */
export function wantsReadWorkers(options: {
  db: string;
  store?: unknown;
  models?: ModelSet;
  readWorkers?: ReadWorkersOption;
}): boolean {
  const wanted = options.readWorkers;
  if (wanted === undefined || wanted === false || wanted === 0) return false;
  if (options.store !== undefined) return false;
  if (options.db === ':memory:' || options.db.startsWith('memory:')) return false;
  const modelConfig = typeof wanted === 'object' ? wanted.modelConfig : undefined;
  const hasModels = Object.values(options.models ?? {}).some((model) => model !== undefined);
  return !hasModels || modelConfig !== undefined;
}

/**
 * Starts the pool on `gm`'s archive and returns `gm` with retrieve, answer, search and listMemories running there. The
 * caller's AbortSignal stays in this thread (signals do not clone): the pool forwards its abort.
 */
export async function withReadWorkers(
  gm: Graphmemix,
  options: { db: string; readWorkers?: ReadWorkersOption },
): Promise<Graphmemix> {
  const option = options.readWorkers;
  const { modelConfig, ...settings } =
    typeof option === 'object' ? option : typeof option === 'number' ? { size: option } : {};
  const size = resolvePoolSize(settings.size);
  const pool = new ReadWorkerPool({
    db: options.db,
    openOptions: plainOptions(options),
    ...settings,
    size,
    ...(modelConfig === undefined ? {} : { modelConfig: splitModelConcurrency(modelConfig, size) }),
  });
  try {
    await pool.started();
  } catch (error) {
    await pool.close();
    await gm.close();
    throw error;
  }
  const ask = <T>(method: ReadMethod, contextId: string, input: unknown, options?: object): Promise<T> => {
    // A signal (when the options carry one) stays here, the lane is the pool's; everything else must be cloneable.
    const { signal, lane, ...rest } = (options ?? {}) as { signal?: AbortSignal; lane?: string };
    return pool.run<T>(method, [contextId, input, rest], signal, lane);
  };
  const wrapped: Graphmemix = {
    ...gm,
    search: async (contextId, query, options) =>
      (await ask<SearchResult>('search', contextId, query, options)).hits,
    searchMemories: (contextId, query, options) => ask<SearchResult>('search', contextId, query, options),
    retrieve: (contextId, question: string | QuestionInput, options) =>
      ask<RetrievalResult>('retrieve', contextId, question, options),
    answer: (contextId, question: string | QuestionInput, options) =>
      ask<AnswerResult>('answer', contextId, question, options),
    // A filtered page can read thousands of index rows: in a worker, not on the event loop of every request.
    listMemories: (contextId, listOptions) => {
      const { lane, ...page } = listOptions ?? {};
      return ask<MemoryPage>('list', contextId, page, lane === undefined ? undefined : { lane });
    },
    // The mode goes through: `serve` stops on SIGTERM with { background: 'stop' }, and a close that dropped it
    // waited out a compaction under way (minutes on a large user) before the process could exit.
    async close(closeOptions) {
      await pool.close();
      await gm.close(closeOptions);
    },
  };
  pools.set(wrapped, pool);
  return wrapped;
}

/**
 * The scalar archive options (ocr, deadlines, folders...) the workers open with, as this thread did; objects
 * (store, models, worker settings) are this thread's own or travel separately.
 */
function plainOptions(options: object): Record<string, string | number | boolean> {
  const {
    db: _db,
    readonly: _readonly,
    writeWorker: _w,
    readWorkers: _r,
    ...rest
  } = options as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(rest).filter(([, value]) => ['string', 'number', 'boolean'].includes(typeof value)),
  ) as Record<string, string | number | boolean>;
}

const pools = new WeakMap<Graphmemix, ReadWorkerPool>();

/** The read worker pool behind an archive, if its questions run in workers (stats for benches and tests). */
export function readPoolOf(gm: Graphmemix): ReadWorkerPool | undefined {
  return pools.get(gm);
}
