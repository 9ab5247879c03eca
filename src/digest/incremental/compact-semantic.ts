import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import type { ArchiveStore, EdgeChange } from '../../store/archive-store-spec.ts';
import type { SemanticDoc, SemanticNeighbour } from '../../store/semantic-index-spec.ts';
import { compareStrings } from '../../store/store-rules.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';
import type { MemoryEdge } from '../../types/relation.ts';
import { COLLECT_FROM, collectGarbage } from '../collect-garbage.ts';
import { loadRecords, recordPages } from '../load-records.ts';
import { semanticText } from '../semantic/semantic-text.ts';
import {
  buildTfidfSpace,
  type TfidfDocument,
  TfidfSpace,
  TfidfSpaceBuilder,
} from '../semantic/tfidf-space.ts';
import { APPROXIMATE_KNN_FROM, approximateMarkOf, writeApproximateMark } from './approximate-knn-mark.ts';
import { boundedKnnReads } from './bounded-knn-lists.ts';
import { EXACT_VISITS_PER_BOUNDED_READ } from './exact-work-bound.ts';
import { parallelKnnLists } from './parallel-knn-lists.ts';
import { clearCompactionState } from './semantic-compaction-mark.ts';

export interface CompactionResult {
  documents: number;
  terms: number;
  /** Mutual pairs now carrying semantic_knn. */
  edges: number;
  seconds: number;
  /** True when the lists came from the bounded pass (the context is marked approximate). */
  approximate: boolean;
  /** Threads that ran the kNN pass (parallelKnnLists; 1 below PARALLEL_KNN_FROM memories). */
  knnThreads: number;
  /** Set when a helper thread failed and the pass ran again on one thread (same lists, more time). */
  knnHelperFailure?: string;
}

export interface CompactSemanticOptions {
  k?: number;
  /**
   * Every record of the context, when the caller already holds them (buildRelations): an array, or a
   * function that hands them over and drops its own reference, so the records can be collected once the
   * space is built (at 1M memories they are most of the heap; the kNN pass does not need them).
   */
  records?: readonly MemoryRecord[] | (() => readonly MemoryRecord[]);
  /**
   * Instead of `records`: every record's id and `semanticText`, handed over (the array is sorted in place and
   * dropped). All the space reads from a record, so the records themselves can be collected earlier.
   */
  documents?: () => TfidfDocument[];
  /**
   * 'exact' (default: explicit maintenance, small contexts): exactKnnLists. 'auto' (automatic rebuilds:
   * bulk imports, recovery): the bounded pass from `approximateFrom` memories on, marked approximate.
   */
  method?: 'exact' | 'auto';
  /** Threads of the kNN pass, this one included (default defaultKnnThreads(): GRAPHMEMIX_KNN_THREADS or the cores). */
  threads?: number;
  /** Size from which 'auto' takes the bounded pass (default APPROXIMATE_KNN_FROM; tests force it small). */
  approximateFrom?: number;
  /**
   * 'auto' below `approximateFrom`: the exact pass's work bound in candidate visits per bounded read
   * (default EXACT_VISITS_PER_BOUNDED_READ; tests force it small).
   */
  exactWorkRatio?: number;
  /**
   * Awaited between slices of the compute on this thread (the space's documents, the kNN index and pass:
   * ParallelKnnOptions.pause), so this thread's queued writes go between them (a compaction in steps, a bulk
   * import's rebuild through the facade).
   */
  pause?: () => Promise<void>;
  /**
   * Runs each of the compaction's writes (the state, then the edges and marks) as one turn of the caller's
   * write queue (a bulk import's rebuild through the facade: other users' writes go between them and the
   * compute). Default: at once.
   */
  turn?: CompactionTurn;
  /** Semantic edges per turn when a first import's edges go in slices (default EDGE_SLICE; tests force it small). */
  edgeSlice?: number;
}

/** Runs `work` as one turn of a writer's queue (the facade's WriteQueue). */
export type CompactionTurn = <T>(work: () => Promise<T>) => Promise<T>;

/** A turn that runs its work at once (no queue: the caller's own piece). */
export const atOnce: CompactionTurn = (work) => work();

/** Neighbours per memory (method notes: k = 8). */
export const DEFAULT_K = 8;

