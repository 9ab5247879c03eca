import type { Sql } from './postgres-session.ts';

/**
 * Maintenance check of the PostgreSQL store (runs on the cross-context path; it may walk every row): kept
 * counters against the rows they count,  lexical statistics against the indexed documents;
 * records are JSON.stringify output written in the same statement as their columns. Foreign keys and CHECKs are enforced by the server; the
 * rows without one since migration 8 (lexical postings: the df check sees a stray one; semantic postings and
 * lists) are checked against their parents here.
 */
export async function integrityProblems(sql: Sql): Promise<string[]> {
  const problems: string[] = [];
  const edgeDrift = await sql.query<{ context_id: string; type: string; kept: number; actual: number }>(
    `SELECT c.context_id, c.type, c.n AS kept, COALESCE(x.n, 0) AS actual
     FROM edge_counts c LEFT JOIN (SELECT e.context_id, t AS type, count(*) AS n
       FROM edges e, unnest(e.types) AS t GROUP BY e.context_id, t) x
     ON x.context_id = c.context_id AND x.type = c.type WHERE c.n <> COALESCE(x.n, 0)`,
  );
  for (const row of edgeDrift.rows) {
    problems.push(`edge count ${row.context_id}/${row.type}: kept ${row.kept}, actual ${row.actual}`);
  }
  const counts = await sql.query<{ id: string; kept: number; actual: number }>(
    `SELECT c.id, c.memories AS kept, (SELECT count(*) FROM memories m WHERE m.context_id = c.id) AS actual
     FROM contexts c`,
  );
  for (const row of counts.rows) {
    if (row.kept !== row.actual)
      problems.push(`memory count ${row.id}: kept ${row.kept}, actual ${row.actual}`);
  }
  const fields = await sql.query<{ context_id: string; kind: string; docs: number; actual: number }>(
    `SELECT f.context_id, f.kind, f.docs, COALESCE(d.n, 0) AS actual FROM lex_fields f
     LEFT JOIN (SELECT context_id, kind, count(*) AS n FROM lex_docs GROUP BY context_id, kind) d
     ON d.context_id = f.context_id AND d.kind = f.kind WHERE f.docs <> COALESCE(d.n, 0)`,
  );
  for (const row of fields.rows) {
    problems.push(`lexical documents ${row.context_id}/${row.kind}: kept ${row.docs}, actual ${row.actual}`);
  }
  const df = await sql.query<{ n: number }>(
    `SELECT count(*) AS n FROM lex_df f FULL JOIN (SELECT context_id, kind, term, count(*) AS n FROM lex_postings
       GROUP BY context_id, kind, term) p ON p.context_id = f.context_id AND p.kind = f.kind AND p.term = f.term
     WHERE COALESCE(f.df, 0) <> COALESCE(p.n, 0)`,
  );
  if (df.rows[0]!.n > 0) problems.push(`lexical df: ${df.rows[0]!.n} terms disagree with their postings`);
  const stray = await sql.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM semantic_postings p WHERE NOT EXISTS (SELECT 1 FROM semantic_docs d
       WHERE d.context_id = p.context_id AND d.memory_id = p.memory_id))
     + (SELECT count(*) FROM semantic_neighbours n WHERE NOT EXISTS (SELECT 1 FROM semantic_docs d
       WHERE d.context_id = n.context_id AND d.memory_id = n.memory_id)) AS n`,
  );
  if (stray.rows[0]!.n > 0)
    problems.push(`semantic: ${stray.rows[0]!.n} postings or list rows without a document`);
  return problems;
}
