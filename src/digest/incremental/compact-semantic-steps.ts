import type { ArchiveStore } from '../../store/archive-store-spec.ts';
import { StepSizer } from '../../store/step-sizer.ts';
import { approximateMarkOf, writeApproximateMark } from './approximate-knn-mark.ts';
import { type CompactionTurn, type ComputedCompaction, computeCompaction } from './compact-semantic.ts';
import {
  backlogKeys,
  clearCompactionState,
  currentState,
  readCompactionMark,
  type SemanticCompactionMark,
  takeBacklog,
  whileRunning,
  writeCompactionMark,
} from './semantic-compaction-mark.ts';
import { syncSemanticEdges, updateSemanticKnn } from './update-semantic-knn.ts';

/**
 * What one step aims to take: a write queued behind the compaction waits about this long (steps are sized
 * from the previous step's time per item, StepSizer). Fixed counts were ~65 ms steps at 10k and 0.1-0.4 s
 * at 100k (docs/living-archive.md "Round 27").
 */
export const COMPACTION_STEP_MS = 20;
/**
 * At most this many documents per step: one writeDocs replacing each document's ~20 rows with their indexes
 * (~0.26 ms a document at 10k, ~0.48 ms at 100k; "Round 22").
 */
export const COMPACTION_DOCS_PER_STEP = 250;
/** At most this many memories whose semantic_knn edges are synchronised per step (~0.17 ms each at 100k). */
export const COMPACTION_EDGES_PER_STEP = 1000;
/**
 * What one replay step aims to take. A replay step is an incremental update, whose fixed cost (the snapshot,
 * document frequencies, the edge sync) made 20 ms steps apply about one id each: ~59 ms an id against ~18 ms in
 * whole 102-id rows (2 KB texts at ~1k memories, round 32).
 */
export const COMPACTION_REPLAY_STEP_MS = 100;
/** At most this many backlog ids applied per step (an add of this many memories; at least one). */
export const COMPACTION_REPLAY_PER_STEP = 128;
/** The first step of each kind: small, then grown towards COMPACTION_STEP_MS. */
const FIRST_STEP = { docs: 16, edges: 64, replay: 8 } as const;

export type { CompactionTurn } from './compact-semantic.ts';

export interface StepCompactionResult {
  /** 'done'; 'superseded' when another compaction (or a forget) took the context first; 'stopped' by the signal. */
  outcome: 'done' | 'superseded' | 'stopped';
  documents: number;
  /** Turns taken, and the longest one's seconds (what a writer queued behind it could wait). */
  steps: number;
  longestStepSeconds: number;
  /** Backlog ids applied under the new snapshot. */
  replayed: number;
  seconds: number;
}

/**
 * The automatic (5%-rule) compaction of a context in bounded steps, each one turn of the writer's queue, so a
 * writer of another context (or of this one) waits at most one step, not the whole compaction
 * (docs/living-archive.md "Round 22"). The caller has written `mark` in the write that decided it; from then
 * on relation updates of the context leave their semantic side in the backlog (semantic-compaction-mark.ts).
 * 1. computes the new state outside any turn (computeCompaction: reads, then the kNN pass on helper threads);
 * 2. writes the documents (vector and list) in steps, each sized to COMPACTION_STEP_MS, skipping ids in the
 *    backlog (written or deleted since the mark: the replay puts their current state);
 * 3. replaces the snapshot and its document frequencies (one turn);
 * 4. synchronises the semantic_knn edges with the stored lists in steps of memories;
 * 5. applies the backlog under the new snapshot as incremental updates, a step's worth of ids at a time,
 *    and in the turn that finds it empty clears the mark.
 * Every turn first checks that the mark is still this run's: an explicit compaction, a bulk rebuild or a forget
 * that came between supersedes it, and it stops. With no write between its steps the result is exactly
 * compactSemantic's (test/digest/compact-semantic-steps.test.ts). A run that dies leaves the mark; the next
 * relation update of the context finds it stale and starts a new run (or compacts in one turn).
 */
