import { bm25Idf, bm25TermScore, commonOnlyKinds, queryTerms } from '../../retrieval/bm25-index.ts';
import { compareHits, TopHits } from '../../retrieval/top-hits.ts';
import { VIEW_KINDS, type ViewHit, type ViewKind } from '../../types/view.ts';
import type { LexicalSearchOptions } from '../archive-store-spec.ts';
import { dictionaryKey } from '../lexical-dictionary-key.ts';
import { lexicalWorkBounds } from '../lexical-work-bounds.ts';
import {
  assess,
  type Cursor,
  type Doc,
  fold,
  keepScoredBound,
  openFrontier,
  type Plan,
  postgresLexicalCounters,
  stopAtRowsBound,
} from './postgres-lexical-maxscore.ts';
import { searchSubset } from './postgres-lexical-subset.ts';
import type { PostingTuple, SearchBatches } from './postgres-posting-batches.ts';
import type { Sql } from './postgres-session.ts';

/*
 * The statements are named (prepared once per pooled connection): planning the lateral batch query
 * cost about as much as running it. Postings and completed tfs leave the server as one JSON array per list
 * (json_agg): the driver parsed ~500 posting rows per question at ~3 us each (field by field, then a row
 * object), JSON.parse the same values for a tenth of that; the server's JSON building costs ~1.5 us per
 * posting (round 12: client CPU -1.7 ms, server +0.5 ms per question at 10k). Doubles are exact (the read
 * unit sets extra_float_digits).
 */
/** Postings read per list in the first round (at least; 2 x limit), doubling each round up to MAX_BATCH. */
const FIRST_BATCH = 64;
/** A list at most this many times the batch is read whole at once: a second round would cost more. */
const WHOLE_LIST = 2;
/** Relative margin of the bounded test (as the MaxScore bounds': scores are sums of a few doubles). */
const BOUND_MARGIN = 1e-9;

