import { termCounts } from '../../retrieval/bm25-index.ts';
import { tokenize } from '../../retrieval/tokenize.ts';
import type { MemoryView } from '../../types/view.ts';
import { dictionaryKey } from '../lexical-dictionary-key.ts';
import type { Sql } from './postgres-session.ts';

/**
 * A posting's impact in SQL: its BM25 tf-part (the contribution per unit of IDF, bm25TermScore(1, ...)) at
 * the field's reference length, k1 1.2, b 0.75. Postings are read in impact order; at the field's current
 * average length the true tf-part lies between impact * min(1, average / reference) and
 * impact * max(1, average / reference) (docs/store-lexical-index.md). Migration 3 backfills the same
 * expression. It only orders postings and bounds scores (with a margin), never enters a score.
 */
const impactSql = (tf: string, length: string, reference: string) =>
  `${tf} * 2.2::float8 / (${tf} + 1.2::float8 * (0.25::float8 + 0.75::float8 * ${length} / ${reference}))`;

/** Statistics deltas of a batch: (kind NUL term, df delta) and (kind, field delta), sorted by key. */
interface Deltas {
  df: [string, number][];
  fields: [string, { docs: number; length: number; addedDocs: number; addedLength: number }][];
}

const splitKey = (key: string): [string, string] => [
  key.slice(0, key.indexOf('\u0000')),
  key.slice(key.indexOf('\u0000') + 1),
];

/**
 * An array parameter as its literal, `{a,b}`, when no element needs quoting (integers, dictionary keys:
 * base64url); the driver's encoder quotes and escapes every element (~10,000 postings per ingest batch).
 * Anything else is returned as is, for the driver.
 */
export function plainArray(values: readonly (string | number)[]): string | readonly (string | number)[] {
  for (const value of values) {
    if (typeof value === 'number' ? !Number.isSafeInteger(value) : !PLAIN_ELEMENT.test(value)) return values;
  }
  return `{${values.join(',')}}`;
}

/** Elements an array literal takes unquoted (not NULL: that word is the null element, any case). */
const PLAIN_ELEMENT = /^(?![Nn][Uu][Ll][Ll]$)[A-Za-z0-9_-]+$/;

/** The df upsert as a CTE named `df`: $1 context, $2 kinds, $3 terms, $4 deltas. */
const DF_UPSERT_CTE = `df AS (INSERT INTO lex_df (context_id, kind, term, df)
  SELECT $1, k, t, d FROM unnest($2::text[], $3::text[], $4::bigint[]) AS x(k, t, d)
  ON CONFLICT (context_id, kind, term) DO UPDATE SET df = lex_df.df + excluded.df)`;

/**
 * The fields upsert: $5 kinds, $6 document deltas, $7 length deltas, $8 the reference length a new field
 * gets (the average length of the batch's added documents of that kind).
 */
const FIELDS_UPSERT = `INSERT INTO lex_fields (context_id, kind, docs, total_length, reference_length)
  SELECT $1, k, d, l, r FROM unnest($5::text[], $6::bigint[], $7::bigint[], $8::float8[]) AS x(k, d, l, r)
  ON CONFLICT (context_id, kind) DO UPDATE SET docs = lex_fields.docs + excluded.docs,
    total_length = lex_fields.total_length + excluded.total_length,
    reference_length = COALESCE(lex_fields.reference_length, excluded.reference_length)`;

/** $1..$8 of DF_UPSERT_CTE and FIELDS_UPSERT. */
function deltaParams(contextId: string, { df, fields }: Deltas): unknown[] {
  return [
    contextId,
    plainArray(df.map(([key]) => splitKey(key)[0])),
    plainArray(df.map(([key]) => splitKey(key)[1])),
    plainArray(df.map(([, delta]) => delta)),
    fields.map(([kind]) => kind),
    fields.map(([, delta]) => delta.docs),
    fields.map(([, delta]) => delta.length),
    fields.map(([, delta]) => (delta.addedDocs > 0 ? delta.addedLength / delta.addedDocs : null)),
  ];
}

/**
 * The PostgreSQL lexical index: exactly Bm25Index.search over the context's current views (per (context, view
 * kind) statistics, the project tokenizer, Lucene IDF, k1 1.2, b 0.75; docs/store-lexical-index.md), kept in
 * tables updated in the transaction of every write and delete:
 * - lex_fields (context, kind): document count, total length and the reference length of the impacts;
 * - lex_df (context, kind, term): document frequency;
 * - lex_docs: one row per indexed view with its forward list (terms, tfs), so a delete decrements df without
 *   reading postings;
 * - lex_postings (context, kind, term, impact, doc) INCLUDE (tf, length, memory id, key): a search reads a
 *   query term's postings best first from the index alone (postgres-lexical-search.ts).
 * Terms are stored as dictionaryKey(term) (a sha256 prefix, not the word), as in the SQLite dictionary.
 *
 * One batch per write transaction: remove() reads and deletes the old documents at once, add() queues views,
 * flush() applies the aggregated statistics deltas (sorted, so two transactions upsert shared rows in the same
 * order; a new field gets its reference length, the average length of this first batch), then inserts the
 * documents and postings, whose impacts the statement computes from that reference length.
 */
