import { GraphmemixError } from '../errors/graphmemix-error.ts';

/**
 * The persistent semantic state of the offline TF-IDF mutual kNN (docs/semantic-knn.md), one per context:
 * a frozen IDF snapshot, each memory's sparse vector under it (stored as postings), and each memory's current
 * top-k list. Exposed as the `semantic` sub-port of ArchiveStore; every backend passes the semantic section
 * of test/store/store-conformance.ts.
 *
 * The store only keeps and indexes this state; src/digest/incremental/ decides what goes in. Deleting a
 * memory removes its own document (vector, postings, list) with it; lists of OTHER memories that name it stay
 * until the caller refills them (`referrers` finds them).
 */
export interface SemanticIndexStore {
  /** The context's snapshot, or undefined before its first compaction. */
  getSnapshot(contextId: string): Promise<SemanticSnapshot | undefined>;
  /** Document frequency at the snapshot for each known term (terms unseen by the snapshot are left out). */
  documentFrequencies(contextId: string, terms: readonly string[]): Promise<Map<string, number>>;
  /**
   * Compaction: replaces the context's snapshot, every document and every list in ONE transaction
   * (`changes` starts at 0). Unknown memory ids are INVALID_INPUT. `docs` is iterated once, in order, so a
   * compaction can build documents while they are written (no whole-context array at 1M memories).
   */
  replaceAll(contextId: string, snapshot: SemanticSnapshotInput, docs: Iterable<SemanticDoc>): Promise<void>;
  /**
   * A replaceAll written in pieces, for lists of length `k`: `stage` takes documents in as many calls as the
   * caller likes (each its own transaction, into a staging area that no read sees and that nothing else
   * writes), then `commit` leaves, in ONE transaction, exactly the state of `replaceAll(snapshot, every
   * staged document in stage order)`, with its errors (unknown memory ids are INVALID_INPUT, and then
   * nothing changes). `abort` drops what was staged; after a commit (failed or not) or an abort the staging
   * is spent (STORE on any further stage or commit; abort does nothing). Staged
   * documents do not outlive the process (a crash leaves the stored state as it was). Optional: a bulk
   * rebuild through the facade's write queue stages its documents in turns, so that the one turn that
   * replaces the state does not also encode and bind every row (callers fall back to replaceAll).
   */
  stagedReplace?(contextId: string, k: number): StagedSemanticReplace;
  /**
   * Replaces only the snapshot row and its document frequencies (`changes` back to 0), keeping every
   * document and list: the last step of a compaction written in steps (compact-semantic-steps.ts), whose
   * documents went in with `writeDocs`. Needs no existing snapshot. Optional: without it compaction runs in one
   * turn (replaceAll).
   */
  replaceSnapshot?(contextId: string, snapshot: SemanticSnapshotInput): Promise<void>;
  /** Documents in the order of `ids`; ids without a document are skipped. */
  getDocs(contextId: string, ids: readonly string[]): Promise<SemanticDoc[]>;
  /**
   * Only the lists of `ids` (what getDocs returns as `neighbours`) for ids with a document; an empty list may
   * be left out. Optional: the edge sync reads the lists of a changed list's members and needs no vector
   * (callers fall back to getDocs).
   */
  getLists?(contextId: string, ids: readonly string[]): Promise<Map<string, SemanticNeighbour[]>>;
  /**
   * Only the vectors of `ids` (what getDocs returns as terms and weights), each with its list's entry bound
   * (listThreshold), in the order of `ids`; ids without a document are skipped. Optional: a forward search
   * scores its candidates from their vectors, and a newcomer can enter a candidate's list only when its
   * score reaches that bound, so most lists need not be read (callers fall back to getDocs).
   */
  getVectors?(contextId: string, ids: readonly string[]): Promise<SemanticVector[]>;
  /**
   * One transaction: `remove` drops documents, `put` upserts whole documents (vector and list), `lists`
   * replaces only lists. `changes` of the snapshot grows by put + remove. Needs a snapshot (STORE otherwise);
   * unknown memory ids are INVALID_INPUT.
   */
  writeDocs(contextId: string, change: SemanticDocChange): Promise<void>;
  /**
   * Upper bounds per term over its current postings (terms without postings are left out). maxRatio is
   * computed only with `{ ratio: true }` (the exact reverse search); otherwise it may be Infinity, which
   * bounds every ratio (a backend may skip the work).
   */
  termBounds(
    contextId: string,
    terms: readonly string[],
    options?: { ratio?: boolean },
  ): Promise<Map<string, SemanticTermBound>>;
  /**
   * Postings of one term, by weight desc then memory id: `top` = the first n; `minWeight` = every posting with
   * minWeight <= weight < below; `minRatio` = every posting with weight / listThreshold(its memory's list) in [minRatio,
   * below) (an open list, threshold 0, has ratio Infinity), in no particular order.
   */
  postings(contextId: string, term: string, filter: SemanticPostingFilter): Promise<SemanticPosting[]>;
  /**
   * `postings(term, { top: n })` for several terms in one call (a term without postings maps to []).
   * Optional: a networked backend saves a round trip per query term; callers fall back to `postings`.
   */
  topPostings?(
    contextId: string,
    terms: readonly string[],
    n: number,
  ): Promise<Map<string, SemanticPosting[]>>;
  /** Owners of the lists that name any of `ids` (sorted, each once). */
  referrers(contextId: string, ids: readonly string[]): Promise<string[]>;
  /** Entry bound (listThreshold) of every document's list: the dense path's reverse search reads them all. */
  thresholds(contextId: string): Promise<Map<string, number>>;
}

