import type Database from 'better-sqlite3';
import { BM25_K1, bm25Idf, bm25TermScore, commonOnlyKinds, queryTerms } from '../retrieval/bm25-index.ts';
import { compareHits, TopHits } from '../retrieval/top-hits.ts';
import type { ViewHit, ViewKind } from '../types/view.ts';
import type { LexicalSearchOptions } from './archive-store-spec.ts';
import { CandidateOrder, LexicalAccumulators } from './lexical-accumulators.ts';
import { dictionaryKey } from './lexical-dictionary-key.ts';
import { forwardWords, readTermFrequencies } from './lexical-forward-lists.ts';
import { BOUND_MARGIN, bitOf, ceiling, fewCandidates, kthLargest } from './lexical-score-bounds.ts';
import { type CachedDocument, DocumentCache, PostingsCache } from './lexical-search-cache.ts';
import { lexicalWorkBounds } from './lexical-work-bounds.ts';
import { QueryTermSlots } from './query-term-slots.ts';

/** Impact buckets per term: a bucket's bounds are 1/64 of k1 + 1 apart (about 3% of a typical tf-part). */
export const IMPACT_BUCKETS = 64;

/** Bucket of a posting: its BM25 tf-part at the field's reference length, quantised (0 = lowest). */
export function impactBucket(tf: number, length: number, referenceLength: number): number {
  const share = bm25TermScore(1, tf, length, referenceLength) / (BM25_K1 + 1);
  return Math.min(IMPACT_BUCKETS - 1, Math.floor(share * IMPACT_BUCKETS));
}

/** The FTS5 token of a (field, term, bucket) doclist: plain ASCII, so the ascii tokenizer keeps it whole. */
export function bucketToken(field: number, term: number, bucket: number): string {
  return `f${field}t${term}b${bucket}`;
}

/** Documents per random-access statement. */
const CHUNK = 2048;
/** Rows read per doclist page: small first (most queries stop early), doubling up to the cap. */
const FIRST_PAGE = 64;
const MAX_PAGE = 16384;
/** A pass over the accumulators is due once the rows consumed since the last reach 1 / SCAN_SHARE of them. */
const SCAN_SHARE = 4;

export interface FieldRow {
  id: number;
  kind: ViewKind;
  docs: number;
  total_length: number;
  reference_length: number;
}

interface Cursor {
  term: number;
  idf: number;
  /**
   * Non-empty buckets, best first, with their document counts (the postings cache's array, shared); `at` is
   * the one being read.
   */
  readonly buckets: readonly { bucket: number; docs: number }[];
  at: number;
  /** Last rowid read in the current bucket; the next page starts after it. */
  after: number;
  pageSize: number;
  /** Rows not read yet: the cost of draining the list. */
  left: number;
  /** The page read but not consumed yet, all from bucket `rowsBucket`. */
  rows: number[];
  rowsBucket: number;
  /** Upper bound of this term's contribution for every document not consumed from its list yet. */
  bound: number;
}

/**
 * Work counters of this process's lexical searches (never reset here): postings pages consumed and passes
 * over the accumulators, candidates left for exact scoring and those scored. Tests and probes read differences
 * to check that the passes stay amortised and that scoring stops early.
 */
export const lexicalSearchWork = { pages: 0, rows: 0, passes: 0, candidates: 0, scored: 0, bounded: 0 };

const statementCache = new WeakMap<Database.Database, ReturnType<typeof prepareSearchStatements>>();

/**
 * Exact top-k BM25 per field over impact-ordered postings, without reading every matching document:
 * 1. No-random-access pass (Fagin, Lotem & Naor 2003, NRA): read the query terms' lists best bucket first,
 *    the list whose bound falls most per row next (short lists of rare terms drain first; long lists of
 *    common terms are read only as deep as needed, MaxScore's idea). Each document read gets a lower and an
 *    upper bound from its buckets; the k-th largest lower bound is a threshold no final top-k score is below.
 * 2. Stop when the sum of the lists' frontier bounds is below the threshold (no unread document can rank, not
 *    even on a tie-break) and few candidates remain; documents whose upper bound misses it are dropped.
 * 3. Exact scores of the candidates from their forward lists, summed in query-term order with
 *    bm25TermScore as Bm25Index does, so hits and scores equal a fresh Bm25Index over the same views.
 * The whole search is one read transaction (a consistent snapshot even while another connection writes).
 */