export async function compactSemanticInSteps(
  store: ArchiveStore,
  contextId: string,
  mark: SemanticCompactionMark,
  turn: CompactionTurn,
  options: {
    k?: number;
    signal?: AbortSignal;
    /** Fixed step sizes (tests); default: sized to COMPACTION_STEP_MS, at most the COMPACTION_*_PER_STEP. */
    sizes?: { docs?: number; edges?: number; replay?: number };
    /** The time a step aims at (default COMPACTION_STEP_MS). */
    stepMs?: number;
    /** Told the backlog ids each replay step applied. */
    onReplayed?: (ids: number) => void;
    /** The exact pass's work bound per bounded read (CompactSemanticOptions.exactWorkRatio; tests). */
    exactWorkRatio?: number;
  } = {},
): Promise<StepCompactionResult> {
  const budget = options.stepMs ?? COMPACTION_STEP_MS;
  const sizer = (fixed: number | undefined, first: number, max: number, ms = budget) =>
    fixed === undefined ? new StepSizer(ms, 1, max, first) : new StepSizer(ms, fixed, fixed);
  const docSteps = sizer(options.sizes?.docs, FIRST_STEP.docs, COMPACTION_DOCS_PER_STEP);
  const edgeSteps = sizer(options.sizes?.edges, FIRST_STEP.edges, COMPACTION_EDGES_PER_STEP);
  const replaySteps = sizer(
    options.sizes?.replay,
    FIRST_STEP.replay,
    COMPACTION_REPLAY_PER_STEP,
    options.stepMs ?? COMPACTION_REPLAY_STEP_MS,
  );
  return whileRunning(mark.token, async () => {
    const started = performance.now();
    const result: StepCompactionResult = {
      outcome: 'done',
      documents: 0,
      steps: 0,
      longestStepSeconds: 0,
      replayed: 0,
      seconds: 0,
    };
    const finish = (outcome: StepCompactionResult['outcome']) => {
      result.outcome = outcome;
      result.seconds = (performance.now() - started) / 1000;
      return result;
    };
    // One turn: runs only while the mark is this run's; undefined when it is not (or the signal stopped it).
    const step = async <T>(work: () => Promise<T>): Promise<T | undefined> => {
      // Back to the event loop before queueing the next step (the queue yields only before running a turn): a
      // write that arrived during the last step is queued ahead of this one and waits one step, not two.
      await new Promise((resolve) => setImmediate(resolve));
      // No step of this run is open here: the store's own deferred work (SQLite: a long WAL) is done now,
      // not inside a later step's COMMIT.
      await store.maintenancePause?.();
      if (options.signal?.aborted) return undefined;
      return turn(async () => {
        if (options.signal?.aborted) return undefined;
        if ((await readCompactionMark(store, contextId))?.token !== mark.token) return undefined;
        const at = performance.now();
        try {
          return await work();
        } finally {
          result.steps++;
          result.longestStepSeconds = Math.max(result.longestStepSeconds, (performance.now() - at) / 1000);
        }
      });
    };
    const stopped = () => finish(options.signal?.aborted ? 'stopped' : 'superseded');

    // Queued behind the write that set the mark: starts once it has committed.
    if ((await step(async () => true)) === undefined) return stopped();
    // The kNN pass yields to the event loop between its chunks: this thread's queued writes go between them.
    const state = await computeCompaction(store, contextId, {
      ...(options.k === undefined ? {} : { k: options.k }),
      // Automatic: an exact pass that passes its work bound gives way to the bounded one (marked approximate).
      // Exact whatever the size otherwise, as before the bound: the 5% rule itself defers contexts whose
      // snapshot holds APPROXIMATE_KNN_FROM memories (update-semantic-relations.ts).
      method: 'auto',
      approximateFrom: Number.POSITIVE_INFINITY,
      ...(options.exactWorkRatio === undefined ? {} : { exactWorkRatio: options.exactWorkRatio }),
      pause: () =>
        new Promise((resolve, reject) =>
          setImmediate(() => {
            // A stopped run does not finish its pass (its mark makes a later write start a new run).
            if (options.signal?.aborted) reject(new Error('compaction stopped'));
            else resolve();
          }),
        ),
    }).catch((error: unknown) => {
      if (options.signal?.aborted) return undefined;
      throw error;
    });
    if (state === undefined) return stopped();
    result.documents = state.space.size;
    const skip = new BacklogIds(store, contextId);

    for (let from = 0; from < state.space.size; ) {
      const to = Math.min(state.space.size, from + docSteps.next);
      const wrote = await step(async () => {
        const at = performance.now();
        await skip.refresh();
        const put = [];
        for (let d = from; d < to; d++) if (!skip.has(state.space.ids[d]!)) put.push(state.doc(d));
        await store.semantic.writeDocs(contextId, { put });
        await writeCompactionMark(store, contextId, { ...mark, at: new Date().toISOString() });
        docSteps.took(to - from, performance.now() - at);
        return true;
      });
      if (wrote === undefined) return stopped();
      from = to;
    }
    if ((await step(() => writeSnapshot(store, contextId, state))) === undefined) return stopped();

    const ids = state.space.ids;
    for (let from = 0; from < ids.length; ) {
      const chunk = ids.slice(from, from + edgeSteps.next);
      const synced = await step(async () => {
        const at = performance.now();
        await syncSemanticEdges(store, contextId, chunk);
        edgeSteps.took(chunk.length, performance.now() - at);
        return true;
      });
      if (synced === undefined) return stopped();
      from += chunk.length;
    }

    for (;;) {
      const left = await step(async () => {
        const at = performance.now();
        const replayed = await replayBacklog(store, contextId, replaySteps.next);
        replaySteps.took(replayed.applied, performance.now() - at);
        return replayed;
      });
      if (left === undefined) return stopped();
      result.replayed += left.applied;
      options.onReplayed?.(left.applied);
      if (left.done) return finish('done');
    }
  });
}