/** A replaceAll in pieces (SemanticIndexStore.stagedReplace). */
export interface StagedSemanticReplace {
  stage(docs: Iterable<SemanticDoc>): Promise<void>;
  /** `snapshot.k` must be the k the staging was opened with (INVALID_INPUT otherwise). */
  commit(snapshot: SemanticSnapshotInput): Promise<void>;
  abort(): Promise<void>;
}

/** A staged replace used after its commit or abort. */
export function stagingSpent(contextId: string): GraphmemixError {
  return new GraphmemixError(
    'STORE',
    `the staged semantic replace of "${contextId}" was already committed or aborted`,
  );
}

/** A staged replace committed with another k than it was opened with (its thresholds depend on k). */
export function stagingWithOtherK(contextId: string, staged: number, given: number): GraphmemixError {
  return new GraphmemixError(
    'INVALID_INPUT',
    `the staged semantic replace of "${contextId}" was opened for k = ${staged}, committed with k = ${given}`,
    { location: { field: 'k' } },
  );
}

export interface SemanticSnapshot {
  /** The space the lists live in: 'tfidf' (vectors as postings) or a dense space `embedding:<model>`. */
  space: string;
  /** Memories (documents) the IDF was computed over. */
  documents: number;
  /** List length the lists were built for (method notes: 8). */
  k: number;
  /** ISO time of the compaction. */
  createdAt: string;
  /** Documents put or removed since the snapshot (the compaction rule reads it). */
  changes: number;
}

export interface SemanticSnapshotInput {
  space: string;
  documents: number;
  k: number;
  createdAt: string;
  /** Document frequency per term at the snapshot. */
  df: ReadonlyMap<string, number>;
}

/** One memory's sparse TF-IDF vector (terms ascending by code unit, L2-normalised) and its top-k list. */
export interface SemanticDoc {
  memoryId: string;
  terms: readonly string[];
  weights: readonly number[];
  /** Best first: score desc, then memory id asc; at most k entries, all scores > 0. */
  neighbours: readonly SemanticNeighbour[];
}

/** A document's vector and its list's entry bound (getVectors). */
export interface SemanticVector {
  memoryId: string;
  terms: readonly string[];
  weights: readonly number[];
  /** listThreshold of its list: a score below it cannot enter the list. */
  threshold: number;
}

export interface SemanticNeighbour {
  memoryId: string;
  score: number;
}

export interface SemanticDocChange {
  put?: readonly SemanticDoc[];
  lists?: ReadonlyArray<{ memoryId: string; neighbours: readonly SemanticNeighbour[] }>;
  remove?: readonly string[];
}

export interface SemanticPosting {
  memoryId: string;
  weight: number;
  /** weight / listThreshold of the memory's list (Infinity when open); set on `minRatio` results only. */
  ratio?: number;
}

/** `below` (exclusive, default Infinity) reads a window, to deepen an earlier read without re-reading it. */
export type SemanticPostingFilter =
  | { top: number }
  | { minWeight: number; below?: number }
  | { minRatio: number; below?: number };

export interface SemanticTermBound {
  /** Largest weight of the term in any document. */
  maxWeight: number;
  /** Largest weight / threshold (Infinity when a document holding the term has an open list). */
  maxRatio: number;
}

/**
 * A list's entry bound, stored per document for the reverse (ratio) index: its k-th score less 1e-8 when
 * full (scores are rounded to 1e-9, so a tie with the k-th entry must still pass), 0 while it has fewer than k
 * entries (anything positive enters). Shared by both backends so the ratio index agrees with the caller.
 */
export function listThreshold(neighbours: readonly SemanticNeighbour[], k: number): number {
  return neighbours.length >= k ? Math.max(0, neighbours[k - 1]!.score - 1e-8) : 0;
}