export function searchLexicalIndex(
  db: Database.Database,
  termIds: ReadonlyMap<string, number>,
  contextId: string,
  query: string,
  options: LexicalSearchOptions,
  learn?: (term: string, id: number) => void,
): ViewHit[] {
  const terms = queryTerms(query);
  if (terms.length === 0 || options.limit <= 0) return [];
  let s = statementCache.get(db);
  if (!s) {
    s = prepareSearchStatements(db);
    statementCache.set(db, s);
  }
  const statements = s;
  const subset = options.memoryIds;
  if (subset !== undefined) {
    return db.transaction(() =>
      searchSubset(statements, termIds, contextId, terms, subset, options, learn),
    )();
  }
  const search = (cached: boolean) =>
    db.transaction(() => {
      // Read inside the transaction, the version is the snapshot's: every cached and fresh read below is of
      // one state (a commit by another connection after BEGIN is not seen by either), with one read lock.
      if (cached) statements.cache.validate(statements.dataVersion.get() as number);
      const fields = statements.cache.fields(contextId, () =>
        (statements.fields.all(contextId) as FieldRow[]).filter((f) => f.docs > 0),
      );
      if (fields.length === 0) return [];
      const wanted = options.kinds ? new Set(options.kinds) : undefined;
      const ids = resolveTermIds(statements, termIds, terms, learn, statements.cache.absentTerms());
      if (ids.length === 0) return [];
      const bounds = lexicalWorkBounds(options.work);
      // Each field's statistics read once (the buckets' cache is bypassed inside a caller's transaction).
      const searched = fields
        .filter((field) => !wanted || wanted.has(field.kind))
        .map((field) => ({ field, buckets: termBuckets(statements, field, ids) }));
      const skipped = options.skipCommonOnlyKinds
        ? commonOnlyKinds(
            new Map(
              searched.map(({ field, buckets }) => [
                field.kind,
                { docs: field.docs, dfs: [...buckets.values()].map(sumDocs) },
              ]),
            ),
          )
        : new Set<ViewKind>();
      const hits: ViewHit[] = [];
      for (const { field, buckets } of searched) {
        if (skipped.has(field.kind)) continue;
        const found = searchField(statements, field, buckets, ids, options.limit, bounds);
        if (found.bounded) {
          lexicalSearchWork.bounded++;
          options.onBounded?.(field.kind);
        }
        hits.push(...found.hits);
      }
      return hits.sort(compareHits);
    })();
  // Inside a caller's transaction the reads may see uncommitted rows: no cache.
  if (db.inTransaction) return statements.cache.bypass(() => search(false));
  return search(true);
}

/**
 * BM25 restricted to the views of `memoryIds` (a filtered question's selective candidate set): the forward
 * lists of just those documents are read through lex_docs(memory_id, field) and scored with the field's
 * statistics, so every score equals the unrestricted search's score of that view. Cost follows the ids.
 */
