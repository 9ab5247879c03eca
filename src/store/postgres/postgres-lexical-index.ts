import { bm25TermScore, termCounts } from '../../retrieval/bm25-index.ts';
import { tokenize } from '../../retrieval/tokenize.ts';
import type { MemoryView } from '../../types/view.ts';
import { dictionaryKey } from '../lexical-dictionary-key.ts';
import type { Sql } from './postgres-session.ts';

/**
 * A posting's impact: its BM25 tf-part (the contribution per unit of IDF) at the field's reference length.
 * Postings are read in impact order; at the field's current average length the true tf-part lies between
 * impact * min(1, average / reference) and impact * max(1, average / reference) (docs/store-lexical-index.md).
 */
export function postingImpact(tf: number, length: number, referenceLength: number): number {
  return bm25TermScore(1, tf, length, referenceLength);
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
 * flush() inserts the documents and postings and applies the aggregated statistics deltas (sorted, so two
 * transactions upsert shared rows in the same order).
 */
export class PostgresLexicalBatch {
  private readonly df = new Map<string, number>();
  private readonly fields = new Map<
    string,
    { docs: number; length: number; addedDocs: number; addedLength: number }
  >();
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
    for (const doc of docs) this.addField(doc.view.kind, 1, doc.length);
    // Fields first: a new field's reference length (the impact scale of its postings) comes back from it.
    const references = await this.applyFieldDeltas();
    if (docs.length > 0) await this.insertDocs(docs, references);
    await this.applyDfDeltas();
    this.pending.length = 0;
  }

  private async insertDocs(
    docs: readonly { view: MemoryView; terms: string[]; tfs: number[]; length: number }[],
    references: ReadonlyMap<string, number>,
  ): Promise<void> {
    // Arrays of arrays cannot be unnested row-wise: the forward lists travel as JSON.
    const ids = await this.sql.query<{ id: number; memory_id: string; kind: string; key: string }>(
      `INSERT INTO lex_docs (context_id, kind, memory_id, key, length, terms, tfs)
       SELECT $1, d.kind, d.memory_id, d.key, d.length,
         ARRAY(SELECT jsonb_array_elements_text(d.terms)), ARRAY(SELECT jsonb_array_elements_text(d.tfs))::integer[]
       FROM jsonb_to_recordset($2::jsonb) AS d(n integer, kind text, memory_id text, key text, length integer,
         terms jsonb, tfs jsonb)
       ORDER BY d.n
       RETURNING id, memory_id, kind, key`,
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
      ],
    );
    // RETURNING order is not promised: ids map back through (memory, kind, key), unique per view.
    const idOf = new Map(
      ids.rows.map((row) => [`${row.memory_id}\u0000${row.kind}\u0000${row.key}`, row.id]),
    );
    const kinds: string[] = [];
    const terms: string[] = [];
    const docIds: number[] = [];
    const tfs: number[] = [];
    const lengths: number[] = [];
    const memories: string[] = [];
    const keys: string[] = [];
    const impacts: number[] = [];
    for (const doc of docs) {
      const id = idOf.get(`${doc.view.memoryId}\u0000${doc.view.kind}\u0000${doc.view.key}`)!;
      const reference = references.get(doc.view.kind)!;
      doc.terms.forEach((term, at) => {
        kinds.push(doc.view.kind);
        terms.push(term);
        docIds.push(id);
        tfs.push(doc.tfs[at]!);
        impacts.push(postingImpact(doc.tfs[at]!, doc.length, reference));
        lengths.push(doc.length);
        memories.push(doc.view.memoryId);
        keys.push(doc.view.key);
        this.addDf(doc.view.kind, term, 1);
      });
    }
    await this.sql.query(
      `INSERT INTO lex_postings (context_id, kind, term, doc, tf, length, memory_id, key, impact)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::bigint[], $5::integer[], $6::integer[], $7::text[],
         $8::text[], $9::float8[])`,
      [this.contextId, kinds, terms, docIds, tfs, lengths, memories, keys, impacts],
    );
  }

  /**
   * Applies the queued document and length deltas per field and returns every touched field's reference
   * length: fixed when the field is created (the average length of that first batch), since the impacts
   * stored with its postings are computed at it.
   */
  private async applyFieldDeltas(): Promise<Map<string, number>> {
    const fields = [...this.fields].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    this.fields.clear();
    if (fields.length === 0) return new Map();
    const rows = await this.sql.query<{ kind: string; reference_length: number | null }>(
      `INSERT INTO lex_fields (context_id, kind, docs, total_length, reference_length)
       SELECT $1, k, d, l, r FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::float8[]) AS x(k, d, l, r)
       ON CONFLICT (context_id, kind) DO UPDATE SET docs = lex_fields.docs + excluded.docs,
         total_length = lex_fields.total_length + excluded.total_length,
         reference_length = COALESCE(lex_fields.reference_length, excluded.reference_length)
       RETURNING kind, reference_length`,
      [
        this.contextId,
        fields.map(([kind]) => kind),
        fields.map(([, delta]) => delta.docs),
        fields.map(([, delta]) => delta.length),
        fields.map(([, delta]) => (delta.addedDocs > 0 ? delta.addedLength / delta.addedDocs : null)),
      ],
    );
    return new Map(
      rows.rows.flatMap((row) => (row.reference_length === null ? [] : [[row.kind, row.reference_length]])),
    );
  }

  private async applyDfDeltas(): Promise<void> {
    const df = [...this.df]
      .filter(([, delta]) => delta !== 0)
      .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    if (df.length > 0) {
      const kinds = df.map(([key]) => key.slice(0, key.indexOf('\u0000')));
      const terms = df.map(([key]) => key.slice(key.indexOf('\u0000') + 1));
      await this.sql.query(
        `INSERT INTO lex_df (context_id, kind, term, df)
         SELECT $1, k, t, d FROM unnest($2::text[], $3::text[], $4::bigint[]) AS x(k, t, d)
         ON CONFLICT (context_id, kind, term) DO UPDATE SET df = lex_df.df + excluded.df`,
        [this.contextId, kinds, terms, df.map(([, delta]) => delta)],
      );
      const dropped = df.filter(([, delta]) => delta < 0);
      if (dropped.length > 0) {
        await this.sql.query(
          `DELETE FROM lex_df WHERE context_id = $1 AND df <= 0
           AND (kind, term) IN (SELECT * FROM unnest($2::text[], $3::text[]))`,
          [
            this.contextId,
            dropped.map(([key]) => key.slice(0, key.indexOf('\u0000'))),
            dropped.map(([key]) => key.slice(key.indexOf('\u0000') + 1)),
          ],
        );
      }
    }
    this.df.clear();
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
