import type { SemanticIndexStore, SemanticPosting, SemanticTermBound } from '../semantic-index-spec.ts';
import { BatchedReads } from './postgres-batched-reads.ts';
import type { PostgresPostingsCache, WindowRead } from './postgres-postings-cache.ts';
import type { PostgresSession, Sql } from './postgres-session.ts';

/** A documentFrequencies request of at most this many terms without kept reads reads their postings too. */
const SPECULATIVE_TERMS = 64;
/** Postings read ahead per such term: an add's search reads each query term's top k = 32 first, and the whole list of a rare one (most lists of unkept terms are short). */
const SPECULATIVE_TOP = 256;

/** The ratio of an open list (threshold 0), as in SQLite: read back as Infinity. */
export const OPEN_RATIO = 1e308;
/** A posting's ratio from its document's list threshold (OPEN_RATIO while the list is open). */
export const RATIO = `CASE WHEN d.threshold > 0 THEN p.weight / d.threshold ELSE ${OPEN_RATIO}::float8 END`;

/** The semantic index's reads that go through the kept lists (postgres-postings-cache.ts). */
export type KeptSemanticReads = Pick<SemanticIndexStore, 'documentFrequencies' | 'termBounds'> &
  Required<Pick<SemanticIndexStore, 'topPostings'>> & {
    /** A weight-ordered read of one term's postings (postings() without minRatio). */
    readWindow(contextId: string, request: WindowRead): Promise<SemanticPosting[]>;
  };

/**
 * The PostgreSQL semantic index's term reads (postgres-semantic-index.ts): document frequencies, term bounds
 * and weight-ordered posting reads. Inside a write unit that may use them (PostgresPostingsCache.usable) they
 * are answered from the kept reads where those hold the answer, and what is read is kept; elsewhere each is
 * its statement.
 */
export function keptSemanticReads(session: PostgresSession, kept: PostgresPostingsCache): KeptSemanticReads {
  const read = <T>(contextId: string, work: (sql: Sql) => Promise<T>) =>
    session.scoped(contextId, 'read', work);
  const windows = postingWindows(session);
  /** The `{ top: n }` read of each term (unique terms), all in one statement (each an index range scan). */
  const readTops = (contextId: string, terms: readonly string[], n: number) =>
    read(contextId, async (sql) => {
      const rows = await sql.query<{ term: string; memory_id: string; weight: number }>(
        `SELECT t.term, p.memory_id, p.weight FROM unnest($2::text[]) WITH ORDINALITY AS t(term, n)
         CROSS JOIN LATERAL (SELECT s.memory_id, s.weight FROM semantic_postings s
           WHERE s.context_id = $1 AND s.term = t.term ORDER BY s.weight DESC, s.memory_id LIMIT $3) p
         ORDER BY t.n, p.weight DESC, p.memory_id`,
        [contextId, [...new Set(terms)], Math.max(0, n)],
      );
      const found = new Map<string, SemanticPosting[]>(terms.map((term) => [term, []]));
      for (const row of rows.rows) found.get(row.term)!.push({ memoryId: row.memory_id, weight: row.weight });
      return found;
    });
  return {
    async readWindow(contextId, request) {
      const unit = session.prefetchFor(contextId);
      if (!kept.usable(contextId, unit)) return windows.read(contextId, request);
      const known = kept.get(contextId, request);
      if (known) return known;
      const epoch = kept.epoch;
      const rows = await windows.read(contextId, request);
      kept.keep(contextId, unit, epoch, request, rows);
      return rows;
    },

    async documentFrequencies(contextId, terms) {
      if (terms.length === 0) return new Map();
      const unit = session.prefetchFor(contextId);
      const usable = kept.usable(contextId, unit);
      const { known, missing } = usable
        ? kept.frequencies(contextId, terms)
        : { known: new Map<string, number | null>(), missing: [...new Set(terms)] };
      // The terms of a small request are an add's (its vector's); its kNN search reads their bounds and
      // heaviest postings next. Those without a kept read are read now, with the frequencies (one round trip
      // where the unit pipelines them): the search then finds them kept. Exact like any kept read.
      const unread = usable ? terms.filter((term) => kept.maxWeight(contextId, term) === undefined) : [];
      const epoch = kept.epoch;
      const ahead =
        unread.length > 0 && unread.length <= SPECULATIVE_TERMS
          ? readTops(contextId, unread, SPECULATIVE_TOP)
          : undefined;
      if (missing.length > 0) {
        const found = await read(contextId, async (sql) => {
          const rows = await sql.query<{ term: string; df: number }>(
            'SELECT term, df FROM semantic_df WHERE context_id = $1 AND term = ANY($2::text[])',
            [contextId, missing],
          );
          return new Map(rows.rows.map((row) => [row.term, row.df]));
        });
        for (const term of missing) known.set(term, found.get(term) ?? null);
        if (usable) kept.keepFrequencies(contextId, unit, missing, found);
      }
      if (ahead) {
        for (const [term, rows] of await ahead) {
          kept.keep(contextId, unit, epoch, topRead(term, SPECULATIVE_TOP), rows);
        }
      }
      const out = new Map<string, number>();
      for (const term of terms) {
        const df = known.get(term);
        if (df !== undefined && df !== null) out.set(term, df);
      }
      return out;
    },

    async termBounds(contextId, terms, options) {
      if (terms.length === 0) return new Map();
      // Without `ratio`, a bound is the first posting's weight: a kept read of the term has it.
      const out = new Map<string, SemanticTermBound>();
      let missing: readonly string[] = terms;
      if (!options?.ratio && kept.usable(contextId, session.prefetchFor(contextId))) {
        missing = terms.filter((term) => {
          const weight = kept.maxWeight(contextId, term);
          if (weight !== undefined && weight !== null) {
            out.set(term, { maxWeight: weight, maxRatio: Number.POSITIVE_INFINITY });
          }
          return weight === undefined;
        });
        if (missing.length === 0) return sortedLike(terms, out);
      }
      const found = await read(contextId, async (sql) => {
        // The first entry of each term's (weight desc) index: one probe per term (a max() over the term's
        // postings read all of them, a common term's thousands, at every add). The ratio bound reads the
        // whole list (ratios are computed from the thresholds since migration 6): only the exact reverse
        // search asks for it, and that mode grows with the context anyway. Without `ratio`, maxRatio is
        // Infinity (allowed by the port: it bounds every ratio).
        const rows = await sql.query<{ term: string; w: number | null; r: number | null }>(
          options?.ratio
            ? `SELECT t.term,
                 (SELECT p.weight FROM semantic_postings p WHERE p.context_id = $1 AND p.term = t.term
                  ORDER BY p.weight DESC LIMIT 1) AS w,
                 (SELECT max(${RATIO}) FROM semantic_postings p JOIN semantic_docs d
                  ON d.context_id = p.context_id AND d.memory_id = p.memory_id
                  WHERE p.context_id = $1 AND p.term = t.term) AS r
               FROM unnest($2::text[]) AS t(term)`
            : `SELECT t.term,
                 (SELECT p.weight FROM semantic_postings p WHERE p.context_id = $1 AND p.term = t.term
                  ORDER BY p.weight DESC LIMIT 1) AS w
               FROM unnest($2::text[]) AS t(term)`,
          [contextId, [...new Set(missing)]],
        );
        return new Map(rows.rows.map((row) => [row.term, row]));
      });
      for (const term of missing) {
        const row = found.get(term);
        if (row?.w === null || row?.w === undefined) continue;
        out.set(term, {
          maxWeight: row.w,
          maxRatio:
            row.r === undefined || row.r === null || row.r >= OPEN_RATIO ? Number.POSITIVE_INFINITY : row.r,
        });
      }
      return sortedLike(terms, out);
    },

    async topPostings(contextId, terms, n) {
      const out = new Map<string, SemanticPosting[]>(terms.map((term) => [term, []]));
      if (terms.length === 0) return out;
      const unit = session.prefetchFor(contextId);
      const usable = kept.usable(contextId, unit);
      // Terms whose read is kept are not read again; the others are kept once read.
      const missing = usable
        ? [...new Set(terms)].filter((term) => {
            const rows = kept.get(contextId, topRead(term, n));
            if (rows) out.set(term, rows);
            return !rows;
          })
        : terms;
      if (missing.length === 0) return out;
      const epoch = kept.epoch;
      for (const [term, rows] of await readTops(contextId, missing, n)) {
        out.set(term, rows);
        if (usable) kept.keep(contextId, unit, epoch, topRead(term, n), rows);
      }
      return out;
    },
  };
}