export class PostgresLexicalBatch {
  private readonly df = new Map<string, number>();
  private readonly fields = new Map<
    string,
    { docs: number; length: number; addedDocs: number; addedLength: number }
  >();
  private readonly pending: { memoryId: string; view: MemoryView }[] = [];
  /** df keys the last deltas decremented (dropEmptyTerms deletes those left at 0). */
  private dropped: string[] = [];

  constructor(
    private readonly sql: Sql,
    private readonly contextId: string,
  ) {}

  /** Deletes the indexed documents of these memories (postings cascade) and queues their statistics. */
  async remove(memoryIds: readonly string[]): Promise<void> {
    if (memoryIds.length === 0) return;
    // The documents' postings go in the same statement (no cascade since migration 8).
    const removed = await this.sql.query<{ kind: string; length: number; terms: string[] }>(
      `WITH d AS (DELETE FROM lex_docs WHERE context_id = $1 AND memory_id = ANY($2::text[])
         RETURNING id, kind, length, terms),
       p AS (DELETE FROM lex_postings WHERE context_id = $1 AND doc IN (SELECT id FROM d))
       SELECT kind, length, terms FROM d`,
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
    // A batch's views share most of their terms (a sha256 each was ~15% of an ingest's Node CPU); the
    // words are held only for this flush.
    const keys = new Map<string, string>();
    for (const { view } of this.pending) {
      const tokens = tokenize(view.text);
      if (tokens.length === 0) continue;
      const counts = termCounts(tokens);
      const terms: string[] = [];
      const tfs: number[] = [];
      for (const [term, tf] of counts) {
        let key = keys.get(term);
        if (key === undefined) {
          key = dictionaryKey(term);
          keys.set(term, key);
        }
        terms.push(key);
        tfs.push(tf);
      }
      docs.push({ view, terms, tfs, length: tokens.length });
    }
    for (const doc of docs) {
      this.addField(doc.view.kind, 1, doc.length);
      for (const term of doc.terms) this.addDf(doc.view.kind, term, 1);
    }
    // With documents to insert, the statistics ride in the documents' statement (one round trip, not two).
    if (docs.length > 0) await this.insertDocs(docs, this.takeDeltas());
    else await this.applyDeltas(this.takeDeltas());
    await this.dropEmptyTerms();
    this.pending.length = 0;
  }

  /**
   * The statistics deltas, the documents and their postings in ONE statement; ids map back through (memory,
   * kind, key), unique per view. The postings' impacts take each field's reference length from the fields
   * upsert's RETURNING (a sibling CTE's writes are not visible to a join on lex_fields, its RETURNING is):
   * every document's kind has a delta in the batch, so every field it needs is returned, with the reference
   * length a new field gets here (the average length of this first batch) or the one it kept.
   */
  private async insertDocs(
    docs: readonly { view: MemoryView; terms: string[]; tfs: number[]; length: number }[],
    deltas: Deltas,
  ): Promise<void> {
    const postings = { docs: [] as number[], terms: [] as string[], tfs: [] as number[] };
    docs.forEach((doc, n) => {
      doc.terms.forEach((term, at) => {
        postings.docs.push(n);
        postings.terms.push(term);
        postings.tfs.push(doc.tfs[at]!);
      });
    });
    // Arrays of arrays cannot be unnested row-wise: the documents travel as JSON.
    await this.sql.query(
      `WITH ${DF_UPSERT_CTE}, fields AS (${FIELDS_UPSERT} RETURNING kind, reference_length),
       input AS (SELECT * FROM jsonb_to_recordset($9::jsonb)
         AS d(n integer, kind text, memory_id text, key text, length integer, terms jsonb, tfs jsonb)),
       inserted AS (INSERT INTO lex_docs (context_id, kind, memory_id, key, length, terms, tfs)
         SELECT $1, i.kind, i.memory_id, i.key, i.length, ARRAY(SELECT jsonb_array_elements_text(i.terms)),
           ARRAY(SELECT jsonb_array_elements_text(i.tfs))::integer[]
         FROM input i ORDER BY i.n
         RETURNING id, memory_id, kind, key)
       INSERT INTO lex_postings (context_id, kind, term, doc, tf, length, memory_id, key, impact)
       SELECT $1, i.kind, p.term, d.id, p.tf, i.length, i.memory_id, i.key,
         ${impactSql('p.tf', 'i.length', 'f.reference_length')}
       FROM unnest($10::integer[], $11::text[], $12::integer[]) AS p(n, term, tf)
       JOIN input i ON i.n = p.n
       JOIN inserted d ON d.memory_id = i.memory_id AND d.kind = i.kind AND d.key = i.key
       JOIN fields f ON f.kind = i.kind`,
      [
        ...deltaParams(this.contextId, deltas),
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
        plainArray(postings.docs),
        plainArray(postings.terms),
        plainArray(postings.tfs),
      ],
    );
  }

  /** The batch's statistics deltas, sorted (two transactions upsert shared rows in the same order), cleared. */
  private takeDeltas(): Deltas {
    const byKey = ([x]: [string, unknown], [y]: [string, unknown]) => (x < y ? -1 : x > y ? 1 : 0);
    const deltas = {
      df: [...this.df].filter(([, delta]) => delta !== 0).sort(byKey),
      fields: [...this.fields].sort(byKey),
    };
    this.dropped = deltas.df.filter(([, delta]) => delta < 0).map(([key]) => key);
    this.df.clear();
    this.fields.clear();
    return deltas;
  }

  /** The statistics alone (a batch that only removes documents). */
  private async applyDeltas(deltas: Deltas): Promise<void> {
    if (deltas.df.length === 0 && deltas.fields.length === 0) return;
    // Two independent upserts, one statement.
    await this.sql.query(`WITH ${DF_UPSERT_CTE} ${FIELDS_UPSERT}`, deltaParams(this.contextId, deltas));
  }

  /** After the upsert (a later statement sees its result): terms no document holds any more. */
  private async dropEmptyTerms(): Promise<void> {
    if (this.dropped.length === 0) return;
    await this.sql.query(
      `DELETE FROM lex_df WHERE context_id = $1 AND df <= 0
       AND (kind, term) IN (SELECT * FROM unnest($2::text[], $3::text[]))`,
      [
        this.contextId,
        this.dropped.map((key) => splitKey(key)[0]),
        this.dropped.map((key) => splitKey(key)[1]),
      ],
    );
    this.dropped = [];
  }

  private addDf(kind: string, term: string, delta: number): void {
    const key = `${kind}\u0000${term}`;
    this.df.set(key, (this.df.get(key) ?? 0) + delta);
  }

  private addField(kind: string, docs: number, length: number): void {
    const delta = this.fields.get(kind) ?? { docs: 0, length: 0, addedDocs: 0, addedLength: 0 };
    delta.docs += docs;
    delta.length += length;
    if (docs > 0) {
      delta.addedDocs += docs;
      delta.addedLength += length;
    }
    this.fields.set(kind, delta);
  }
}

/** Views read per batch by reindexPostgresLexical. */
const REINDEX_PAGE = 5000;

/**
 * Rebuilds the lexical index of every context from its stored views with the current tokenizer (a migration
 * after a TOKENIZER_VERSION change). Runs inside the migration's transaction: it empties the four lexical
 * tables, then per context sets `graphmemix.context_id` (the row-level security check of the inserts) and
 * indexes the views in pages through PostgresLexicalBatch, the path of every write. A field's reference
 * length becomes the average of its first page (it only orders postings; scores never depend on it).
 */
export async function reindexPostgresLexical(client: Sql): Promise<void> {
  await client.query('TRUNCATE lex_postings, lex_docs, lex_df, lex_fields');
  await client.query("SELECT set_config('graphmemix.all_contexts', 'on', true)");
  const contexts = await client.query<{ id: string }>('SELECT id FROM contexts ORDER BY id');
  for (const { id: contextId } of contexts.rows) {
    await client.query("SELECT set_config('graphmemix.context_id', $1, true)", [contextId]);
    let after: [string, string, string] = ['', '', ''];
    for (;;) {
      const page = await client.query<{
        memoryId: string;
        kind: MemoryView['kind'];
        key: string;
        text: string;
      }>(
        `SELECT memory_id AS "memoryId", kind, key, text FROM views
         WHERE context_id = $1 AND (memory_id, kind, key) > ($2, $3, $4) AND text <> ''
         ORDER BY memory_id, kind, key LIMIT ${REINDEX_PAGE}`,
        [contextId, ...after],
      );
      if (page.rows.length === 0) break;
      const batch = new PostgresLexicalBatch(client, contextId);
      batch.add(page.rows);
      await batch.flush();
      const last = page.rows[page.rows.length - 1]!;
      after = [last.memoryId, last.kind, last.key];
      if (page.rows.length < REINDEX_PAGE) break;
    }
  }
  // Readers keep posting batches under a context's read generation (schema 10), which only writes of
  // memories and edges move: a rebuild renumbers every document, so it moves them all itself.
  const generation = await client.query(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = 'contexts' AND column_name = 'generation'`,
  );
  if (generation.rows.length > 0) {
    await client.query("UPDATE contexts SET generation = nextval('context_generations')");
  }
}
