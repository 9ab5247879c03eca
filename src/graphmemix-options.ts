import type { ResolvedModelConfig } from './providers/model-config.ts';
import type { ModelSet } from './providers/model-spec.ts';
import type { ReadWorkersOption } from './read-workers/with-read-workers.ts';
import type { ArchiveStore } from './store/archive-store-spec.ts';

/** What `openGraphmemix` opens and how (src/graphmemix.ts). */
export interface OpenGraphmemixOptions {
  /** SQLite file path, ':memory:' (private SQLite in memory) or 'memory:' (plain in-memory backend). */
  db: string;
  /** Models to use; each optional. Nothing: everything offline. */
  models?: ModelSet;
  /** An already open store (tests, embedding hosts); `db` is then only a label. Not closed by close(). */
  store?: ArchiveStore;
  /** Open the store read-only. */
  readonly?: boolean;
  /** Run OCR on imported photos (default true; importers decide). */
  ocr?: boolean;
  /**
   * Run writes (ingest, addMemories, deleteMemory, forgetContext) in a worker thread that owns its own
   * connection to the same SQLite file, so digest work never blocks this thread's event loop (servers). The
   * worker builds its models from `modelConfig` (plain data; functions cannot cross threads). Ignored for
   * in-memory stores and an injected `store`, which cannot be shared across threads.
   */
  writeWorker?: boolean | { modelConfig?: ResolvedModelConfig };
  /**
   * The archive's own media folder (where the HTTP server saves uploads). Files inside it that a deleted
   * memory or user referenced are removed with it; files elsewhere are never touched.
   */
  mediaDir?: string;
  /** Default question deadline in ms (see DEFAULT_QUESTION_DEADLINE_MS); RetrieveOptions.deadlineMs wins. */
  questionDeadlineMs?: number;
  /**
   * Run questions (retrieve, answer, search) in a pool of read worker threads, each with its own read-only
   * connection to the same SQLite file, so the pipeline never blocks this thread's event loop (servers:
   * health checks, other requests). A size (`true`: one per core but one, at most 8), or
   * `{ size, concurrency, maxQueue, modelConfig }`; a full queue refuses calls with BUSY. Ignored, like
   * writeWorker, for in-memory and injected stores, and when `models` are given without the `modelConfig`
   * the workers would rebuild them from. See src/read-workers/read-worker-pool.ts.
   */
  readWorkers?: ReadWorkersOption;
  /**
   * When records with local media get their digest (EXIF, OCR, frames, pages, captions; src/digest/media/):
   * 'inline' (default: the write returns digested records; CLI imports, scripts) or 'background' (servers:
   * a write returns once the records are stored with `media.status: pending`; a queue digests them and
   * updates their views; pending work survives a restart). `waitForMedia()` waits for the queue.
   */
  mediaDigest?: 'inline' | 'background';
  /**
   * Where a write's automatic (5%-rule) compaction runs: 'steps' (default) after the write, in bounded turns of
   * the write queue (docs/living-archive.md "Round 22"); 'inline' inside the write (one turn, as before).
   */
  compaction?: 'steps' | 'inline';
  /**
   * When an add's, update's or delete's mutual-kNN (semantic_knn) side is applied: 'after-write' (default since
   * round 38: the write returns once its records, lexical postings and schema edges are in; its semantic update
   * runs as the next turn of its user, questions meanwhile flagged `semantic_pending`) or 'in-write' (the write
   * returns with its edges; a question right after it sees them). At 1M memories an add-100 is mostly that update
   * (docs/living-archive.md "Round 37", "Round 38"). Imports (`ingest`) apply it in the write in either mode.
   * Offline tfidf lists only: with an embedding model the dense lists stay in the write. `waitForCompactions()`
   * also waits for these updates.
   */
  semanticUpdates?: 'in-write' | 'after-write';
  /**
   * Aborting it stops the automatic compactions at their next step and lets go the writes they hold, as
   * close({ background: 'stop' }) does, without closing: a server's shutdown, whose accepted writes still run
   * (the write worker; a held user's queued writes would otherwise each wait for the replay, "Round 32").
   */
  stopCompactions?: AbortSignal;
  /**
   * Finish in the background, after open, the forgets a stopped process left (SQLite; default false). The
   * long-running shells (`serve`, `mcp`) set it: an erasure must not wait for its requester to ask again.
   * One-shot commands leave it off (their close would wait for the forget). See ResumedForgets.
   */
  resumeForgets?: boolean;
  /**
   * Apply in the background, after open, the relation journal a stopped process left (an import killed before
   * its relation update; default true for a writer). One-shot commands turn it off: their close would wait for
   * the turn under way, a whole rebuild's commit on a large user. See RelationRecovery.
   */
  recoverRelations?: boolean;
  /**
   * Write calls (ingest, addMemories, addMessages, updateMemory, deleteMemory, forgetContext, deleteUser,
   * compact) unsettled at once before another is refused with BUSY (default DEFAULT_MAX_PENDING_WRITES, 256):
   * queued writes hold their records in memory until their turn.
   */
  maxPendingWrites?: number;
}
