import type { DrainFailure } from './digest/incremental/drain-failure-mark.ts';
import type { IngestReport } from './digest/ingest-report.ts';
import type { DialogueShape, ImportFormat } from './importers/importer-spec.ts';
import type {
  AnswerResult,
  QuestionInput,
  RetrievalResult,
  RetrieveOptions,
} from './pipeline/retrieval-result.ts';
import type { ConversationMessage, ConversationScope } from './schemas/conversation-schema.ts';
import type { MemoryPatch } from './schemas/record-schema.ts';
import type { ArchiveStore, ContextStats, MemoryFilter, MemoryVersion } from './store/archive-store-spec.ts';
import type { MemoryRecord } from './types/memory-record.ts';
import type { ViewKind } from './types/view.ts';

/**
 * The public face of graphmemix: open an archive, put memories in, get evidence forests and answers out.
 * Every method is scoped by contextId (one user's archive). Shells (CLI, HTTP, MCP) call only this.
 * Implemented by `openGraphmemix()` in src/graphmemix.ts.
 */
export interface Graphmemix {
  readonly store: ArchiveStore;

  /** Import a file or directory in a supported format through the one ingest path. */
  ingest(
    path: string,
    options: {
      format: ImportFormat;
      contextId?: string;
      /** Dialogue datasets with rounds: keep them (default) or import turns only (ImportOptions.shape). */
      shape?: DialogueShape;
      onProgress?: (items: number) => void;
      /** Who writes (WriteOptions.lane): an import into one user takes its turns in that lane. */
      lane?: string;
    },
  ): Promise<IngestReport>;
  /**
   * Add or update records given as plain objects (unified record shape; missing sequence/kind defaulted).
   * Invalid ones are rejected in the report, valid ones kept.
   */
  addMemories(
    contextId: string,
    records: readonly MemoryRecordInput[],
    options?: WriteOptions,
  ): Promise<IngestReport>;
  getMemory(contextId: string, id: string): Promise<MemoryRecord | undefined>;
  /** A page of the context's memories in (sequence, id) order, filtered before paging (keyset cursor). */
  listMemories(contextId: string, options?: ListMemoriesOptions): Promise<MemoryPage>;
  /**
   * Writes a new version of a stored memory: the patch's fields replace the stored ones (validated by
   * `memoryPatchSchema`), through the one ingest path, so views, index entries and relations follow
   * incrementally; the replaced version stays in the history. NOT_FOUND when the memory does not exist.
   */
  updateMemory(
    contextId: string,
    id: string,
    patch: MemoryPatch,
    options?: WriteOptions,
  ): Promise<UpdateReport>;
  /** Every version of a memory, oldest first, the current one last (undefined when the memory does not exist). */
  memoryHistory(contextId: string, id: string): Promise<MemoryVersion[] | undefined>;
  /**
   * The same history in keyset pages (what HTTP and MCP serve): at most `limit` versions (default 50, at most
   * 200), oldest first, the current one last on the last page; undefined when the memory does not exist.
   */
  memoryHistoryPage(
    contextId: string,
    id: string,
    options?: { limit?: number; cursor?: string },
  ): Promise<MemoryHistoryPage | undefined>;
  /**
   * Adds a conversation ({role, content, name?, timestamp?} messages, the OpenAI/mem0 shape) as message
   * records with ids, rounds and timestamps assigned (messagesToRecords; no model at write time). The
   * scope's agent, run and metadata go on every message.
   */
  addMessages(
    contextId: string,
    messages: readonly ConversationMessage[],
    scope?: ConversationScope,
    options?: WriteOptions,
  ): Promise<AddMessagesReport>;
  /**
   * Users (contexts) in id order with their kept memory counts, in keyset pages: pass `nextCursor` back as
   * `cursor` (absent on the last page). Cost follows the page, never the number of users.
   */
  listUsers(options?: ListUsersOptions): Promise<UserPage>;
  /** Kept counts of one user (by kind, edges by type) and its last write; undefined when unknown. */
  userStats(userId: string): Promise<UserStats | undefined>;
  /**
   * Deletes one memory: its row, views, vectors and edges, with no copy of its text left in the store's
   * files, and its files in the media folder that no other memory of the context references.
   */
  deleteMemory(contextId: string, id: string, options?: WriteOptions): Promise<boolean>;
  /**
   * Forgets a whole context (a user): every memory with its views, vectors, edges and questions, with no copy
   * of the text left in the store's files, then its media (the context's folder in `mediaDir` and every file
   * there its memories referenced). On SQLite in steps of bounded size, other writes going between them
   * (docs/living-archive.md "Round 20"): meanwhile reads and writes of the context answer CONFLICT, and a
   * forget a killed process left is finished by calling this again. `onStarted`: called once the forget has
   * begun (writes to the context are refused from then on).
   */
  forgetContext(contextId: string, options?: ForgetOptions): Promise<ForgetReport>;
  /**
   * Explicit maintenance: rebuilds every relation of the context exactly (schema types, a fresh IDF snapshot
   * and exact mutual-kNN lists) and settles its relation journal. Walks the whole context; writes never need
   * it (they update incrementally and compact the semantic side on their own when it drifts).
   */
  compact(contextId: string, options?: { k?: number }): Promise<CompactReport>;
  /** forgetContext under the name the HTTP/MCP shells use (a user id is a context id). */
  deleteUser(userId: string, options?: ForgetOptions): Promise<ForgetReport>;
  /**
   * Removes files of the context's upload folder (`<mediaDir>/<contextId>/`) that no memory references
   * (uploads saved for records that were then rejected). Other paths are ignored. Returns how many went.
   */
  releaseMedia(contextId: string, uris: readonly string[]): Promise<number>;
  /** The archive's media folder, when one was given (OpenGraphmemixOptions.mediaDir). */
  readonly mediaDir?: string;
  /**
   * Resolves when the background media digest has nothing queued or running (OpenGraphmemixOptions
   * .mediaDigest 'background'); at once otherwise. Each memory shows its own state in `media.status`.
   */
  waitForMedia(): Promise<void>;
  /**
   * Resolves when no automatic compaction is queued or running (they run in steps after the write that
   * triggered them; OpenGraphmemixOptions.compaction). Writes issued meanwhile go on (through the write worker
   * too) and may start another compaction, which it waits for as well.
   */
  waitForCompactions(): Promise<void>;

