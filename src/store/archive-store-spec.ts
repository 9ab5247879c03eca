import type { MemoryRecord } from '../types/memory-record.ts';
import type { EvalQuestion } from '../types/question.ts';
import type { MemoryEdge, RelationType } from '../types/relation.ts';
import type { MemoryView, ViewHit, ViewKind } from '../types/view.ts';
import type { SemanticIndexStore } from './semantic-index-spec.ts';

/** How deleteContext runs its transactions. */
export interface ForgetOptions {
  /**
   * Runs each of the forget's transactions (a step): the library passes its write queue, so other writes of
   * this process go between steps. Default: run as they come.
   */
  schedule?: <T>(step: () => Promise<T>) => Promise<T>;
  /**
   * Called once before anything is deleted, outside `schedule` (SQLite: after the first step, which only marks
   * the context, so its writes are refused from then on; the library reads the media files it owns here).
   */
  started?: () => Promise<void>;
}

/**
 * The storage port. Every backend (embedded SQLite, in-memory, a future server database) implements it
 * and passes `test/store/store-conformance.ts`. Async so that networked backends fit without touching callers.
 *
 * Isolation rule: every method that reads rows takes a contextId and never returns another context's rows;
 * lexical statistics (IDF, average length) are per context too.
 */
export interface ArchiveStore {
  /** Bumped on incompatible changes of this interface. */
  readonly specificationVersion: 'v1';
  /** Backend name for traces and errors ('sqlite', 'memory', 'postgres'). */
  readonly backend: string;
  /**
   * How searchVectors runs, reported by `/v1/health` and `graphmemix --version`: 'usearch' (SQLite with the
   * optional package: persistent HNSW files above APPROXIMATE_VECTOR_THRESHOLD rows per space,
   * src/store/usearch-vector-index.ts), 'in-process' (SQLite without it: exact; memory: exact scan, an IVF
   * index above the threshold, src/store/vector-index.ts), 'pgvector' (Postgres with the extension: HNSW)
   * or 'exact' (Postgres without it). Absent: 'in-process'.
   */
  readonly vectorSupport?: string;
  /**
   * True when writes of different contexts never wait on each other: the store serialises the writes of one
   * context itself (PostgreSQL: a lock per context, in any number of processes). The facade then runs the
   * writes of different contexts side by side (src/graphmemix-write-queue.ts). Absent: one writer at a time
   * (SQLite's single write connection, the memory store).
   */
  readonly independentContextWrites?: boolean;

  /**
   * Contexts in id order. With `afterId` / `limit`: keyset pages (ids after `afterId`, at most `limit`), cost
   * following the page, never the number of contexts (GET /v1/users).
   */
  listContexts(options?: { afterId?: string; limit?: number }): Promise<ContextInfo[]>;