function searchSubset(
  s: ReturnType<typeof prepareSearchStatements>,
  known: ReadonlyMap<string, number>,
  contextId: string,
  terms: readonly string[],
  memoryIds: readonly string[],
  options: { limit: number; kinds?: readonly ViewKind[]; skipCommonOnlyKinds?: boolean },
  learn: ((term: string, id: number) => void) | undefined,
): ViewHit[] {
  if (memoryIds.length === 0) return [];
  const fields = (s.fields.all(contextId) as FieldRow[]).filter((f) => f.docs > 0);
  const wanted = options.kinds ? new Set(options.kinds) : undefined;
  const ids = resolveTermIds(s, known, terms, learn);
  if (ids.length === 0) return [];
  const position = new Map(ids.map((term, i) => [term, i]));
  const hits: ViewHit[] = [];
  // Each field's df of every query term (0: not held), before any scoring: the common-only rule compares kinds.
  const searched = fields
    .filter((field) => !wanted || wanted.has(field.kind))
    .map((field) => {
      const df = new Float64Array(ids.length);
      for (const row of s.stats.all(field.id, JSON.stringify(ids)) as { term: number; docs: number }[]) {
        df[position.get(row.term)!]! += row.docs;
      }
      return { field, df };
    });
  const skipped = options.skipCommonOnlyKinds
    ? commonOnlyKinds(
        new Map(
          searched.map(({ field, df }) => [
            field.kind,
            { docs: field.docs, dfs: [...df].filter((d) => d > 0) },
          ]),
        ),
      )
    : new Set<ViewKind>();
  for (const { field, df } of searched) {
    if (skipped.has(field.kind)) continue;
    const averageLength = field.total_length / field.docs;
    const idf = df.map((d) => (d > 0 ? bm25Idf(field.docs, d) : 0));
    const top = new TopHits(options.limit);
    const tfs = new Float64Array(ids.length);
    const slots = QueryTermSlots.of(ids);
    for (let from = 0; from < memoryIds.length; from += CHUNK) {
      const chunk = JSON.stringify(memoryIds.slice(from, from + CHUNK));
      for (const row of s.subsetDocs.all(field.id, chunk) as [string, string, Buffer][]) {
        const length = readTermFrequencies(forwardWords(row[2]), slots, tfs);
        let rawScore = 0;
        for (let at = 0; at < ids.length; at++) {
          if (tfs[at]! > 0 && idf[at]! > 0)
            rawScore += bm25TermScore(idf[at]!, tfs[at]!, length, averageLength);
        }
        if (rawScore > 0) top.offer({ memoryId: row[0], kind: field.kind, key: row[1], rawScore });
      }
    }
    hits.push(...top.sorted());
  }
  return hits.sort(compareHits);
}

/**
 * Query term ids in query order; terms the dictionary has never seen cannot match and are dropped (and are
 * not remembered past this state of the file: another writer may add them). Ids found are passed to `learn`
 * (they never change). `absent` (PostingsCache.absentTerms) holds terms found missing under the current
 * state: a question's words that no memory uses were looked up (and hashed) again by every question.
 */
function resolveTermIds(
  s: ReturnType<typeof prepareSearchStatements>,
  known: ReadonlyMap<string, number>,
  terms: readonly string[],
  learn: ((term: string, id: number) => void) | undefined,
  absent?: Set<string>,
): number[] {
  const found = new Map<string, number>();
  const missing = new Map(
    terms
      .filter((term) => !known.has(term) && absent?.has(term) !== true)
      .map((term) => [dictionaryKey(term), term]),
  );
  if (missing.size > 0) {
    for (const row of s.termIds.all(JSON.stringify([...missing.keys()])) as { term: string; id: number }[]) {
      found.set(missing.get(row.term)!, row.id);
      learn?.(missing.get(row.term)!, row.id);
    }
    if (absent !== undefined) for (const term of missing.values()) if (!found.has(term)) absent.add(term);
  }
  return terms.flatMap((term) => {
    const id = known.get(term) ?? found.get(term);
    return id === undefined ? [] : [id];
  });
}

interface FieldHits {
  hits: ViewHit[];
  /** A work bound stopped the search while an unread or unscored document could still have ranked. */
  bounded: boolean;
}

/** The non-empty buckets of the query terms a field holds, best first, through the connection's cache. */
function termBuckets(
  s: ReturnType<typeof prepareSearchStatements>,
  field: FieldRow,
  termIds: readonly number[],
): ReadonlyMap<number, readonly { bucket: number; docs: number }[]> {
  return s.cache.termStats(field.id, termIds, (missing) => {
    const read = new Map<number, { bucket: number; docs: number }[]>();
    for (const row of s.stats.all(field.id, JSON.stringify(missing)) as {
      term: number;
      bucket: number;
      docs: number;
    }[]) {
      const list = read.get(row.term) ?? [];
      list.push({ bucket: row.bucket, docs: row.docs });
      read.set(row.term, list);
    }
    // Best bucket first, sorted once as read (the cache hands the same arrays to every later search).
    for (const list of read.values()) list.sort((x, y) => y.bucket - x.bucket);
    return read;
  });
}