export { postgresLexicalCounters };

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
  options: LexicalSearchOptions,
  /** The store's kept posting batches, inside a read unit of the context (postgres-posting-batches.ts). */
  batches?: SearchBatches,
): Promise<ViewHit[]> {
  const terms = queryTerms(query);
  if (terms.length === 0 || options.limit <= 0) return [];
  if (options.memoryIds !== undefined) {
    if (options.memoryIds.length === 0) return [];
    return searchSubset(sql, contextId, terms.map(dictionaryKey), options, [...new Set(options.memoryIds)]);
  }
  postgresLexicalCounters.searches++;
  const plans = await planSearch(sql, contextId, terms.map(dictionaryKey), options, batches);
  if (plans.length === 0) return [];
  const limit = options.limit;
  const bounds = lexicalWorkBounds(options.work);
  const lists = plans.flatMap((plan) => plan.cursors);
  for (const plan of plans) stopAtRowsBound(plan, bounds.rows);
  for (;;) {
    const open = lists.filter((cursor) => !cursor.done && !cursor.plan.finished);
    if (open.length === 0) break;
    await readRound(sql, contextId, open, batches);
    for (const plan of plans) if (!plan.finished) assess(plan, limit);
    for (const plan of plans) stopAtRowsBound(plan, bounds.rows);
  }
  const dropped = plans.map((plan) => keepScoredBound(plan, bounds.scored));
  await completeCandidates(sql, plans);
  const hits: ViewHit[] = [];
  plans.forEach((plan, at) => {
    const top = new TopHits(limit);
    for (const doc of plan.docs.values()) {
      let rawScore = 0;
      plan.cursors.forEach((cursor, at) => {
        const tf = doc.tfs[at]!;
        if (tf > 0) rawScore += bm25TermScore(cursor.idf, tf, doc.length, plan.averageLength);
      });
      top.offer({ memoryId: doc.memoryId, kind: plan.kind, key: doc.key, rawScore });
    }
    const found = top.sorted();
    // Bounded when a document never read (the open lists' frontier) or dropped unscored could have ranked.
    const missed = Math.max(plan.stopped ? openFrontier(plan) : 0, dropped[at]!);
    const worst = found.length < limit ? undefined : found[found.length - 1]!.rawScore;
    if (missed > 0 && (worst === undefined || missed * (1 + BOUND_MARGIN) >= worst)) {
      postgresLexicalCounters.bounded++;
      options.onBounded?.(plan.kind);
    }
    hits.push(...found);
  });
  return hits.sort(compareHits);
}

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
  options: { limit: number; kinds?: readonly ViewKind[]; skipCommonOnlyKinds?: boolean },
  batches: SearchBatches | undefined,
): Promise<Plan[]> {
  const first = Math.max(FIRST_BATCH, 2 * options.limit);
  // First batches kept under the generation the plan assumes: their postings are not sent ("kind term").
  const assumed = batches?.assumed;
  const kept = new Map<string, readonly PostingTuple[]>();
  if (assumed !== undefined) {
    for (const kind of options.kinds ?? VIEW_KINDS) {
      for (const key of keys) {
        const batch = batches!.get(assumed, kind, key, 0, first);
        if (batch) kept.set(`${kind} ${key}`, batch);
      }
    }
  }
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
       CASE WHEN (d.kind || ' ' || d.term) = ANY($6::text[]) THEN NULL ELSE (SELECT ${POSTINGS_JSON} FROM
         (SELECT p.doc, p.tf, p.length, p.impact, p.memory_id, p.key FROM lex_postings p
          WHERE p.context_id = $1 AND p.kind = d.kind AND p.term = d.term
          ORDER BY p.impact DESC, p.doc DESC LIMIT CASE WHEN d.df <= $5 THEN d.df ELSE $4 END) p) END
     FROM d`,
    values: [contextId, keys, options.kinds ?? null, first, WHOLE_LIST * first, [...kept.keys()]],
  });
  // The unit's generation arrived with the plan (its BEGIN went out in front): kept batches serve only it.
  const generation = batches?.generation();
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
  // A left-out kind is planned as if it held no query term; its first batches, which came with the plan, are
  // not read.
  if (options.skipCommonOnlyKinds) {
    const stats = new Map(
      [...fields].map(([kind, field]) => [kind, { docs: field.docs, dfs: [...field.df.values()] }]),
    );
    for (const kind of commonOnlyKinds(stats)) fields.delete(kind);
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
      stopped: false,
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
  const read = new Map<Cursor, readonly PostingTuple[]>();
  for (const row of result.rows) {
    if (row.postings === null || row.term === null) continue;
    // A left-out kind's lists have no cursor.
    const cursor = cursors.get(`${row.kind}\u0000${row.term}`);
    if (cursor) read.set(cursor, parsePostings(row.postings));
  }
  const batchesRead = new Map(read);
  const skipped = lists.filter((cursor) => kept.has(`${cursor.plan.kind} ${cursor.term}`));
  if (generation !== undefined && generation === assumed) {
    for (const cursor of skipped) read.set(cursor, kept.get(`${cursor.plan.kind} ${cursor.term}`)!);
  } else if (skipped.length > 0) {
    // The context changed since the store last saw it: the skipped lists' first batches, read now.
    postgresLexicalCounters.keptListsReread++;
    for (const [cursor, batch] of await fetchBatches(sql, contextId, skipped)) {
      read.set(cursor, batch);
      batchesRead.set(cursor, batch);
    }
  }
  if (generation !== undefined) {
    for (const [cursor, batch] of batchesRead)
      batches!.set(generation, cursor.plan.kind, cursor.term, 0, first, batch);
  }
  fold(
    [...read].map(([cursor, postings]) => ({ cursor, postings })),
    lists,
  );
  for (const plan of plans) assess(plan, options.limit);
  return plans;
}

/**
 * The next batch of each open list, best impact first, folded into the plans' documents: batches kept under
 * the unit's generation, the others by ONE statement (none when all were kept).
 */
async function readRound(
  sql: Sql,
  contextId: string,
  open: readonly Cursor[],
  batches: SearchBatches | undefined,
): Promise<void> {
  const generation = batches?.generation();
  const lists: { cursor: Cursor; postings: readonly PostingTuple[] }[] = [];
  const missing: Cursor[] = [];
  for (const cursor of open) {
    const batch =
      generation === undefined
        ? undefined
        : batches!.get(generation, cursor.plan.kind, cursor.term, cursor.read, cursor.batch);
    if (batch) lists.push({ cursor, postings: batch });
    else missing.push(cursor);
  }
  if (missing.length > 0) {
    for (const [cursor, postings] of await fetchBatches(sql, contextId, missing)) {
      lists.push({ cursor, postings });
      if (generation !== undefined) {
        batches!.set(generation, cursor.plan.kind, cursor.term, cursor.read, cursor.batch, postings);
      }
    }
  }
  fold(lists, open);
}

/** One statement: the next batch (`batch` postings below the keyset) of each list; an exhausted list: []. */
async function fetchBatches(
  sql: Sql,
  contextId: string,
  cursors: readonly Cursor[],
): Promise<Map<Cursor, PostingTuple[]>> {
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
      cursors.map((cursor) => cursor.list),
      cursors.map((cursor) => cursor.plan.kind),
      cursors.map((cursor) => cursor.term),
      cursors.map((cursor) => cursor.impact),
      cursors.map((cursor) => cursor.doc),
      cursors.map((cursor) => cursor.batch),
    ],
  });
  const byList = new Map(cursors.map((cursor) => [cursor.list, cursor]));
  const out = new Map<Cursor, PostingTuple[]>(cursors.map((cursor) => [cursor, []]));
  for (const row of rows.rows) {
    if (row.postings !== null) out.set(byList.get(row.i)!, parsePostings(row.postings));
  }
  return out;
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