  /**
   * Upserts records with their views in ONE transaction: either all land or none.
   * A record whose contentHash is unchanged is left alone (idempotent re-import); a changed one replaces its
   * views (and its vectors are dropped, to be recomputed).
   */
  writeMemories(contextId: string, writes: MemoryWrite[]): Promise<WriteOutcome>;
  getMemory(contextId: string, id: string): Promise<MemoryRecord | undefined>;
  /** Records in the order of `ids`; unknown ids are skipped. */
  getMemories(contextId: string, ids: readonly string[]): Promise<MemoryRecord[]>;
  /**
   * Optional: a token that differs from every earlier one whenever the memories or edges of `contextId` may
   * have changed since (a commit by any connection or process, any write of this handle, committed or not),
   * and is the same for reads that see the same data; undefined when the backend cannot tell. Layers above
   * the port keep what they read (the question path's pool records) under the token they read it with.
   * SQLite (the whole file, outside a transaction): this connection's total_changes() and PRAGMA
   * data_version. PostgreSQL (inside a question's read unit, once its BEGIN went out): the context row's
   * generation, moved by triggers on every write of its memories and edges (schema migration 10).
   */
  readGeneration?(contextId?: string): string | undefined;
  /**
   * All records of a context in (sequence, id) order, paged for large contexts. Sequences of different sources
   * may tie, so a page continues after the key (afterSequence, afterId) of the last record it got; with only
   * afterSequence it continues after every record of that sequence.
   */
  listMemories(
    contextId: string,
    options?: { afterSequence?: number; afterId?: string; limit?: number },
  ): Promise<MemoryRecord[]>;
  /**
   * Records passing `filter`, in (sequence, id) order after the keyset position, at most `limit`, found through
   * the indexed scope tags (agent, run, top-level metadata scalars) and event times (filter-plan.ts). A page
   * does at most FILTER_PAGE_WORK (or `page.work`) units of work (index rows walked, seeks); one that runs out
   * before `limit` items returns what it found and `stoppedAfter`, so no filter makes a page walk the context.
   */
  listFiltered(
    contextId: string,
    filter: MemoryFilter,
    page?: FilterPageOptions,
  ): Promise<FilteredPage<MemoryRecord>>;
  /** The ids of listFiltered's page (same order, bounds and `stoppedAfter`). */
  matchFiltered(
    contextId: string,
    filter: MemoryFilter,
    page?: FilterPageOptions,
  ): Promise<FilteredPage<string>>;
  /** The subset of `ids` (each once) whose memories pass `filter`: cost follows ids.length. */
  matchMemories(
    contextId: string,
    filter: MemoryFilter,
    options: { ids: readonly string[] },
  ): Promise<string[]>;
  /**
   * The versions a memory had before its current one, oldest first, each with the time it was recorded.
   * Every write that changed a stored record keeps the replaced record here; deleting the memory (or its
   * context) deletes its versions with it.
   */
  memoryVersions(contextId: string, id: string, window?: VersionWindow): Promise<MemoryVersion[]>;
  /** Kept per context: no walk over the context's records. */
  countMemories(contextId: string): Promise<number>;
  /** Kept counts of the context (memories by kind) and its last write; undefined for an unknown context. */
  contextStats(contextId: string): Promise<ContextStats | undefined>;
  /** Highest record sequence of the context (undefined when empty): where ingest continues numbering. */
  maxSequence(contextId: string): Promise<number | undefined>;
  /** Content hashes by id, to decide inserted/updated/unchanged before writing. */
  getContentHashes(contextId: string, ids: readonly string[]): Promise<Map<string, string>>;
  /**
   * Records holding ANY of `keys` (relation lookup keys, see MemoryWrite.keys), each once, in (sequence, id)
   * order, at most `limit`. Cost follows the sizes of the key groups, never the context size.
   */
  findByKeys(
    contextId: string,
    keys: readonly string[],
    options?: { limit?: number },
  ): Promise<MemoryRecord[]>;
  /**
   * Memories whose media digest is pending (relation key MEDIA_PENDING_KEY) across every context, in
   * (context, id) order strictly after `after`, at most `limit`: what the media queue recovers at open.
   * Read from an index of the pending rows only (SQLite migration 8, Postgres version 5), never by listing
   * contexts, so opening an archive costs nothing proportional to its size.
   */
  listPendingMedia(options: { limit: number; after?: PendingMediaRef }): Promise<PendingMediaRef[]>;
  /**
   * Of these media reference keys (`media:<path>`, media-folder.ts MEDIA_KEY), the ones a memory of ANY context
   * holds: one probe per key of an index of those keys only (SQLite migration 17, PostgreSQL version 13), so a
   * delete's check of its files costs nothing proportional to the number of users. Optional: absent, the
   * caller asks every context (findByKeys). Keys outside the prefix are never held.
   */
  heldMediaKeys?(keys: readonly string[]): Promise<Set<string>>;
  /**
   * The nearest record holding `key` strictly before / after `position` in (sequence, id) order; the position
   * need not be a stored record (a deleted one's old place works). Undefined when there is none.
   */
  adjacentByKey(
    contextId: string,
    key: string,
    position: { sequence: number; id: string },
    direction: 'before' | 'after',
  ): Promise<MemoryRecord | undefined>;
  /**
   * Up to `limit` records holding `key` strictly before / after `position`, nearest first: adjacentByKey
   * repeated from each record found, in one call. Optional: a networked backend saves a round trip per step
   * (walks of a supersedes thread); callers fall back to adjacentByKey.
   */
  adjacentRunByKey?(
    contextId: string,
    key: string,
    position: { sequence: number; id: string },
    direction: 'before' | 'after',
    limit: number,
  ): Promise<MemoryRecord[]>;
  /** Every (key, record) with `from` <= key <= `to` (string order), ordered by (key, record id), at most `limit`. */
  findKeyRange(
    contextId: string,
    from: string,
    to: string,
    options?: { limit?: number },
  ): Promise<KeyedRecord[]>;
  /**
   * Removes the record with its views, vectors, keys and every edge touching it, and journals it (its
   * relation-journal entry keeps the record until the relation update consumes it). Returns false when absent.
   * Forget means forget: once that entry is consumed and `eraseDeleted` has run, no copy of the record's text
   * may stay readable in the backend's files (SQLite: secure_delete, then the WAL checkpointed and truncated),
   * except what only maintenance reaches (a word other deleted memories shared, in the frozen IDF snapshot until
   * a compaction; SQLite's stale copies in rebalanced pages until `vacuum`; docs/interfaces.md).
   */
  deleteMemory(contextId: string, id: string): Promise<boolean>;
  /**
   * After deletes, once their journal entries are consumed: removes what the backend's files still hold of the
   * deleted rows outside its live pages (SQLite: copies the WAL into the secure-deleted file and truncates it;
   * best effort while another process holds an old snapshot). The facade runs it at the end of a delete, after
   * its relation update. Optional: absent, the backend keeps no such copy.
   */
  eraseDeleted?(): Promise<void>;
  /**
   * Removes a whole context: its memories, views, vectors, edges, questions, the context row and every index
   * entry derived from them, with the same no-residue guarantee as deleteMemory. Returns false when the context
   * did not exist. Meta keys are global and stay. PostgreSQL deletes in ONE transaction (under the context's
   * lock: other contexts' writes go on); SQLite, whose file has one write lock, in steps of bounded size
   * (`isForgetting` is true meanwhile, writes to the context are refused with CONFLICT, and a forget a killed
   * process left is resumed by the next call: a client's, or the facade's after open with resumeForgets).
   */
  deleteContext(contextId: string, options?: ForgetOptions): Promise<boolean>;
  /** True while a forget of the context is under way or was interrupted (SQLite); absent: never. */
  isForgetting?(contextId: string): Promise<boolean>;
  /**
   * The contexts whose forget is under way or was interrupted, oldest first (SQLite; one small table):
   * what a long-running writer resumes after open (OpenGraphmemixOptions.resumeForgets). Absent: none ever.
   */
  forgettingContexts?(): Promise<string[]>;