/** A term's df: the documents of its buckets. */
function sumDocs(buckets: readonly { docs: number }[]): number {
  return buckets.reduce((sum, b) => sum + b.docs, 0);
}

function searchField(
  s: ReturnType<typeof prepareSearchStatements>,
  field: FieldRow,
  buckets: ReadonlyMap<number, readonly { bucket: number; docs: number }[]>,
  termIds: readonly number[],
  limit: number,
  bounds: { rows: number; scored: number },
): FieldHits {
  const n = field.docs;
  const averageLength = field.total_length / n;
  // Query order is kept (it is the summation order of every score).
  const cursors: Cursor[] = termIds
    .filter((term) => buckets.has(term))
    .map((term) => {
      const list = buckets.get(term)!;
      const df = list.reduce((sum, b) => sum + b.docs, 0);
      return {
        term,
        idf: bm25Idf(n, df),
        buckets: list,
        at: 0,
        after: 0,
        pageSize: FIRST_PAGE,
        left: df,
        rows: [],
        rowsBucket: 0,
        bound: 0,
      };
    });
  if (cursors.length === 0) return { hits: [], bounded: false };
  // A bucket b holds tf-parts in [b, b + 1) / IMPACT_BUCKETS of (k1 + 1) at the field's reference length; at
  // the current average length the true tf-part lies within a factor average / reference of that
  // (docs/store-lexical-index.md), which gives per-posting lower and upper bounds without reading tf.
  const ratio = averageLength / field.reference_length;
  const upper = ((BM25_K1 + 1) * Math.max(1, ratio)) / IMPACT_BUCKETS;
  const lower = ((BM25_K1 + 1) * Math.min(1, ratio)) / IMPACT_BUCKETS;
  for (const cursor of cursors) cursor.bound = cursor.idf * (cursor.buckets[0]!.bucket + 1) * upper;
  // Documents read so far; one proven unable to reach the top k is marked dead and never revisited.
  const accumulators = LexicalAccumulators.fresh();
  let threshold = Number.NEGATIVE_INFINITY;
  let readSinceSafe = 0;
  // Rows consumed since the last pass over every accumulator (the threshold, the candidate count). Both
  // passes cost the accumulators' size; run after every page (as before) they made a common-term search
  // quadratic: 66k accumulators x ~200 pages was ~80 ms of one warm question at 300k memories (issue #10).
  // A pass is due once the rows consumed since the last one reach SCAN_SHARE of the accumulators, so passes
  // cost at most a constant times the rows read. Between passes the threshold is stale, i.e. lower than
  // the current one: still a valid lower bound of the final k-th score (lower bounds only rise), so kills and
  // the stop test stay exact, only later; the candidates are cut with a fresh threshold below.
  let sinceScan = 0;
  let rowsRead = 0;
  for (;;) {
    let sum = 0;
    let next: Cursor | undefined;
    for (const cursor of cursors) {
      sum += cursor.bound;
      if (cursor.bound > 0 && (!next || cursor.bound * next.left > next.bound * cursor.left)) next = cursor;
    }
    const scan = sinceScan * SCAN_SHARE >= accumulators.size;
    if (scan) {
      threshold = kthLargest(accumulators, limit);
      sinceScan = 0;
      lexicalSearchWork.passes++;
    }
    // Once no unread document can rank, reading on only narrows the candidates; stop when they are few, or
    // when scoring them directly (one random access each, ~16 sequential rows' cost) is cheaper than reading.
    // 16, not 8: at 300k memories a cold candidate cost ~4 us against ~0.25 us a postings row, and >> 4
    // cut the probe's p99 from ~40 to ~27 ms (docs/living-archive.md "A question").
    if (threshold > sum * (1 + BOUND_MARGIN)) {
      if (scan && fewCandidates(accumulators, cursors, threshold, limit * 4 + 512 + (readSinceSafe >> 4)))
        break;
    } else {
      readSinceSafe = 0;
    }
    if (!next || rowsRead >= bounds.rows) break;
    if (next.rows.length === 0) readPage(s, field.id, next, bounds.rows - rowsRead);
    rowsRead += next.rows.length;
    lexicalSearchWork.rows += next.rows.length;
    readSinceSafe += next.rows.length;
    lexicalSearchWork.pages++;
    sinceScan += next.rows.length;
    const bit = bitOf(cursors.indexOf(next));
    // Elsewhere a newly met document scores at most the other lists' frontier bounds.
    const others = sum - next.bound;
    const low = next.idf * next.rowsBucket * lower;
    const high = next.idf * (next.rowsBucket + 1) * upper;
    const hopeless = threshold > (high + others) * (1 + BOUND_MARGIN);
    for (const doc of next.rows) {
      const slot = accumulators.slot(doc);
      if (slot > 0) {
        accumulators.low[slot - 1]! += low;
        accumulators.high[slot - 1]! += high;
        accumulators.mask[slot - 1]! |= bit;
      } else if (slot === 0) {
        if (hopeless) accumulators.kill(doc);
        else accumulators.add(doc, low, high, bit);
      }
    }
    next.rows = [];
    // Unconsumed rows are in the current bucket (when the page was full) or in the buckets after it.
    const current = next.buckets[next.at];
    next.bound = current ? next.idf * (current.bucket + 1) * upper : 0;
  }
  if (sinceScan > 0) threshold = kthLargest(accumulators, limit);
  const scored = scoreCandidates(
    s,
    field,
    cursors,
    accumulators,
    threshold,
    averageLength,
    limit,
    bounds.scored,
  );
  // Stopped by the rows bound: a document never read scores at most the lists' frontiers together.
  let unread = 0;
  for (const cursor of cursors) unread += cursor.bound;
  const worst = scored.hits.length < limit ? undefined : scored.hits[scored.hits.length - 1]!.rawScore;
  const unreadMayRank = unread > 0 && (worst === undefined || unread * (1 + BOUND_MARGIN) >= worst);
  return { hits: scored.hits, bounded: scored.bounded || (rowsRead >= bounds.rows && unreadMayRank) };
}