/**
 * Compaction: a new IDF snapshot from every current record, every vector and list rebuilt, and the context's
 * semantic_knn edges replaced (schema types untouched) with the mutual pairs. The result is exactly the full
 * exact rebuild: TfidfSpace over the records in id order and the mutual kNN with no candidate cap
 * (sparseMutualKnn with maxPostings = Infinity; ties by memory id). The lists are computed in memory
 * (exactKnnLists, on several threads from PARALLEL_KNN_FROM memories: parallelKnnLists, the same lists), then
 * the state is written with one replaceAll and one replaceEdges. An automatic rebuild
 * (`method: 'auto'`) of a context of APPROXIMATE_KNN_FROM memories or more takes the bounded pass instead
 * (boundedKnnLists: approximate, bounded reads per memory) and marks the context approximate
 * (approximate-knn-mark.ts); an exact compaction clears the mark.
 */
export async function compactSemantic(
  store: ArchiveStore,
  contextId: string,
  options: CompactSemanticOptions = {},
): Promise<CompactionResult> {
  const started = performance.now();
  const state = await computeCompaction(store, contextId, options);
  const { space, k, approximate } = state;
  // The pass's index and the helper's lists are garbage (their shared memory is freed when they are collected).
  if (space.size >= COLLECT_FROM) collectGarbage();
  // Documents are built while the store writes them (a re-iterable view over the space and the lists), so
  // no whole-context array of documents exists: at 1M memories it would be ~1 GB of small objects.
  const docs: Iterable<SemanticDoc> = {
    *[Symbol.iterator]() {
      for (let d = 0; d < space.size; d++) yield state.doc(d);
    },
  };
  const createdAt = new Date().toISOString();
  // Marked before the bounded state is written and cleared after the exact one is: a crash in between can
  // leave an exact graph marked (conservative), never an approximate one unmarked.
  const mark = approximateMarkOf(state, createdAt);
  const turn = options.turn ?? atOnce;
  const snapshot = { space: 'tfidf', documents: space.size, k, createdAt, df: state.df };
  // Through a write queue the documents' rows go into the store's staging area in turns of their own, so the
  // turn that replaces the state (and holds every other writer) only copies them (sqlite-semantic-staging.ts).
  const staged = options.turn === undefined ? undefined : store.semantic.stagedReplace?.(contextId, k);
  if (staged === undefined) {
    await turn(async () => {
      if (approximate) await writeApproximateMark(store, contextId, mark);
      await store.semantic.replaceAll(contextId, snapshot, docs);
    });
  } else {
    try {
      for (let from = 0; from < space.size; from += STAGE_DOCS) {
        const to = Math.min(space.size, from + STAGE_DOCS);
        await turn(() => staged.stage(docRange(state, from, to)));
        await options.pause?.();
      }
      await turn(async () => {
        if (approximate) await writeApproximateMark(store, contextId, mark);
        await staged.commit(snapshot);
      });
    } catch (error) {
      // The rebuild's own error is the one to report; a failed clean-up of the temp tables is not.
      await staged.abort().catch(() => undefined);
      throw error;
    }
  }
  await options.pause?.();
  // Built after the documents are written, so they never coexist with the write's buffers.
  const edges = state.edges(contextId);
  await options.pause?.();
  const finish = async (): Promise<void> => {
    if (!approximate) await writeApproximateMark(store, contextId, undefined);
    // Every record was read: whatever a compaction in steps had left to apply is in this state.
    await clearCompactionState(store, contextId);
  };
  // Through a write queue, into a context without semantic edges (a first import), the edges go in slices of
  // their own turns: adding the type pair by pair (changeEdges) is then the same as replacing it. Otherwise
  // (no queue, or old edges to drop) one replaceEdges.
  const perTurn = options.edgeSlice ?? EDGE_SLICE;
  const sliced =
    options.turn !== undefined &&
    edges.length > perTurn &&
    (await turn(async () => (await store.countEdges(contextId)).semantic_knn === 0));
  if (sliced) {
    for (let from = 0; from < edges.length; from += perTurn) {
      const slice = edges.slice(from, from + perTurn).map(
        (edge): EdgeChange => ({
          a: edge.a,
          b: edge.b,
          add: ['semantic_knn'],
          similarity: edge.similarity!,
        }),
      );
      await turn(() => store.changeEdges(contextId, slice));
      await options.pause?.();
    }
    await turn(finish);
  } else {
    await turn(async () => {
      await store.replaceEdges(contextId, ['semantic_knn'], edges);
      await finish();
    });
  }
  return {
    documents: space.size,
    terms: state.df.size,
    edges: edges.length,
    seconds: (performance.now() - started) / 1000,
    approximate,
    knnThreads: state.threads,
    ...(state.helperFailure === undefined ? {} : { knnHelperFailure: state.helperFailure }),
  };
}

