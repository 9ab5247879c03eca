import { bm25Idf, bm25TermScore, queryTerms } from '../../retrieval/bm25-index.ts';
import { compareHits, TopHits } from '../../retrieval/top-hits.ts';
import type { ViewHit, ViewKind } from '../../types/view.ts';
import { dictionaryKey } from '../lexical-dictionary-key.ts';
import type { Sql } from './postgres-session.ts';

/*
 * The statements are named (prepared once per pooled connection): planning the lateral batch query
 * cost about as much as running it. Postings and completed tfs leave the server as one JSON array per list
 * (json_agg): the driver parsed ~500 posting rows per question at ~3 us each (field by field, then a row
 * object), JSON.parse the same values for a tenth of that; the server's JSON building costs ~1.5 us per
 * posting (round 12: client CPU -1.7 ms, server +0.5 ms per question at 10k). Doubles are exact (the read
 * unit sets extra_float_digits).
 */
/** Relative safety margin of every bound test against rounding (scores are sums of a few doubles). */
const MARGIN = 1e-9;
/** Postings read per list in the first round (at least; 2 x limit), doubling each round up to MAX_BATCH. */
const FIRST_BATCH = 64;
const MAX_BATCH = 16384;
/** A list at most this many times the batch is read whole at once: a second round would cost more. */
const WHOLE_LIST = 2;

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
};

