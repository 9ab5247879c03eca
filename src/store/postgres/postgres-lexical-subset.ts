import { bm25Idf, bm25TermScore, commonOnlyKinds } from '../../retrieval/bm25-index.ts';
import { compareHits, TopHits } from '../../retrieval/top-hits.ts';
import type { ViewHit, ViewKind } from '../../types/view.ts';
import type { Sql } from './postgres-session.ts';

/**
 * A search restricted to some memories (a filtered question's candidate set): their documents are read by
 * memory id (lex_docs_by_memory) with the query terms' tfs, and scored exactly with the context's statistics,
 * in one statement; cost follows the number of ids, not the posting lists.
 */
export async function searchSubset(
  sql: Sql,
  contextId: string,
  keys: readonly string[],
  options: { limit: number; kinds?: readonly ViewKind[]; skipCommonOnlyKinds?: boolean },
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
  const fields = new Map<
    ViewKind,
    { average: number; idfs: (number | undefined)[]; docs: number; dfs: number[] }
  >();
  for (const row of result.rows) {
    if (row.docs !== null && row.term === null) {
      fields.set(row.kind, {
        docs: row.docs,
        average: row.total_length! / row.docs,
        idfs: keys.map(() => undefined),
        dfs: [],
      });
    }
  }
  for (const row of result.rows) {
    if (row.term === null || row.df === null) continue;
    const field = fields.get(row.kind)!;
    field.dfs.push(row.df);
    keys.forEach((key, at) => {
      if (key === row.term) field.idfs[at] = bm25Idf(field.docs, row.df!);
    });
  }
  if (options.skipCommonOnlyKinds) for (const kind of commonOnlyKinds(fields)) fields.delete(kind);
  const tops = new Map<ViewKind, TopHits>();
  for (const row of result.rows) {
    if (row.tfs === null || row.memory_id === null) continue;
    const field = fields.get(row.kind);
    if (!field) continue;
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