  /** Flat retrieval (no graph, no verifiers): top-k memories by the multi-view score (searchMemories' hits). */
  search(
    contextId: string,
    query: string,
    options?: { k?: number; signal?: AbortSignal; filter?: MemoryFilter; lane?: string },
  ): Promise<SearchHit[]>;
  /**
   * The same search with what degraded it (what HTTP and MCP serve): `lexical_search_bounded` when a view
   * kind's lexical search stopped at the store's work bound (its hits the best found within it),
   * `dense_retrieval_failed` when the embedding call failed (lexical hits only).
   */
  searchMemories(
    contextId: string,
    query: string,
    options?: { k?: number; signal?: AbortSignal; filter?: MemoryFilter; lane?: string },
  ): Promise<SearchResult>;
  /** The full question pipeline up to the evidence packet. Never throws for a model fault. */
  retrieve(
    contextId: string,
    question: string | QuestionInput,
    options?: RetrieveOptions,
  ): Promise<RetrievalResult>;
  /** retrieve() then the reader model. */
  answer(
    contextId: string,
    question: string | QuestionInput,
    options?: RetrieveOptions,
  ): Promise<AnswerResult>;

  /**
   * Finishes queued writes and closes the archive. Background work under way (automatic compactions, forgets
   * resumed after open) is waited for by default (`background: 'finish'`); `'stop'` stops each at its next
   * step instead (a server's shutdown): a compaction starts again with the context's next write, in this or
   * another process, and a forget with the next open that resumes forgets.
   */
  close(options?: CloseOptions): Promise<void>;
}

/** close()'s options. */
export interface CloseOptions {
  /** What happens to the background work under way: automatic compactions, resumed forgets (default 'finish'). */
  background?: 'finish' | 'stop';
}

/** forgetContext's options. */
export interface ForgetOptions {
  /** Called once the forget has begun: writes to the context are refused from then on. */
  onStarted?: () => void;
  /** Who writes (WriteOptions.lane): the forget's steps take their turns in that lane. */
  lane?: string;
}