interface Cursor {
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

interface Doc {
  memoryId: string;
  key: string;
  length: number;
  /** tf per plan cursor, 0 = not read from that list (yet). */
  tfs: Float64Array;
  /** Sum of the exact contributions read so far: a lower bound of the final score. */
  low: number;
}

interface Plan {
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
}

/**
 * Top `limit` hits per view kind, equal (ids, order and scores) to Bm25Index.search over the context's
 * current views, without reading a common term's whole posting list:
 * 1. One statement reads the statistics of the query terms (N, df, total and reference length per kind)
 *    and the first batch of every list (planSearch).
 * 2. Rounds of ONE statement each fetch the next batch of every open (kind, term) list in impact order
 *    (index lex_postings_by_impact read backwards from a keyset), batches doubling per round. A posting
 *    carries tf and length, so each read gives a document's exact contribution for that term; the k-th
 *    largest sum read so far is a threshold no final top-k score is below, and a list's unread postings
 *    contribute at most IDF x last impact read x max(1, average / reference).
 * 3. A kind is finished when every list is read, or when the sum of its lists' bounds is below the threshold
 *    (no unread document can rank, not even on a tie-break: MaxScore's stop) and few documents that may still
 *    rank lack a term's tf. Documents whose ceiling misses the threshold are dropped as they appear.
 * 4. The missing tfs of the remaining candidates come from their forward lists (one statement), and every
 *    candidate's score is summed in query-term order with bm25TermScore (bit-identical to the other backends).
 * All inside the caller's REPEATABLE READ transaction: df and the lists are one snapshot.
 */
export async function searchPostgresLexical(
  sql: Sql,
  contextId: string,
  query: string,
  options: { limit: number; kinds?: readonly ViewKind[]; memoryIds?: readonly string[] },
): Promise<ViewHit[]> {
  const terms = queryTerms(query);
  if (terms.length === 0 || options.limit <= 0) return [];
  if (options.memoryIds !== undefined) {
    if (options.memoryIds.length === 0) return [];
    return searchSubset(sql, contextId, terms.map(dictionaryKey), options, [...new Set(options.memoryIds)]);
  }
  postgresLexicalCounters.searches++;
  const plans = await planSearch(sql, contextId, terms.map(dictionaryKey), options);
  if (plans.length === 0) return [];
  const limit = options.limit;
  const lists = plans.flatMap((plan) => plan.cursors);
  for (;;) {
    const open = lists.filter((cursor) => !cursor.done && !cursor.plan.finished);
    if (open.length === 0) break;
    await readRound(sql, contextId, open);
    for (const plan of plans) if (!plan.finished) assess(plan, limit);
  }
  await completeCandidates(sql, plans);
  const hits: ViewHit[] = [];
  for (const plan of plans) {
    const top = new TopHits(limit);
    for (const doc of plan.docs.values()) {
      let rawScore = 0;
      plan.cursors.forEach((cursor, at) => {
        const tf = doc.tfs[at]!;
        if (tf > 0) rawScore += bm25TermScore(cursor.idf, tf, doc.length, plan.averageLength);
      });
      top.offer({ memoryId: doc.memoryId, kind: plan.kind, key: doc.key, rawScore });
    }
    hits.push(...top.sorted());
  }
  return hits.sort(compareHits);
}

/** A posting as the statements send it (a JSON array per list): doc, tf, length, impact, memory id, key. */
type PostingTuple = [doc: number, tf: number, length: number, impact: number, memoryId: string, key: string];

/**
 * A list's postings as JSON text built by concatenation: json_build_array looked up its six arguments' types
 * on every call (~1.7 us per posting in the server against ~1.1). Numbers print as JSON numbers (an impact is
 * finite: a tf-part of positive lengths), the strings go through to_json (escaping any character).
 */
const POSTINGS_JSON = `'[' || string_agg('[' || p.doc || ',' || p.tf || ',' || p.length || ',' || p.impact || ','
  || to_json(p.memory_id) || ',' || to_json(p.key) || ']', ',') || ']'`;

function parsePostings(text: string): PostingTuple[] {
  return JSON.parse(text) as PostingTuple[];
}

/**
 * Statistics and the first round in ONE statement: the fields (context, wanted kinds), the df of the query
 * terms in each, and the first batch of every (kind, term) list (a short list whole). Returns the plans of
 * the kinds that hold a query term, in query-term order, with the first batch folded in.
 */
async function planSearch(
  sql: Sql,
  contextId: string,
  keys: readonly string[],
  options: { limit: number; kinds?: readonly ViewKind[] },
): Promise<Plan[]> {
  const first = Math.max(FIRST_BATCH, 2 * options.limit);
  const result = await sql.query<{
    kind: ViewKind;
    docs: number | null;
    total_length: number | null;
    reference_length: number | null;
    term: string | null;
    df: number | null;
    postings: string | null;
  }>({
    name: 'graphmemix_lex_plan',
    text: `WITH f AS MATERIALIZED (SELECT kind, docs, total_length, reference_length FROM lex_fields
         WHERE context_id = $1 AND docs > 0 AND ($3::text[] IS NULL OR kind = ANY($3::text[]))),
       d AS MATERIALIZED (SELECT d.kind, d.term, d.df FROM lex_df d JOIN f ON f.kind = d.kind
         WHERE d.context_id = $1 AND d.term = ANY($2::text[]) AND d.df > 0)
     SELECT kind, docs, total_length, reference_length, NULL::text AS term, NULL::bigint AS df, NULL::text AS postings
     FROM f
     UNION ALL
     SELECT d.kind, NULL, NULL, NULL, d.term, d.df,
       (SELECT ${POSTINGS_JSON} FROM
         (SELECT p.doc, p.tf, p.length, p.impact, p.memory_id, p.key FROM lex_postings p
          WHERE p.context_id = $1 AND p.kind = d.kind AND p.term = d.term
          ORDER BY p.impact DESC, p.doc DESC LIMIT CASE WHEN d.df <= $5 THEN d.df ELSE $4 END) p)
     FROM d`,
    values: [contextId, keys, options.kinds ?? null, first, WHOLE_LIST * first],
  });
  const fields = new Map<
    ViewKind,
    { docs: number; average: number; reference: number; df: Map<string, number> }
  >();
  for (const row of result.rows) {
    if (row.term !== null || row.docs === null) continue;
    // No reference length (not possible through the store) makes every bound infinite: no pruning.
    fields.set(row.kind, {
      docs: row.docs,
      average: row.total_length! / row.docs,
      reference: row.reference_length ?? 0,
      df: new Map(),
    });
  }
  for (const row of result.rows) {
    if (row.term !== null && row.df !== null) fields.get(row.kind)?.df.set(row.term, row.df);
  }
  const plans: Plan[] = [];
  const cursors = new Map<string, Cursor>();
  let list = 0;
  for (const [kind, field] of fields) {
    const plan: Plan = {
      kind,
      averageLength: field.average,
      stretch: field.reference > 0 ? Math.max(1, field.average / field.reference) : Number.POSITIVE_INFINITY,
      cursors: [],
      docs: new Map(),
      dead: new Set(),
      threshold: Number.NEGATIVE_INFINITY,
      closed: false,
      finished: false,
    };
    for (const key of keys) {
      const df = field.df.get(key);
      if (df === undefined) continue;
      const cursor: Cursor = {
        list: list++,
        slot: plan.cursors.length,
        plan,
        term: key,
        idf: bm25Idf(field.docs, df),
        df,
        read: 0,
        // As the statement's LIMIT: the whole list when it is short.
        batch: df <= WHOLE_LIST * first ? df : first,
        impact: Number.POSITIVE_INFINITY,
        doc: 0,
        done: false,
        bound: Number.POSITIVE_INFINITY,
      };
      plan.cursors.push(cursor);
      cursors.set(`${kind}\u0000${key}`, cursor);
    }
    if (plan.cursors.length > 0) plans.push(plan);
  }
  const lists = [...cursors.values()];
  fold(
    result.rows.flatMap((row) =>
      row.postings === null || row.term === null
        ? []
        : [{ cursor: cursors.get(`${row.kind}\u0000${row.term}`)!, postings: parsePostings(row.postings) }],
    ),
    lists,
  );
  for (const plan of plans) assess(plan, options.limit);
  return plans;
}

/** One statement: the next batch of each open list, best impact first, folded into the plans' documents. */
async function readRound(sql: Sql, contextId: string, open: readonly Cursor[]): Promise<void> {
  const rows = await sql.query<{ i: number; postings: string | null }>({
    name: 'graphmemix_lex_round',
    text: `SELECT c.i, (SELECT ${POSTINGS_JSON} FROM
         (SELECT p.doc, p.tf, p.length, p.impact, p.memory_id, p.key FROM lex_postings p
          WHERE p.context_id = $1 AND p.kind = c.kind AND p.term = c.term AND (p.impact, p.doc) < (c.impact, c.doc)
          ORDER BY p.impact DESC, p.doc DESC LIMIT c.lim) p) AS postings
     FROM unnest($2::integer[], $3::text[], $4::text[], $5::float8[], $6::bigint[], $7::integer[])
       AS c(i, kind, term, impact, doc, lim)`,
    values: [
      contextId,
      open.map((cursor) => cursor.list),
      open.map((cursor) => cursor.plan.kind),
      open.map((cursor) => cursor.term),
      open.map((cursor) => cursor.impact),
      open.map((cursor) => cursor.doc),
      open.map((cursor) => cursor.batch),
    ],
  });
  const byList = new Map(open.map((cursor) => [cursor.list, cursor]));
  fold(
    rows.rows.flatMap((row) =>
      row.postings === null ? [] : [{ cursor: byList.get(row.i)!, postings: parsePostings(row.postings) }],
    ),
    open,
  );
}

/** Folds a round's postings into the documents, then moves every list read in it (done, or its new bound). */
function fold(
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

/** Upper bound of a document's final score: what it got, plus the bound of every open list it was not read from. */
function ceiling(plan: Plan, doc: Doc): number {
  let high = doc.low;
  for (const cursor of plan.cursors) if (doc.tfs[cursor.slot] === 0 && !cursor.done) high += cursor.bound;
  return high;
}

/** After a round: the threshold, drop documents that cannot rank, decide whether the kind is finished. */
function assess(plan: Plan, limit: number): void {
  if (plan.docs.size >= limit) {
    const lows = new Float64Array(plan.docs.size);
    let at = 0;
    for (const doc of plan.docs.values()) lows[at++] = doc.low;
    lows.sort();
    plan.threshold = lows[lows.length - limit]!;
  }
  let open = 0;
  let frontier = 0;
  for (const cursor of plan.cursors) {
    if (cursor.done) continue;
    open++;
    frontier += cursor.bound;
  }
  if (open === 0) {
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
  if (plan.threshold > frontier * (1 + MARGIN)) {
    plan.closed = true;
    // Completing a candidate costs one forward-list row; reading on only pays while there are many of them.
    if (incomplete <= 4 * limit + 512) plan.finished = true;
  }
}

/**
 * The tfs of the lists a candidate was not read from (lists still open when its kind finished), from the
 * candidates' forward lists: one array lookup per (candidate, open list) pair, in one statement. Crossing every
 * candidate with every query term tested ~5x more pairs (~160 candidates, ~210 pairs per question at 10k).
 */
async function completeCandidates(sql: Sql, plans: readonly Plan[]): Promise<void> {
  const ids: number[] = [];
  const terms: string[] = [];
  const targets: { doc: Doc; slot: number }[] = [];
  for (const plan of plans) {
    const open = plan.cursors.filter((cursor) => !cursor.done);
    if (open.length === 0) continue;
    for (const [id, doc] of plan.docs) {
      let missing = false;
      for (const cursor of open) {
        if (doc.tfs[cursor.slot] !== 0) continue;
        missing = true;
        ids.push(id);
        terms.push(cursor.term);
        targets.push({ doc, slot: cursor.slot });
      }
      if (missing) postgresLexicalCounters.forwardLists++;
    }
  }
  if (targets.length === 0) return;
  // Pairs numbered from 1, answered as a flat JSON array [n, tf, n, tf, ...]; a term the document lacks
  // gives no entry (tf stays 0). LATERAL: one primary-key probe per pair whatever the plan's estimates.
  const rows = await sql.query<{ tfs: string | null }>({
    name: 'graphmemix_lex_complete',
    text: `SELECT '[' || string_agg(c.n || ',' || x.tf, ',') || ']' AS tfs
     FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS c(doc, term, n)
     CROSS JOIN LATERAL (SELECT d.tfs[array_position(d.terms, c.term)] AS tf FROM lex_docs d WHERE d.id = c.doc) x
     WHERE x.tf IS NOT NULL`,
    values: [ids, terms],
  });
  const flat = JSON.parse(rows.rows[0]?.tfs ?? '[]') as number[];
  for (let at = 0; at < flat.length; at += 2) {
    const target = targets[flat[at]! - 1]!;
    target.doc.tfs[target.slot] = flat[at + 1]!;
  }
}

/**
 * A search restricted to some memories (a filtered question's candidate set): their documents are read by
 * memory id (lex_docs_by_memory) with the query terms' tfs, and scored exactly with the context's statistics,
 * in one statement; cost follows the number of ids, not the posting lists.
 */
async function searchSubset(
  sql: Sql,
  contextId: string,
  keys: readonly string[],
  options: { limit: number; kinds?: readonly ViewKind[] },
  memoryIds: readonly string[],
): Promise<ViewHit[]> {
  const result = await sql.query<{
    kind: ViewKind;
    docs: number | null;
    total_length: number | null;
    term: string | null;
    df: number | null;
    memory_id: string | null;
    key: string | null;
    length: number | null;
    tfs: number[] | null;
  }>({
    name: 'graphmemix_lex_subset',
    text: `WITH f AS MATERIALIZED (SELECT kind, docs, total_length FROM lex_fields
         WHERE context_id = $1 AND docs > 0 AND ($3::text[] IS NULL OR kind = ANY($3::text[])))
     SELECT kind, docs, total_length, NULL::text AS term, NULL::bigint AS df, NULL::text AS memory_id,
       NULL::text AS key, NULL::integer AS length, NULL::integer[] AS tfs
     FROM f
     UNION ALL
     SELECT d.kind, NULL, NULL, d.term, d.df, NULL, NULL, NULL, NULL FROM lex_df d JOIN f ON f.kind = d.kind
     WHERE d.context_id = $1 AND d.term = ANY($2::text[]) AND d.df > 0
     UNION ALL
     SELECT x.kind, NULL, NULL, NULL, NULL, x.memory_id, x.key, x.length,
       ARRAY(SELECT COALESCE(x.tfs[array_position(x.terms, t.term)], 0)
         FROM unnest($2::text[]) WITH ORDINALITY AS t(term, n) ORDER BY t.n)
     FROM lex_docs x JOIN f ON f.kind = x.kind
     WHERE x.context_id = $1 AND x.memory_id = ANY($4::text[]) AND x.terms && $2::text[]`,
    values: [contextId, keys, options.kinds ?? null, memoryIds],
  });
  const fields = new Map<ViewKind, { average: number; idfs: (number | undefined)[]; docs: number }>();
  for (const row of result.rows) {
    if (row.docs !== null && row.term === null) {
      fields.set(row.kind, {
        docs: row.docs,
        average: row.total_length! / row.docs,
        idfs: keys.map(() => undefined),
      });
    }
  }
  for (const row of result.rows) {
    if (row.term === null || row.df === null) continue;
    const field = fields.get(row.kind)!;
    keys.forEach((key, at) => {
      if (key === row.term) field.idfs[at] = bm25Idf(field.docs, row.df!);
    });
  }
  const tops = new Map<ViewKind, TopHits>();
  for (const row of result.rows) {
    if (row.tfs === null || row.memory_id === null) continue;
    const field = fields.get(row.kind)!;
    let rawScore = 0;
    row.tfs.forEach((tf, at) => {
      const idf = field.idfs[at];
      if (tf > 0 && idf !== undefined) rawScore += bm25TermScore(idf, tf, row.length!, field.average);
    });
    let top = tops.get(row.kind);
    if (!top) {
      top = new TopHits(options.limit);
      tops.set(row.kind, top);
    }
    top.offer({ memoryId: row.memory_id, kind: row.kind, key: row.key!, rawScore });
  }
  return [...tops.values()].flatMap((top) => top.sorted()).sort(compareHits);
}