/** A compaction's new semantic state, computed in memory (nothing written). */
export interface ComputedCompaction {
  space: TfidfSpace;
  k: number;
  approximate: boolean;
  /** Set when an automatic exact pass passed its work bound and the bounded pass made the lists instead. */
  exactWorkBoundPassed?: true;
  /** Document frequency per term over every document. */
  df: Map<string, number>;
  threads: number;
  helperFailure?: string;
  /** Document `d` (in id order): vector, terms ascending, and its list. */
  doc(d: number): SemanticDoc;
  /** The mutual pairs as semantic_knn edges. */
  edges(contextId: string): MemoryEdge[];
}

/**
 * Loads the context (or takes the caller's records / documents), builds the fresh TF-IDF space and runs the
 * kNN pass: everything of compactSemantic but the writes. Reads only.
 */
export async function computeCompaction(
  store: ArchiveStore,
  contextId: string,
  options: CompactSemanticOptions = {},
): Promise<ComputedCompaction> {
  const k = options.k ?? (await store.semantic.getSnapshot(contextId))?.k ?? DEFAULT_K;
  if (!Number.isInteger(k) || k < 1 || k > 1000) {
    throw new GraphmemixError('INVALID_INPUT', `k must be an integer in 1..1000, got ${k}`, {
      location: { field: 'k' },
    });
  }
  // A caller that already holds every record (buildRelations) passes them: at 1M memories a second copy
  // would double the peak memory. Sorted by id here (the rebuild's order), not in the caller's array.
  // No local keeps them: once the space is built they are garbage.
  const space =
    options.documents !== undefined
      ? options.pause !== undefined
        ? await documentsInSlices(options.documents(), options.pause)
        : new TfidfSpace(options.documents().sort((x, y) => compareStrings(x.id, y.id)))
      : options.pause !== undefined && options.records === undefined
        ? await spaceInSlices(store, contextId, options.pause)
        : buildTfidfSpace(
            sortedById(
              typeof options.records === 'function'
                ? options.records()
                : (options.records ?? (await loadRecords(store, contextId))),
            ),
          );
  // The documents (or records) the space was built from are garbage now, before the pass allocates its index
  // and lists (collect-garbage.ts).
  if (space.size >= COLLECT_FROM) collectGarbage();
  const auto = options.method === 'auto';
  let approximate = auto && space.size >= (options.approximateFrom ?? APPROXIMATE_KNN_FROM);
  const passOptions = {
    ...(options.threads === undefined ? {} : { threads: options.threads }),
    ...(options.pause === undefined ? {} : { pause: options.pause }),
  };
  // An automatic exact pass may visit EXACT_VISITS_PER_BOUNDED_READ candidates per posting the bounded pass
  // reads in all, no more: on text whose memories share only common words (templated or repeated lines) the
  // exact pass is quadratic (50k such memories: 25 s against 1.7 s bounded); on chat text it visits 0.1-0.3 of
  // one (docs/semantic-knn.md, "The exact pass's work bound").
  let knn = await parallelKnnLists(
    space,
    k,
    approximate
      ? { kind: 'bounded' }
      : {
          kind: 'exact',
          ...(auto
            ? {
                maxVisits: boundedKnnReads(space) * (options.exactWorkRatio ?? EXACT_VISITS_PER_BOUNDED_READ),
              }
            : {}),
        },
    passOptions,
  );
  const exactWorkBoundPassed = knn.workBoundPassed === true;
  if (exactWorkBoundPassed) {
    approximate = true;
    knn = await parallelKnnLists(space, k, { kind: 'bounded' }, passOptions);
  }
  const { lists } = knn;
  const names: string[] = new Array(space.df.length);
  for (const [term, id] of space.vocabulary) names[id] = term;
  const df = new Map(names.map((term, id) => [term, space.df[id]!]));
  return {
    space,
    k,
    approximate,
    ...(exactWorkBoundPassed ? { exactWorkBoundPassed } : {}),
    df,
    threads: knn.threads,
    ...(knn.helperFailure === undefined ? {} : { helperFailure: knn.helperFailure }),
    doc(d: number): SemanticDoc {
      const entries: Array<[string, number]> = [];
      for (let e = space.docStart[d]!; e < space.docStart[d + 1]!; e++) {
        entries.push([names[space.docTerm[e]!]!, space.docWeight[e]!]);
      }
      entries.sort((x, y) => compareStrings(x[0], y[0]));
      const neighbours: SemanticNeighbour[] = lists
        .neighbours(d)
        .map(({ index, score }) => ({ memoryId: space.ids[index]!, score }));
      return {
        memoryId: space.ids[d]!,
        terms: entries.map((e) => e[0]),
        weights: entries.map((e) => e[1]),
        neighbours,
      };
    },
    edges(contextId: string): MemoryEdge[] {
      // Documents are in id order (compareStrings), so index a < b means id a < id b: the edge's order.
      return lists.mutualPairs().map(
        ({ a, b, similarity }): MemoryEdge => ({
          contextId,
          a: space.ids[a]!,
          b: space.ids[b]!,
          types: ['semantic_knn'],
          strength: similarity,
          similarity,
        }),
      );
    },
  };
}

