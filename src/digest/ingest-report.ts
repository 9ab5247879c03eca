import type { RelationType } from '../types/relation.ts';

/** One rejected record or question, with what to fix. */
export interface IngestRejection {
  code: string;
  message: string;
  file?: string;
  line?: number;
  recordId?: string;
  field?: string;
}

/**
 * What an ingest did. `--json` of `graphmemix ingest` prints the summary shape of the issue:
 * {contexts, memories, assets, questions, edges{...}, rejected, seconds}.
 */
export interface IngestReport {
  contexts: string[];
  imported: number;
  updated: number;
  unchanged: number;
  skipped: number;
  rejected: IngestRejection[];
  warnings: string[];
  questions: number;
  assets: number;
  /**
   * Edge counts per relation type over the touched contexts, after the relation update. An add, update or delete
   * whose semantic side runs after the write (`semanticUpdates`, the default) counts semantic_knn before it.
   */
  edges: Record<RelationType, number>;
  seconds: number;
  /** Seconds spent in each digest step (parse+views, media, write, relations, embeddings). */
  stepSeconds: Record<string, number>;
  /**
   * Records with local media (src/digest/media/): digested in this ingest (done/failed), left for the
   * background queue (pending), or unchanged (same input as the stored record). Absent when none had media.
   */
  media?: { pending: number; done: number; failed: number; unchanged: number };
}