export interface ForgetReport {
  contextId: string;
  /** False when the context did not exist. */
  deleted: boolean;
  /** Memories removed. */
  memories: number;
  /** Media files removed from the media folder (the context's folder itself is removed too). */
  mediaFiles: number;
}

/**
 * A record as users send it: `id` and some content required, the rest optional (docs/archive-format.md).
 * Validated by THE record schema (`memoryRecordInputSchema`, src/schemas/record-schema.ts) for records from
 * addMemories, JSONL imports, HTTP and MCP alike (test/schemas/one-record-schema.test.ts keeps the two equal).
 */
export type MemoryRecordInput = Partial<Omit<MemoryRecord, 'contextId'>> & { id: string };

/** One page of `listMemories`; pass `nextCursor` back as `cursor` for the next (absent on the last page). */
export interface MemoryHistoryPage {
  versions: MemoryVersion[];
  /** Where the next page starts; absent on the last (which ends with the current version). */
  nextCursor?: string;
}

export interface MemoryPage {
  memories: MemoryRecord[];
  /**
   * Where the next page starts; absent on the last. A filtered page does bounded work (FILTER_PAGE_WORK index
   * rows or seeks) and may stop before it is full: it then holds fewer memories than asked, or none, and
   * still gives a cursor. Follow cursors until there is none.
   */
  nextCursor?: string;
}

export interface ListMemoriesOptions {
  filter?: MemoryFilter;
  /** Page size, 1..MAX_PAGE_SIZE (200); default 50. */
  limit?: number;
  /** The `nextCursor` of the previous page (opaque; keyset position, so pages stay stable under writes). */
  cursor?: string;
  /** Who asks (RetrieveOptions.lane): in read workers, waiting pages of lanes take turns. */
  lane?: string;
}

export interface ListUsersOptions {
  /** Page size, 1..MAX_PAGE_SIZE (200); default 50. */
  limit?: number;
  /** The `nextCursor` of the previous page (opaque). */
  cursor?: string;
}

/** One page of `listUsers`. */
export interface UserPage {
  users: UserSummary[];
  nextCursor?: string;
}

export interface UpdateReport {
  memory: MemoryRecord;
  /** Number of the current version (1 = never changed). */
  version: number;
  /** False when the patch left the record as it was (no new version). */
  changed: boolean;
}

/** Options of the per-memory write calls (addMemories, addMessages, updateMemory, deleteMemory). */
export interface WriteOptions {
  /**
   * Who writes (a server passes the API key's name). Where writes wait for one writer (SQLite: one write at
   * a time; PostgreSQL: a few users at once), the waiting writes of different lanes take turns, so a caller
   * with many writes queued (one add to each of 64 users) delays another's by one turn, not by all of them.
   */
  lane?: string;
}

/** addMessages' report: the ingest report plus the ids given to the stored messages, in order. */
export type AddMessagesReport = IngestReport & { memoryIds: string[] };

export interface UserSummary {
  userId: string;
  memories: number;
}

export interface UserStats extends ContextStats {
  userId: string;
  /** Pairs per relation type. */
  edges: Record<string, number>;
  /**
   * Present while the user's semantic_knn graph is not the exact rebuild's: a large context's bulk import
   * took the bounded pass, or its automatic compaction was deferred (docs/semantic-knn.md). `graphmemix
   * compact` rebuilds it exactly and clears this.
   */
  knnApproximate?: {
    reason: 'bulk-import' | 'compaction-deferred' | 'compaction-failed' | 'exact-work-bound';
    since: string;
    documents: number;
    error?: string;
  };
  /**
   * Present while some of the user's writes wait for their semantic_knn update (the after-write drain;
   * questions meanwhile are flagged `semantic_pending`). `drainFailure`: the last drain failed (its error, how
   * many times in a row, when the next automatic attempt runs, if one is planned).
   */
  semanticPending?: { drainFailure?: DrainFailure };
}

export type SearchFlag = 'lexical_search_bounded' | 'dense_retrieval_failed';

export interface SearchResult {
  hits: SearchHit[];
  flags: SearchFlag[];
}

export interface SearchHit {
  memoryId: string;
  score: number;
  bestView: ViewKind;
  record: MemoryRecord;
}

export interface CompactReport {
  contextId: string;
  memories: number;
  /** Pairs per relation type after the rebuild. */
  edges: Record<string, number>;
  seconds: number;
}
