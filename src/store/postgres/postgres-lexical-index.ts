import { bm25Idf, bm25TermScore, queryTerms, termCounts } from '../../retrieval/bm25-index.ts';
import { tokenize } from '../../retrieval/tokenize.ts';
import { compareHits, TopHits } from '../../retrieval/top-hits.ts';
import type { MemoryView, ViewHit, ViewKind } from '../../types/view.ts';
import { dictionaryKey } from '../lexical-dictionary-key.ts';
import type { Sql } from './postgres-session.ts';

/**
 * Rows fetched beyond `limit` per kind before the exact re-scoring: the SQL ranking sums a document's term
 * contributions in an unspecified order (last-bit differences) and rounds to 1e-9 so exact ties stay ties;
 * only documents within 1e-9 of the cut could swap, and 32 extra rows cover them.
 */
const SPARE_ROWS = 32;

/**
 * The PostgreSQL lexical index: exactly Bm25Index.search over the context's current views (per (context, view
 * kind) statistics, the project tokenizer, Lucene IDF, k1 1.2, b 0.75; docs/store-lexical-index.md), kept in
 * tables updated in the transaction of every write and delete:
 * - lex_fields (context, kind): document count and total length;
 * - lex_df (context, kind, term): document frequency;
 * - lex_docs: one row per indexed view with its forward list (terms, tfs), so a delete decrements df without
 *   reading postings;
 * - lex_postings (context, kind, term, doc) INCLUDE (tf, length, memory id, key): a search reads a query
 *   term's postings from the index alone.
 * Terms are stored as dictionaryKey(term) (a sha256 prefix, not the word), as in the SQLite dictionary.
 *
 * One batch per write transaction: remove() reads and deletes the old documents at once, add() queues views,
 * flush() inserts the documents and postings and applies the aggregated statistics deltas (sorted, so two
 * transactions upsert shared rows in the same order).
 */
export class PostgresLexicalBatch {
  private readonly df = new Map<string, number>();
  private readonly fields = new Map<string, { docs: number; length: number }>();
  private readonly pending: { memoryId: string; view: MemoryView }[] = [];

  constructor(
    private readonly sql: Sql,
    private readonly contextId: string,
  ) {}

  /** Deletes the indexed documents of these memories (postings cascade) and queues their statistics. */
  async remove(memoryIds: readonly string[]): Promise<void> {
    if (memoryIds.length === 0) return;
    const removed = await this.sql.query<{ kind: string; length: number; terms: string[] }>(
      `DELETE FROM lex_docs WHERE context_id = $1 AND memory_id = ANY($2::text[])
       RETURNING kind, length, terms`,
      [this.contextId, memoryIds],
    );
    for (const row of removed.rows) {
      this.addField(row.kind, -1, -row.length);
      for (const term of row.terms) this.addDf(row.kind, term, -1);
    }
  }

  /** Queues views for flush() (empty texts never match and are skipped, as in every backend). */
  add(views: readonly MemoryView[]): void {
    for (const view of views) if (view.text !== '') this.pending.push({ memoryId: view.memoryId, view });
  }

  async flush(): Promise<void> {
    const docs: { view: MemoryView; terms: string[]; tfs: number[]; length: number }[] = [];
    for (const { view } of this.pending) {
      const tokens = tokenize(view.text);
      if (tokens.length === 0) continue;
      const counts = termCounts(tokens);
      const terms: string[] = [];
      const tfs: number[] = [];
      for (const [term, tf] of counts) {
        terms.push(dictionaryKey(term));
        tfs.push(tf);
      }
      docs.push({ view, terms, tfs, length: tokens.length });
    }
    if (docs.length > 0) await this.insertDocs(docs);
    await this.applyDeltas();
  }

