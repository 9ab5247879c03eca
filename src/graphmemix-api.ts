import type { IngestReport } from './digest/ingest-report.ts';
import type { ImportFormat } from './importers/importer-spec.ts';
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
    options: { format: ImportFormat; contextId?: string; onProgress?: (items: number) => void },
  ): Promise<IngestReport>;
  /**
   * Add or update records given as plain objects (unified record shape; missing sequence/kind defaulted).
   * Invalid ones are rejected in the report, valid ones kept.
   */
  addMemories(contextId: string, records: readonly MemoryRecordInput[]): Promise<IngestReport>;
  getMemory(contextId: string, id: string): Promise<MemoryRecord | undefined>;
  deleteMemory(contextId: string, id: string): Promise<boolean>;

  /** Flat retrieval (no graph, no verifiers): top-k memories by the multi-view score. */
  search(contextId: string, query: string, options?: { k?: number }): Promise<SearchHit[]>;
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

/** A record as users send it: `id` and some content required, the rest optional (see docs/archive-format.md). */
export type MemoryRecordInput = Partial<Omit<MemoryRecord, 'contextId'>> & { id: string };

export interface SearchHit {
  memoryId: string;
  score: number;
  bestView: ViewKind;
  record: MemoryRecord;
}
