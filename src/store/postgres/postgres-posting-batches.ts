import { BoundedMap, generationGroup } from '../bounded-map.ts';

/** A posting as the search's statements send it: doc, tf, length, impact, memory id, key. */
export type PostingTuple = [
  doc: number,
  tf: number,
  length: number,
  impact: number,
  memoryId: string,
  key: string,
];

/** Bytes of posting batches a store keeps, all contexts together (about 100k postings). */
const BATCH_BYTES = 16 * 1024 * 1024;
/** Contexts whose last seen generation is remembered (the plan's assumption). */
const MAX_CONTEXTS = 4096;

/** Batches served from and kept in the stores' batches (never reset here; tests read differences). */
export const postgresPostingBatchCounters = { batchesServed: 0, batchesKept: 0 };

/**
 * The lexical search's posting batches, kept per store under the read generation they were read with, as
 * the SQLite store keeps the FTS5 pages its searches read while the file does not change
 * (src/store/lexical-search-cache.ts). Questions about one archive keep asking the same common terms; their
 * first batches (and the rounds after) are then no statement and no JSON in the server.
 *
 * A batch is what one list's statement returned: the `size` postings after the first `offset` ones of the
 * (context, kind, term) list in impact order. Batch boundaries follow from the search's own rule (first batch,
 * then doubling), so the same list is cut the same way by every search with the same first batch.
 *
 * Exact: used only by searches inside a read unit of the context (one REPEATABLE READ snapshot) under the
 * generation read in that snapshot: the context's generation moves in the same transaction as any write of
 * its memories (schema 10 triggers), and every lexical row belongs to a memory. The plan statement goes out
 * with the unit's BEGIN, before the generation is known: it skips the lists kept under the generation the
 * store last saw for the context, and the search checks the unit's generation when the plan returns (a
 * moved generation costs one statement that reads the skipped lists). Batches are shared, never mutated.
 */
export class PostgresPostingBatches {
  private readonly batches = new BoundedMap<readonly PostingTuple[]>(BATCH_BYTES, batchBytes);
  private readonly lastSeen = new Map<string, string>();

  /** The search's view of the batches for one context; `generation` reads the unit's (undefined: not yet). */
  forSearch(contextId: string, generation: () => string | undefined): SearchBatches {
    const assumed = generation() ?? this.lastSeen.get(contextId);
    const itemOf = (kind: string, term: string, offset: number, size: number) =>
      `${kind}\u0000${offset}\u0000${size}\u0000${term}`;
    return {
      assumed,
      generation: () => {
        const now = generation();
        if (now !== undefined && this.lastSeen.get(contextId) !== now) {
          if (this.lastSeen.size >= MAX_CONTEXTS && !this.lastSeen.has(contextId)) this.lastSeen.clear();
          this.lastSeen.set(contextId, now);
        }
        return now;
      },
      get: (gen, kind, term, offset, size) => {
        const batch = this.batches.get(generationGroup(gen, contextId), itemOf(kind, term, offset, size));
        if (batch) postgresPostingBatchCounters.batchesServed++;
        return batch;
      },
      set: (gen, kind, term, offset, size, batch) => {
        postgresPostingBatchCounters.batchesKept++;
        this.batches.set(generationGroup(gen, contextId), itemOf(kind, term, offset, size), batch);
      },
    };
  }
}

export interface SearchBatches {
  /** The generation the plan assumes (the unit's when known, else the last this store saw for the context). */
  readonly assumed: string | undefined;
  /** The unit's generation once its BEGIN went out (undefined before). */
  generation(): string | undefined;
  get(
    generation: string,
    kind: string,
    term: string,
    offset: number,
    size: number,
  ): readonly PostingTuple[] | undefined;
  set(
    generation: string,
    kind: string,
    term: string,
    offset: number,
    size: number,
    batch: readonly PostingTuple[],
  ): void;
}

function batchBytes(batch: readonly PostingTuple[]): number {
  let bytes = 48;
  for (const posting of batch) bytes += 2 * (posting[4].length + posting[5].length) + 120;
  return bytes;
}