  /** Documents and their postings in one statement; ids map back through (memory, kind, key), unique per view. */
  private async insertDocs(
    docs: readonly { view: MemoryView; terms: string[]; tfs: number[]; length: number }[],
  ): Promise<void> {
    const postings = { docs: [] as number[], terms: [] as string[], tfs: [] as number[] };
    docs.forEach((doc, n) => {
      this.addField(doc.view.kind, 1, doc.length);
      doc.terms.forEach((term, at) => {
        postings.docs.push(n);
        postings.terms.push(term);
        postings.tfs.push(doc.tfs[at]!);
        this.addDf(doc.view.kind, term, 1);
      });
    });
    // Arrays of arrays cannot be unnested row-wise: the documents travel as JSON.
    await this.sql.query(
      `WITH input AS (SELECT * FROM jsonb_to_recordset($2::jsonb)
         AS d(n integer, kind text, memory_id text, key text, length integer, terms jsonb, tfs jsonb)),
       inserted AS (INSERT INTO lex_docs (context_id, kind, memory_id, key, length, terms, tfs)
         SELECT $1, i.kind, i.memory_id, i.key, i.length, ARRAY(SELECT jsonb_array_elements_text(i.terms)),
           ARRAY(SELECT jsonb_array_elements_text(i.tfs))::integer[]
         FROM input i ORDER BY i.n
         RETURNING id, memory_id, kind, key)
       INSERT INTO lex_postings (context_id, kind, term, doc, tf, length, memory_id, key)
       SELECT $1, i.kind, p.term, d.id, p.tf, i.length, i.memory_id, i.key
       FROM unnest($3::integer[], $4::text[], $5::integer[]) AS p(n, term, tf)
       JOIN input i ON i.n = p.n
       JOIN inserted d ON d.memory_id = i.memory_id AND d.kind = i.kind AND d.key = i.key`,
      [
        this.contextId,
        JSON.stringify(
          docs.map((doc, n) => ({
            n,
            kind: doc.view.kind,
            memory_id: doc.view.memoryId,
            key: doc.view.key,
            length: doc.length,
            terms: doc.terms,
            tfs: doc.tfs,
          })),
        ),
        postings.docs,
        postings.terms,
        postings.tfs,
      ],
    );
  }

  private async applyDeltas(): Promise<void> {
    const df = [...this.df]
      .filter(([, delta]) => delta !== 0)
      .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    const fields = [...this.fields].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    const split = (key: string) => [
      key.slice(0, key.indexOf('\u0000')),
      key.slice(key.indexOf('\u0000') + 1),
    ];
    if (df.length > 0 || fields.length > 0) {
      // Two independent upserts, one statement (sorted keys: concurrent writers lock shared rows in one order).
      await this.sql.query(
        `WITH df AS (INSERT INTO lex_df (context_id, kind, term, df)
           SELECT $1, k, t, d FROM unnest($2::text[], $3::text[], $4::bigint[]) AS x(k, t, d)
           ON CONFLICT (context_id, kind, term) DO UPDATE SET df = lex_df.df + excluded.df)
         INSERT INTO lex_fields (context_id, kind, docs, total_length)
         SELECT $1, k, d, l FROM unnest($5::text[], $6::bigint[], $7::bigint[]) AS x(k, d, l)
         ON CONFLICT (context_id, kind) DO UPDATE SET docs = lex_fields.docs + excluded.docs,
           total_length = lex_fields.total_length + excluded.total_length`,
        [
          this.contextId,
          df.map(([key]) => split(key)[0]),
          df.map(([key]) => split(key)[1]),
          df.map(([, delta]) => delta),
          fields.map(([kind]) => kind),
          fields.map(([, delta]) => delta.docs),
          fields.map(([, delta]) => delta.length),
        ],
      );
    }
    // After the upsert (a later statement sees its result): terms no document holds any more.
    const dropped = df.filter(([, delta]) => delta < 0);
    if (dropped.length > 0) {
      await this.sql.query(
        `DELETE FROM lex_df WHERE context_id = $1 AND df <= 0
         AND (kind, term) IN (SELECT * FROM unnest($2::text[], $3::text[]))`,
        [this.contextId, dropped.map(([key]) => split(key)[0]), dropped.map(([key]) => split(key)[1])],
      );
    }
    this.df.clear();
    this.fields.clear();
    this.pending.length = 0;
  }

  private addDf(kind: string, term: string, delta: number): void {
    const key = `${kind}\u0000${term}`;
    this.df.set(key, (this.df.get(key) ?? 0) + delta);
  }

  private addField(kind: string, docs: number, length: number): void {
    const delta = this.fields.get(kind) ?? { docs: 0, length: 0 };
    delta.docs += docs;
    delta.length += length;
    this.fields.set(kind, delta);
  }
}

/**
 * Top `limit` hits per view kind, equal to Bm25Index.search over the context's current views. One statement
 * reads the statistics of the query terms (N, df, total length per kind), which give each term's IDF here
 * with bm25Idf; a second ranks, per kind, the documents holding any query term from the covering postings
 * index (one UNION ALL branch per kind, each a top-N sort) and returns the best limit + SPARE_ROWS with their
 * tfs; the exact score of each is then summed here in query-term order with bm25TermScore (bit-identical to
 * the other backends) and ordered by compareHits. Work is bounded by the query terms' postings in the
 * context's fields, never by other contexts or the archive.
 */