/** Semantic edges per turn of a first import's rebuild through a write queue. */
const EDGE_SLICE = 5000;

/** Documents per staging turn of a rebuild through a write queue (~0.15 s of encoding at 100k memories). */
const STAGE_DOCS = 5000;

/** Documents `from` to `to` (exclusive) of a computed compaction, built as they are iterated. */
function* docRange(state: ComputedCompaction, from: number, to: number): Iterable<SemanticDoc> {
  for (let d = from; d < to; d++) yield state.doc(d);
}

/** Records read per page, and documents tokenised, between two pauses of spaceInSlices. */
const SLICE = 2000;

/**
 * The TF-IDF space of every record, built with `pause` awaited between pages of records and slices of
 * documents (a compaction in steps: this thread's queued writes run between them). The same space as
 * buildTfidfSpace over the records in id order.
 */
async function spaceInSlices(
  store: ArchiveStore,
  contextId: string,
  pause: () => Promise<void>,
): Promise<TfidfSpace> {
  const documents: TfidfDocument[] = [];
  for await (const page of recordPages(store, contextId, SLICE)) {
    for (const record of page) documents.push({ id: record.id, text: semanticText(record) });
    await pause();
  }
  return documentsInSlices(documents, pause);
}

/**
 * The TF-IDF space of `documents` (sorted here by id, in place, and let go of as they are added), tokenised
 * in slices with `pause` awaited between them: the same space as `new TfidfSpace` over them in id order.
 */
async function documentsInSlices(
  documents: Array<TfidfDocument | undefined>,
  pause: () => Promise<void>,
): Promise<TfidfSpace> {
  (documents as TfidfDocument[]).sort((x, y) => compareStrings(x.id, y.id));
  await pause();
  const builder = new TfidfSpaceBuilder();
  for (let at = 0; at < documents.length; at++) {
    builder.add(documents[at]!);
    // Its text is not needed again (at 1M memories the texts are a large share of the heap).
    documents[at] = undefined;
    if ((at + 1) % SLICE === 0) await pause();
  }
  const space = new TfidfSpace(builder);
  // The space's weights (~40 ms at 100k) and the kNN index (built next, in slices) are not one stall.
  await pause();
  return space;
}

function sortedById(records: readonly MemoryRecord[]): MemoryRecord[] {
  return [...records].sort((x, y) => compareStrings(x.id, y.id));
}

/** Mutual pairs of the lists as semantic_knn edges (strength = similarity = mean of both scores). */
export function mutualEdges(contextId: string, docs: readonly SemanticDoc[]): MemoryEdge[] {
  const byId = new Map(docs.map((doc) => [doc.memoryId, doc]));
  const edges: MemoryEdge[] = [];
  for (const doc of docs) {
    for (const n of doc.neighbours) {
      if (!(doc.memoryId < n.memoryId)) continue;
      const back = byId.get(n.memoryId)?.neighbours.find((m) => m.memoryId === doc.memoryId);
      if (!back) continue;
      const similarity = (n.score + back.score) / 2;
      edges.push({
        contextId,
        a: doc.memoryId,
        b: n.memoryId,
        types: ['semantic_knn'],
        strength: similarity,
        similarity,
      });
    }
  }
  return edges;
}