/** The new snapshot: the state's size, k and document frequencies; `changes` back to 0. */
async function writeSnapshot(
  store: ArchiveStore,
  contextId: string,
  state: ComputedCompaction,
): Promise<true> {
  const createdAt = new Date().toISOString();
  // As compactSemantic: lists of the bounded pass are marked with the snapshot they start from.
  if (state.approximate) await writeApproximateMark(store, contextId, approximateMarkOf(state, createdAt));
  await store.semantic.replaceSnapshot!(contextId, {
    space: 'tfidf',
    documents: state.space.size,
    k: state.k,
    createdAt,
    df: state.df,
  });
  return true;
}

/**
 * Applies up to `perStep` backlog ids (at least one), oldest rows first, as one incremental update of their
 * current state, and drops what it applied: a row taken in part is written back with the ids left (the
 * replay reads each id's current state, so the order within and across rows does not matter). Before round 32
 * a step took whole rows, at least one: behind a 102-memory add of 2 KB texts a step took ~1.5 s, and every
 * other user's write waited for it. When no row is left the mark goes in the same turn, so no write lands
 * between the last replay and the end of the backlog.
 */
async function replayBacklog(
  store: ArchiveStore,
  contextId: string,
  perStep: number,
): Promise<{ applied: number; done: boolean }> {
  const { ids, settle } = await takeBacklog(store, contextId, perStep);
  if (ids.length > 0) {
    // The backlog is this compaction's own remainder: never a second compaction from it.
    await updateSemanticKnn(store, contextId, await currentState(store, contextId, ids), {
      compactBulk: false,
    });
  }
  const done = await settle();
  if (done) await writeCompactionMark(store, contextId, undefined);
  return { applied: ids.length, done };
}

/** The ids in the backlog so far, read again before each step (new rows only). */
class BacklogIds {
  private readonly seen = new Set<string>();
  private readonly ids = new Set<string>();
  constructor(
    private readonly store: ArchiveStore,
    private readonly contextId: string,
  ) {}

  async refresh(): Promise<void> {
    for (const key of await backlogKeys(this.store, this.contextId)) {
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      for (const id of (await this.store.getMeta<string[]>(key)) ?? []) this.ids.add(id);
    }
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }
}

/**
 * A run that failed half-way (a store error): the state it left is mixed, so the context is compacted in one
 * turn (compactSemantic reads every record and clears the mark and the backlog), unless a newer run or a
 * forget owns it by then.
 */
export async function recoverFailedRun(
  store: ArchiveStore,
  contextId: string,
  mark: SemanticCompactionMark,
  compactNow: () => Promise<unknown>,
): Promise<boolean> {
  if ((await readCompactionMark(store, contextId))?.token !== mark.token) return false;
  if ((await store.countMemories(contextId)) === 0) {
    await clearCompactionState(store, contextId);
    return false;
  }
  await compactNow();
  return true;
}