export async function searchPostgresLexical(
  sql: Sql,
  contextId: string,
  query: string,
  options: { limit: number; kinds?: readonly ViewKind[]; memoryIds?: readonly string[] },
): Promise<ViewHit[]> {
  const terms = queryTerms(query);
  if (terms.length === 0 || options.limit <= 0) return [];
  if (options.memoryIds !== undefined && options.memoryIds.length === 0) return [];
  // A filtered question's candidate set restricts the postings read (before ranking), scores unchanged.
  const subset = options.memoryIds === undefined ? null : [...new Set(options.memoryIds)];
  const keys = terms.map(dictionaryKey);
  const wanted = options.kinds ? new Set<string>(options.kinds) : undefined;
  const stats = await sql.query<{
    kind: ViewKind;
    docs: number;
    total_length: number;
    term: string | null;
    df: number | null;
  }>(
    `SELECT f.kind, f.docs, f.total_length, d.term, d.df FROM lex_fields f
     LEFT JOIN lex_df d ON d.context_id = f.context_id AND d.kind = f.kind AND d.term = ANY($2::text[]) AND d.df > 0
     WHERE f.context_id = $1 AND f.docs > 0`,
    [contextId, keys],
  );
  const fields = new Map<ViewKind, { docs: number; averageLength: number; df: Map<string, number> }>();
  for (const row of stats.rows) {
    if (wanted && !wanted.has(row.kind)) continue;
    let field = fields.get(row.kind);
    if (!field) {
      field = { docs: row.docs, averageLength: row.total_length / row.docs, df: new Map() };
      fields.set(row.kind, field);
    }
    if (row.term !== null && row.df !== null) field.df.set(row.term, row.df);
  }
  // Per kind, in query order (the summation order of every score): the IDF of each term the kind holds.
  const plans: {
    kind: ViewKind;
    averageLength: number;
    idfs: (number | undefined)[];
    positions: number[];
  }[] = [];
  for (const [kind, field] of fields) {
    const idfs = keys.map((key) => {
      const n = field.df.get(key);
      return n === undefined ? undefined : bm25Idf(field.docs, n);
    });
    const positions = idfs.flatMap((idf, at) => (idf === undefined ? [] : [at]));
    if (positions.length > 0) plans.push({ kind, averageLength: field.averageLength, idfs, positions });
  }
  if (plans.length === 0) return [];
  const q = {
    kinds: [] as string[],
    terms: [] as string[],
    idfs: [] as number[],
    averages: [] as number[],
    positions: [] as number[],
  };
  for (const plan of plans) {
    for (const at of plan.positions) {
      q.kinds.push(plan.kind);
      q.terms.push(keys[at]!);
      q.idfs.push(plan.idfs[at]!);
      q.averages.push(plan.averageLength);
      q.positions.push(at);
    }
  }
  // The SQL score orders only: rounded to 1e-9 so exact ties stay ties whatever the summation order.
  // The candidate set (a filtered question) is the last parameter: NULL reads every posting.
  const subsetParam = 8 + plans.length;
  const branch = (kindParam: number) => `(SELECT p.kind, p.memory_id, p.key, min(p.length) AS length,
      array_agg(q.pos) AS pos, array_agg(p.tf) AS tfs
    FROM q JOIN lex_postings p ON p.context_id = $1 AND p.kind = q.kind AND p.term = q.term
      AND ($${subsetParam}::text[] IS NULL OR p.memory_id = ANY($${subsetParam}::text[]))
    WHERE q.kind = $${kindParam}
    GROUP BY p.kind, p.doc, p.memory_id, p.key
    ORDER BY round(sum(q.idf * p.tf * 2.2 / (p.tf + 1.2 * (0.25 + 0.75 * p.length / q.average))) * 1e9) DESC,
      p.memory_id, p.key
    LIMIT $7)`;
  const rows = await sql.query<{
    kind: ViewKind;
    memory_id: string;
    key: string;
    length: number;
    pos: number[];
    tfs: number[];
  }>(
    `WITH q AS MATERIALIZED (SELECT * FROM unnest($2::text[], $3::text[], $4::float8[], $5::float8[], $6::integer[])
       AS q(kind, term, idf, average, pos))
     ${plans.map((_, i) => branch(8 + i)).join(' UNION ALL ')}`,
    [
      contextId,
      q.kinds,
      q.terms,
      q.idfs,
      q.averages,
      q.positions,
      options.limit + SPARE_ROWS,
      ...plans.map((plan) => plan.kind),
      subset,
    ],
  );
  const hits: ViewHit[] = [];
  const tfAt = new Float64Array(keys.length);
  for (const plan of plans) {
    const top = new TopHits(options.limit);
    for (const row of rows.rows) {
      if (row.kind !== plan.kind) continue;
      tfAt.fill(0);
      row.pos.forEach((at, i) => {
        tfAt[at] = row.tfs[i]!;
      });
      let rawScore = 0;
      for (const at of plan.positions) {
        if (tfAt[at]! > 0)
          rawScore += bm25TermScore(plan.idfs[at]!, tfAt[at]!, row.length, plan.averageLength);
      }
      top.offer({ memoryId: row.memory_id, kind: plan.kind, key: row.key, rawScore });
    }
    hits.push(...top.sorted());
  }
  return hits.sort(compareHits);
}