  getViews(contextId: string, memoryIds: readonly string[]): Promise<MemoryView[]>;

  /**
   * The relation journal, for crash safety of the incremental relation path. Every memory write that changed
   * something (inserted or updated) and every delete leaves one entry per memory IN THE SAME TRANSACTION, with
   * the record it replaced or removed. The relation updater reads entries, applies their relation changes and
   * then clears them, so a process killed in between leaves work that the next update finishes. Entries come
   * in write order (seq ascending).
   */
  pendingRelationWork(contextId: string, limit: number): Promise<RelationWork[]>;
  /**
   * Removes the journal entries with these seqs, or every entry up to and including `through` (after a full
   * rebuild that covered them), once their relations were applied.
   */
  clearRelationWork(contextId: string, seqs: readonly number[] | { through: number }): Promise<void>;
  /** Journal entries of the context and the last seq (decides incremental update vs full rebuild). */
  relationWorkStatus(contextId: string): Promise<{ pending: number; lastSeq?: number }>;
  /**
   * Whether the context has journal entries not yet applied to its relations: one index probe, whatever the
   * number of entries (a question asks it: `relations_pending`).
   */
  hasRelationWork(contextId: string): Promise<boolean>;
  /**
   * Contexts with journal entries not yet applied (a write stopped between its records and its relation update):
   * a writer's open applies them in the background. One pass over the journal's index (empty in a settled archive).
   */
  contextsWithRelationWork(): Promise<string[]>;

