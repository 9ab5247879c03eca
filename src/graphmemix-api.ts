import type { IngestReport } from './digest/ingest-report.ts';
import type { DialogueShape, ImportFormat } from './importers/importer-spec.ts';
import type {
  AnswerResult,
  QuestionInput,
  RetrievalResult,
  RetrieveOptions,
} from './pipeline/retrieval-result.ts';
import type { ArchiveStore } from './store/archive-store-spec.ts';
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
    },
  ): Promise<IngestReport>;
  /**
   * Add or update records given as plain objects (unified record shape; missing sequence/kind defaulted).
   * Invalid ones are rejected in the report, valid ones kept.
   */
  addMemories(contextId: string, records: readonly MemoryRecordInput[]): Promise<IngestReport>;
  getMemory(contextId: string, id: string): Promise<MemoryRecord | undefined>;
  /**
   * Deletes one memory: its row, views, vectors and edges, with no copy of its text left in the store's
   * files, and its files in the media folder that no other memory of the context references.
   */
  deleteMemory(contextId: string, id: string): Promise<boolean>;
  /**
   * Forgets a whole context (a user): every memory with its views, vectors, edges and questions, in one
   * transaction, with no copy of the text left in the store's files, then its media (the context's folder
   * in `mediaDir` and every file there its memories referenced).
   */
  forgetContext(contextId: string): Promise<ForgetReport>;
  /**
   * Explicit maintenance: rebuilds every relation of the context exactly (schema types, a fresh IDF snapshot
   * and exact mutual-kNN lists) and settles its relation journal. Walks the whole context; writes never need
   * it (they update incrementally and compact the semantic side on their own when it drifts).
   */
  compact(contextId: string, options?: { k?: number }): Promise<CompactReport>;
  /** forgetContext under the name the HTTP/MCP shells use (a user id is a context id). */
  deleteUser(userId: string): Promise<ForgetReport>;
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

  /** Flat retrieval (no graph, no verifiers): top-k memories by the multi-view score. */
  search(
    contextId: string,
    query: string,
    options?: { k?: number; signal?: AbortSignal },
  ): Promise<SearchHit[]>;
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

  close(): Promise<void>;
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

/** A record as users send it: `id` and some content required, the rest optional (see docs/archive-format.md). */
export type MemoryRecordInput = Partial<Omit<MemoryRecord, 'contextId'>> & { id: string };

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