/**
 * Exact scores (forward lists, summed in query order as Bm25Index does) of the documents that may rank.
 * Forward lists come from the connection's DocumentCache when a recent search read them (a lex_docs row never
 * changes: ids are never reused), else from one statement per chunk that also brings the names.
 * Candidates are scored best ceiling first: once `limit` hits are kept, a candidate whose ceiling is below the
 * worst kept score cannot rank, nor can any after it (ceilings descend, the worst kept score only rises), so
 * the rest are never read. About half of a 10k question's text candidates were scored for nothing.
 */
function scoreCandidates(
  s: ReturnType<typeof prepareSearchStatements>,
  field: FieldRow,
  cursors: readonly Cursor[],
  accumulators: LexicalAccumulators,
  threshold: number,
  averageLength: number,
  limit: number,
  scoredBound: number,
): FieldHits {
  const order = CandidateOrder.fresh();
  for (let at = 0; at < accumulators.size; at++) {
    const high = ceiling(accumulators, at, cursors) * (1 + BOUND_MARGIN);
    if (high >= threshold) order.add(accumulators.docs[at]!, high);
  }
  lexicalSearchWork.candidates += order.size;
  order.heapify();
  const slots = QueryTermSlots.of(cursors.map((cursor) => cursor.term));
  const tfs = new Float64Array(cursors.length);
  const top = new TopHits(limit);
  // Whether a candidate with this (margined) ceiling may still rank: its exact score is at most the ceiling,
  // and a score strictly below the worst kept one is rejected whatever its ids (compareHits: score first).
  const mayRank = (high: number): boolean => {
    const worst = top.worst;
    return !top.full || worst === undefined || high >= worst.rawScore;
  };
  const score = (doc: CachedDocument): void => {
    lexicalSearchWork.scored++;
    const length = readTermFrequencies(doc.terms, slots, tfs);
    let rawScore = 0;
    for (let at = 0; at < cursors.length; at++) {
      if (tfs[at]! > 0) rawScore += bm25TermScore(cursors[at]!.idf, tfs[at]!, length, averageLength);
    }
    // No hit object for a score below the worst kept hit's (rejected whatever its ids).
    const worst = top.worst;
    if (top.full && worst !== undefined && rawScore < worst.rawScore) return;
    top.offer({ memoryId: doc.memoryId, kind: field.kind, key: doc.key, rawScore });
  };
  // Cached lists first, best ceiling first; the others wait for one read of those still able to rank then.
  const missing: number[] = [];
  const missingHigh: number[] = [];
  // Past the bound the rest are not taken: equal ceilings come out earliest-written first (CandidateOrder),
  // so which candidates a bounded search scores does not depend on what the caches hold.
  let taken = 0;
  while (order.size > 0 && taken < scoredBound && mayRank(order.topHigh)) {
    taken++;
    const high = order.topHigh;
    const doc = order.take();
    const cached = s.documents.get(doc);
    if (cached) score(cached);
    else {
      missing.push(doc);
      missingHigh.push(high);
    }
  }
  const read: number[] = [];
  for (let at = 0; at < missing.length; at++) if (mayRank(missingHigh[at]!)) read.push(missing[at]!);
  // Ascending ids: the IN-list probes walk the lex_docs B-tree in order.
  read.sort((x, y) => x - y);
  for (let from = 0; from < read.length; from += CHUNK) {
    const chunk = JSON.stringify(read.slice(from, from + CHUNK));
    for (const row of s.documentsById.all(chunk) as [number, string, string, Buffer][]) {
      const doc = { memoryId: row[1], key: row[2], terms: forwardWords(row[3]) };
      s.documents.set(row[0], doc);
      score(doc);
    }
  }
  // Bounded only when a candidate left could still have ranked (with every taken one scored, this does not
  // depend on the order cached and read candidates were scored in).
  return { hits: top.sorted(), bounded: order.size > 0 && mayRank(order.topHigh) };
}