  /** Replaces every edge of the given relation types in the context (relations are recomputed per context). */
  replaceEdges(
    contextId: string,
    types: readonly RelationType[],
    edges: readonly MemoryEdge[],
  ): Promise<void>;
  /**
   * Applies per-pair type changes in ONE transaction, reading and writing only the named pairs: the incremental
   * path (a write touches what it changes). Per pair: types := (types - remove) + add; similarity is set when
   * `similarity` is given with semantic_knn in `add`, and dropped with semantic_knn; a pair left without
   * types is deleted; strength follows MemoryEdge. Unknown endpoints and self-loops are INVALID_INPUT.
   */
  changeEdges(contextId: string, changes: readonly EdgeChange[]): Promise<void>;
  /** Every edge touching any of the ids (both directions), each pair once. */
  neighbors(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]>;
  /**
   * Every edge whose BOTH ends are among the ids, each pair once, sorted as `neighbors` sorts (by a, then b).
   * Optional: the question path reads a pool's inner relations with it (primary-key probes, not every edge
   * of the pool) and falls back to `neighbors` filtered to the ids where a backend lacks it.
   */
  edgesAmong?(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]>;
  countEdges(contextId: string): Promise<Record<RelationType, number>>;

  /** Upserts evaluation questions by (contextId, id). */
  putQuestions(questions: readonly EvalQuestion[]): Promise<number>;
  listQuestions(contextId?: string): Promise<EvalQuestion[]>;

  /** BM25 over the context's views; one hit per (memory, view). Statistics are per context. */
  searchLexical(contextId: string, query: string, options: LexicalSearchOptions): Promise<ViewHit[]>;
  /**
   * Optional maintenance after a context's bulk import or compaction: compacts the backend's lexical postings
   * for cheaper searches (SQLite: merges FTS5 segments when the context is at least half of the index).
   * Changes no search result; returns whether it did anything.
   */
  optimizeLexicalIndex?(contextId: string): Promise<boolean>;

  /** Dense vectors of views in a named embedding space (model id + dimensions). */
  putVectors(contextId: string, space: string, rows: readonly VectorRow[]): Promise<void>;
  getVectors(contextId: string, space: string, memoryIds?: readonly string[]): Promise<VectorRow[]>;
  /**
   * The embedding spaces holding vectors in the context, sorted (archive copy enumerates them). Optional for
   * backends written before it; a copy from such a backend finds the spaces through the semantic snapshot.
   */
  listVectorSpaces?(contextId: string): Promise<string[]>;
  /** Cosine search; exact below a backend-defined size, approximate index above it (documented per backend). */
  searchVectors(
    contextId: string,
    space: string,
    query: Float32Array,
    options: VectorSearchOptions,
  ): Promise<ViewHit[]>;

  /** Persistent state of the incremental mutual kNN: IDF snapshot, vectors, top-k lists (semantic-index-spec.ts). */
  readonly semantic: SemanticIndexStore;

  /** Small JSON values: calibration, import progress, digest statistics. Global unless the key says otherwise. */
  getMeta<T = unknown>(key: string): Promise<T | undefined>;
  setMeta(key: string, value: unknown): Promise<void>;
  /**
   * Meta keys starting with `prefix` (all when absent), sorted (archive copy enumerates calibrations).
   * Optional for backends written before it; a copy from such a backend copies no meta and says so.
   */
  listMetaKeys?(prefix?: string): Promise<string[]>;

  integrityCheck(): Promise<{ ok: boolean; problems: string[] }>;
  /**
   * Explicit maintenance (`graphmemix vacuum`): rewrites the backend's files so that nothing of deleted rows
   * stays in their unused space. SQLite's secure_delete zeroes deleted cells, freeblocks and free pages but not
   * the gap a page rebalance leaves, which can hold stale copies of rows that were moved and later deleted
   * (round 53); VACUUM rebuilds every page, then the WAL is truncated. Walks the whole archive and holds the
   * write lock meanwhile. Optional: absent, the backend has no such command here (PostgreSQL: VACUUM FULL by
   * the tables' owner).
   */
  vacuum?(): Promise<{ bytesBefore: number; bytesAfter: number }>;
  /**
   * Awaited between the steps of long maintenance (a compaction in steps) while none of its writes is open:
   * the backend catches up on deferred work of its own there rather than inside a later write (SQLite: a
   * WAL grown past BACKGROUND_RESTART_FRAMES is copied into the file by its checkpointer, so the next write
   * restarts it instead of a COMMIT checkpointing it). Other writes may run meanwhile. Optional.
   */
  maintenancePause?(): Promise<void>;
  /**
   * Runs `work` (calls of this store on `contextId`, and global meta calls) as one atomic unit where the
   * backend gains from it: PostgreSQL runs them in ONE write transaction holding the context's write lock
   * (round trips, not only atomicity). Optional; absent, callers simply run `work` (use `inUnitOfWork`).
   * Reads inside see the unit's own writes. Calls for other contexts are not part of the unit.
   */
  unitOfWork?<T>(contextId: string, work: () => Promise<T>, options?: UnitOfWorkOptions): Promise<T>;
  close(): Promise<void>;
}