/** The `{ top: n }` read of `term` as a window read. */
function topRead(term: string, n: number): WindowRead {
  return { term, min: Number.NEGATIVE_INFINITY, below: Number.POSITIVE_INFINITY, top: Math.max(0, n) };
}

/** `bounds` in the order of `terms` (the order the store's answer had before kept reads served some). */
function sortedLike(
  terms: readonly string[],
  bounds: ReadonlyMap<string, SemanticTermBound>,
): Map<string, SemanticTermBound> {
  const out = new Map<string, SemanticTermBound>();
  for (const term of terms) {
    const bound = bounds.get(term);
    if (bound) out.set(term, bound);
  }
  return out;
}

/**
 * Weight-ordered posting reads issued together as one statement (BatchedReads): a kNN search deepens several
 * terms per round. Each read is the same index range scan as alone, in a LATERAL per request; rows come back
 * grouped by request in weight desc, memory id order.
 */
function postingWindows(session: PostgresSession): BatchedReads<WindowRead, SemanticPosting[]> {
  return new BatchedReads(session, async (sql, contextId, reads) => {
    const result = await sql.query<{ n: number; memory_id: string; weight: number }>(
      `SELECT r.n, p.memory_id, p.weight
       FROM unnest($2::text[], $3::float8[], $4::float8[], $5::bigint[]) WITH ORDINALITY AS r(term, lo, hi, top, n)
       CROSS JOIN LATERAL (SELECT s.memory_id, s.weight FROM semantic_postings s
         WHERE s.context_id = $1 AND s.term = r.term AND s.weight >= r.lo AND s.weight < r.hi
         ORDER BY s.weight DESC, s.memory_id LIMIT r.top) p
       ORDER BY r.n, p.weight DESC, p.memory_id`,
      [
        contextId,
        reads.map((r) => r.term),
        reads.map((r) => r.min),
        reads.map((r) => r.below),
        reads.map((r) => r.top),
      ],
    );
    const out = reads.map((): SemanticPosting[] => []);
    for (const row of result.rows) out[row.n - 1]!.push({ memoryId: row.memory_id, weight: row.weight });
    return out;
  });
}
