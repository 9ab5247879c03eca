import { bm25TermScore } from '../../retrieval/bm25-index.ts';
import type { ViewKind } from '../../types/view.ts';
import type { PostingTuple } from './postgres-posting-batches.ts';

/*
 * The MaxScore bookkeeping of the PostgreSQL lexical search (postgres-lexical-search.ts, which reads the
 * postings): lists as cursors, candidate documents with their partial scores, the threshold and the stop rule.
 * Pure: no statement here.
 */

/** Relative safety margin of every bound test against rounding (scores are sums of a few doubles). */
const MARGIN = 1e-9;
/** Largest batch a list's reads grow to (each round doubles it). */
const MAX_BATCH = 16384;

/**
 * Process-wide counters of the search (tests and benchmarks read deltas): `postingsRead` against
 * `postingsInLists` (the query terms' whole posting lists in the searched fields) shows the pruning.
 */
export const postgresLexicalCounters = {
  searches: 0,
  rounds: 0,
  postingsRead: 0,
  postingsInLists: 0,
  forwardLists: 0,
  /** Plans whose skipped (kept) lists had to be read after all: the context changed since last seen. */
  keptListsReread: 0,
  /** Kinds whose search a work bound stopped while a document not read or scored could have ranked. */
  bounded: 0,
};

export interface Cursor {
  /** Index in `lists` (echoed by the batch statement) and in the plan's cursors (query order). */
  list: number;
  slot: number;
  plan: Plan;
  term: string;
  idf: number;
  df: number;
  read: number;
  batch: number;
  /** Keyset of the last posting read: the next batch starts below (impact, doc). */
  impact: number;
  doc: number;
  done: boolean;
  /** Upper bound of this term's contribution for every posting of its list not read yet. */
  bound: number;
}

export interface Doc {
  memoryId: string;
  key: string;
  length: number;
  /** tf per plan cursor, 0 = not read from that list (yet). */
  tfs: Float64Array;
  /** Sum of the exact contributions read so far: a lower bound of the final score. */
  low: number;
}

export interface Plan {
  kind: ViewKind;
  averageLength: number;
  /** max(1, average / reference length): a stored impact times this (times IDF) bounds a contribution. */
  stretch: number;
  cursors: Cursor[];
  docs: Map<number, Doc>;
  /** Documents proven unable to rank (never re-admitted with a partial score). */
  dead: Set<number>;
  threshold: number;
  /** No unread document can rank any more: rows of documents not met yet are ignored. */
  closed: boolean;
  finished: boolean;
  /** Finished by the rows bound (stopAtRowsBound), not by the exact stop rule. */
  stopped: boolean;
}

/** Folds a round's postings into the documents, then moves every list read in it (done, or its new bound). */
export function fold(
  lists: readonly { cursor: Cursor; postings: readonly PostingTuple[] }[],
  open: readonly Cursor[],
): void {
  postgresLexicalCounters.rounds++;
  const counts = new Map<Cursor, number>();
  for (const { cursor, postings } of lists) {
    postgresLexicalCounters.postingsRead += postings.length;
    counts.set(cursor, (counts.get(cursor) ?? 0) + postings.length);
    const plan = cursor.plan;
    for (const [id, tf, length, impact, memoryId, key] of postings) {
      // Keyset: the smallest (impact, doc) read, whatever order the rows came back in.
      if (impact < cursor.impact || (impact === cursor.impact && id < cursor.doc)) {
        cursor.impact = impact;
        cursor.doc = id;
      }
      if (plan.dead.has(id)) continue;
      let doc = plan.docs.get(id);
      if (!doc) {
        if (plan.closed) continue;
        doc = { memoryId, key, length, tfs: new Float64Array(plan.cursors.length), low: 0 };
        plan.docs.set(id, doc);
      }
      doc.tfs[cursor.slot] = tf;
      doc.low += bm25TermScore(cursor.idf, tf, length, plan.averageLength);
    }
  }
  for (const cursor of open) {
    if (cursor.read === 0) postgresLexicalCounters.postingsInLists += cursor.df;
    const count = counts.get(cursor) ?? 0;
    cursor.read += count;
    if (count < cursor.batch || cursor.read >= cursor.df) {
      cursor.done = true;
      cursor.bound = 0;
    } else {
      cursor.bound = cursor.idf * cursor.impact * cursor.plan.stretch;
      cursor.batch = Math.min(MAX_BATCH, cursor.batch * 2);
    }
  }
}