export interface UnitOfWorkOptions {
  /**
   * `work` waits on something other than this store (a model call): a backend whose unit would hold a
   * file-wide write lock meanwhile (SQLite) runs `work` as plain calls instead. PostgreSQL ignores it (its
   * unit locks one context).
   */
  remote?: boolean;
  /**
   * `work` starts by writing records (a small add: its records and their relation update). PostgreSQL then
   * begins the unit with the write's first statement and reads ahead (UnitPrefetch) after the write.
   */
  recordWrite?: boolean;
  /**
   * `work` only reads `contextId` (a question's retrieval): PostgreSQL runs its reads in ONE read-only
   * transaction (one snapshot, one BEGIN and COMMIT; not with `remote`); writes inside keep their own
   * transactions. SQLite and the in-memory store run `work` as it is.
   */
  read?: boolean;
  /**
   * Journal entries `work` will add before its relation update (the records of a small add). A backend whose
   * unit holds a file-wide write lock (SQLite) takes the unit only while the pending work stays small
   * (SQLITE_UNIT_MAX_PENDING), so that the lock is never held across a long relation update.
   */
  adds?: number;
}

/**
 * Which memories a list or a question may see. Every given condition must hold. Stores answer it from
 * indexed scope tags (memory-scope-tags.ts) and the event-time index, so a selective filter reads only what
 * matches.
 */
export interface MemoryFilter {
  agentId?: string;
  runId?: string;
  /** Top-level metadata keys whose value must equal the given scalar (same JSON type and value). */
  metadata?: Readonly<Record<string, string | number | boolean>>;
  /**
   * Event-time bounds (record `timestamp`), inclusive, compared as ISO strings in their `eventTimeKey` form (a
   * time with a numeric offset as the same instant in UTC); untimed memories fail them.
   */
  from?: string;
  to?: string;
}

/** A page of listFiltered / matchFiltered: keyset position, size and work bound. */
export interface FilterPageOptions {
  afterSequence?: number;
  afterId?: string;
  limit?: number;
  /** Units of work the page may do, from 1 to FILTER_PAGE_WORK (the default); smaller only in tests. */
  work?: number;
}

/** What a filtered page found, and where it stopped when its work bound ran out first. */
export interface FilteredPage<T> {
  items: T[];
  /**
   * Set when the page stopped on its work bound before `limit` items: every memory up to this (sequence, id)
   * position was examined and none after it, so the next page continues after it (a page may then hold fewer
   * items than asked, or none, and still not be the last).
   */
  stoppedAfter?: { sequence: number; id: string };
}

export interface ContextStats {
  memories: number;
  /** Memories per kind (kinds with none are absent). */
  byKind: Record<string, number>;
  /** ISO time of the last memory write or delete, when known. */
  lastWrite?: string;
}

/**
 * A window of a memory's versions (ArchiveStore.memoryVersions): oldest first from after `afterVersion`, or
 * `newest` first (the latest `limit`; `afterVersion` is then ignored). Without `limit`, all of them: a memory
 * updated many times has as many versions, so the verbs a client drives always pass one.
 */
export interface VersionWindow {
  afterVersion?: number;
  limit?: number;
  newest?: boolean;
}

/** One replaced version of a memory (ArchiveStore.memoryVersions). */
export interface MemoryVersion {
  /** 1 for the first version; the current record is version (versions.length + 1). */
  version: number;
  record: MemoryRecord;
}