export function lexicalIndexWritten(db: Database.Database): void {
  statementCache.get(db)?.cache.markWritten();
}

/** Reads the next page of a cursor's current bucket, moving to the next bucket when it is drained. */
function readPage(
  s: ReturnType<typeof prepareSearchStatements>,
  field: number,
  cursor: Cursor,
  rowsLeft: number,
): void {
  const current = cursor.buckets[cursor.at]!;
  const token = bucketToken(field, cursor.term, current.bucket);
  const requested = Math.min(cursor.pageSize, rowsLeft);
  const rows = s.cache.page(
    token,
    cursor.after,
    requested,
    () => s.page.all(token, cursor.after, requested) as number[],
  );
  cursor.rows = rows;
  cursor.rowsBucket = current.bucket;
  cursor.left = Math.max(1, cursor.left - rows.length);
  cursor.pageSize = Math.min(MAX_PAGE, requested * 2);
  if (rows.length < requested) {
    cursor.at++;
    cursor.after = 0;
  } else {
    cursor.after = rows[rows.length - 1]!;
  }
}

function prepareSearchStatements(db: Database.Database) {
  return {
    fields: db.prepare(
      'SELECT id, kind, docs, total_length, reference_length FROM lex_fields WHERE context_id = ?',
    ),
    termIds: db.prepare('SELECT term, id FROM lex_terms WHERE term IN (SELECT value FROM json_each(?))'),
    stats: db.prepare(`SELECT term, bucket, docs FROM lex_term_stats
      WHERE field = ? AND term IN (SELECT value FROM json_each(?))`),
    page: db
      .prepare('SELECT rowid FROM lex_fts WHERE lex_fts MATCH ? AND rowid > ? ORDER BY rowid LIMIT ?')
      .pluck(),
    documentsById: db
      .prepare('SELECT id, memory_id, key, terms FROM lex_docs WHERE id IN (SELECT value FROM json_each(?))')
      .raw(),
    documents: new DocumentCache(),
    cache: new PostingsCache(),
    dataVersion: db.prepare('PRAGMA data_version').pluck(),
    subsetDocs: db
      .prepare(
        'SELECT memory_id, key, terms FROM lex_docs WHERE field = ? AND memory_id IN (SELECT value FROM json_each(?))',
      )
      .raw(),
  };
}