/**
 * Finishes a kind whose lists have given `rowsBound` postings or more together (checked after each round, so a
 * kind reads at most one round's batches past it): the work bound of one kind's search
 * (LexicalSearchOptions.work). Returns whether it stopped the kind.
 */
export function stopAtRowsBound(plan: Plan, rowsBound: number): boolean {
  if (plan.finished) return false;
  let read = 0;
  for (const cursor of plan.cursors) read += cursor.read;
  if (read < rowsBound) return false;
  plan.finished = true;
  plan.stopped = true;
  return true;
}

/** The bounds of the lists still open: no document that was never read scores more. */
export function openFrontier(plan: Plan): number {
  let frontier = 0;
  for (const cursor of plan.cursors) if (!cursor.done) frontier += cursor.bound;
  return frontier;
}

/**
 * When a kind's candidates lack more than `probeBound` tfs together (a kind stopped by its rows bound; the exact
 * stop leaves at most 4 limit + 512 candidates), keeps those with the best ceilings, equal ceilings lowest
 * document id first, while their missing tfs (one forward-list probe each, completeCandidates) fit the bound,
 * and drops the others (their partial sums are not scores). Counted in probes, not candidates: a candidate of a
 * 50-word question may miss 40 lists. Returns the highest ceiling dropped (-Infinity when none): the search is
 * bounded if it reaches the last hit's score.
 */
export function keepScoredBound(plan: Plan, probeBound: number): number {
  const incomplete: { id: number; high: number; missing: number }[] = [];
  let probes = 0;
  for (const [id, doc] of plan.docs) {
    // The ceiling's open lists are exactly the missing tfs: one pass gives both.
    let missing = 0;
    let high = doc.low;
    for (const cursor of plan.cursors) {
      if (doc.tfs[cursor.slot] !== 0 || cursor.done) continue;
      missing++;
      high += cursor.bound;
    }
    if (missing === 0) continue;
    incomplete.push({ id, high, missing });
    probes += missing;
  }
  if (probes <= probeBound) return Number.NEGATIVE_INFINITY;
  incomplete.sort((x, y) => y.high - x.high || x.id - y.id);
  let kept = 0;
  let used = 0;
  while (kept < incomplete.length && used + incomplete[kept]!.missing <= probeBound)
    used += incomplete[kept++]!.missing;
  for (const { id } of incomplete.slice(kept)) plan.docs.delete(id);
  return incomplete[kept]!.high;
}

/** Upper bound of a document's final score: what it got, plus the bound of every open list it was not read from. */
function ceiling(plan: Plan, doc: Doc): number {
  let high = doc.low;
  for (const cursor of plan.cursors) if (doc.tfs[cursor.slot] === 0 && !cursor.done) high += cursor.bound;
  return high;
}

/** After a round: the threshold, drop documents that cannot rank, decide whether the kind is finished. */
export function assess(plan: Plan, limit: number): void {
  if (plan.docs.size >= limit) {
    const lows = new Float64Array(plan.docs.size);
    let at = 0;
    for (const doc of plan.docs.values()) lows[at++] = doc.low;
    lows.sort();
    plan.threshold = lows[lows.length - limit]!;
  }
  if (plan.cursors.every((cursor) => cursor.done)) {
    plan.finished = true;
    return;
  }
  if (plan.threshold === Number.NEGATIVE_INFINITY) return;
  let incomplete = 0;
  for (const [id, doc] of plan.docs) {
    const high = ceiling(plan, doc);
    if (high * (1 + MARGIN) < plan.threshold) {
      plan.docs.delete(id);
      plan.dead.add(id);
    } else if (high !== doc.low) {
      incomplete++;
    }
  }
  if (plan.threshold > openFrontier(plan) * (1 + MARGIN)) {
    plan.closed = true;
    // Completing a candidate costs one forward-list row; reading on only pays while there are many of them.
    if (incomplete <= 4 * limit + 512) plan.finished = true;
  }
}