/** One relation-journal entry (see ArchiveStore.pendingRelationWork). */
export interface RelationWork {
  seq: number;
  memoryId: string;
  /** The stored record this write replaced or this delete removed; absent for an insert. */
  before?: MemoryRecord;
}

export interface ContextInfo {
  id: string;
  memories: number;
  /** Highest record sequence in the context; absent when it has no memories. Ingest continues after it. */
  maxSequence?: number;
}

/** One pair's relation change (see ArchiveStore.changeEdges). Order of a and b does not matter. */
export interface EdgeChange {
  a: string;
  b: string;
  add?: readonly RelationType[];
  remove?: readonly RelationType[];
  /** The mutual-kNN similarity, required when `add` holds semantic_knn. */
  similarity?: number;
}

export interface MemoryWrite {
  record: MemoryRecord;
  views: MemoryView[];
  /** sha256 of the canonical record JSON; decides unchanged vs updated. */
  contentHash: string;
  /**
   * Relation lookup keys (src/digest/incremental/relation-keys.ts) for findByKeys / adjacentByKey /
   * findKeyRange. When given they become the record's keys, even for an unchanged record (a re-import
   * backfills keys); when absent an inserted or updated record has none and an unchanged one keeps its own.
   */
  keys?: readonly string[];
}

/** Relation key of a memory whose media digest is queued (src/digest/media/media-queue.ts). */
export const MEDIA_PENDING_KEY = 'media-status:pending';

/** A memory whose media digest is pending (ArchiveStore.listPendingMedia). */
export interface PendingMediaRef {
  contextId: string;
  id: string;
}

/** One findKeyRange hit. */
export interface KeyedRecord {
  key: string;
  record: MemoryRecord;
}

export interface WriteOutcome {
  inserted: string[];
  updated: string[];
  unchanged: string[];
}

export interface LexicalSearchOptions {
  /**
   * Hits per view kind: BM25 statistics are per (context, view kind), so raw scores of different kinds are
   * not comparable and each kind gets its own top `limit` (see src/retrieval/bm25-index.ts).
   */
  limit: number;
  /** Restrict to these view kinds; all when absent. */
  kinds?: readonly ViewKind[];
  /**
   * Restrict to the views of these memories (a filtered question's selective candidate set). Scores stay
   * the context's (same statistics as an unrestricted search); cost follows the number of ids.
   */
  memoryIds?: readonly string[];
  /**
   * Smaller work bounds than the backend's (tests): postings rows read and candidates scored per view kind.
   * A backend never works past its own bounds (LEXICAL_ROWS_BOUND, LEXICAL_SCORED_BOUND: candidates scored on
   * SQLite, forward-list probes on PostgreSQL), whatever is asked.
   */
  work?: { rows?: number; scored?: number };
  /**
   * Called once per view kind whose search stopped at a work bound while a document it did not read or score
   * could still have ranked: that kind's hits are the best found within the bound, not necessarily the exact
   * BM25 top `limit` (the retrieve flags it `lexical_search_bounded`). An index that always scores everything
   * (the in-memory store's) never calls it.
   */
  onBounded?: (kind: ViewKind) => void;
  /**
   * Leave out a kind in which every query term it holds is in more than half of its documents
   * (commonTermsOnly, src/retrieval/bm25-index.ts): its exact top `limit` would be a tie among most of the kind
   * broken by write order. The question pipeline sets it; a flat search keeps every kind. Every backend applies
   * the same rule to the same statistics.
   */
  skipCommonOnlyKinds?: boolean;
}

export interface VectorSearchOptions {
  limit: number;
  kinds?: readonly ViewKind[];
  /** Restrict to the vectors of these memories (exact cosine over them). */
  memoryIds?: readonly string[];
}

export interface VectorRow {
  memoryId: string;
  kind: ViewKind;
  key: string;
  vector: Float32Array;
}

/** `store.unitOfWork(contextId, work)` when the backend has it, else `work()`. */
export function inUnitOfWork<T>(
  store: ArchiveStore,
  contextId: string,
  work: () => Promise<T>,
  options?: UnitOfWorkOptions,
): Promise<T> {
  return store.unitOfWork ? store.unitOfWork(contextId, work, options) : work();
}
