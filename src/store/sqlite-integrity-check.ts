import type Database from 'better-sqlite3';

/** The SQLite store's integrityCheck: SQLite's own checks, parsable records, kept counters against their rows. */
export function sqliteIntegrityCheck(db: Database.Database): { ok: boolean; problems: string[] } {
  const problems: string[] = [];
  for (const row of db.pragma('integrity_check') as { integrity_check: string }[]) {
    if (row.integrity_check !== 'ok') problems.push(`sqlite: ${row.integrity_check}`);
  }
  for (const row of db.pragma('foreign_key_check') as {
    table: string;
    rowid: number;
    parent: string;
  }[]) {
    problems.push(`dangling ${row.table} row ${row.rowid} (missing ${row.parent})`);
  }
  const unparsable = (
    db.prepare('SELECT context_id, id FROM memories WHERE json_valid(record) = 0').all() as {
      context_id: string;
      id: string;
    }[]
  ).map((row) => `memory ${row.context_id}/${row.id}: record is not valid JSON`);
  problems.push(...unparsable);
  // Kept counters must agree with the rows they count (integrityCheck is maintenance: it may walk).
  const drift = db
    .prepare(
      `SELECT c.context_id AS contextId, c.type AS type, c.n AS kept, COALESCE(x.n, 0) AS actual
       FROM edge_counts c LEFT JOIN (SELECT e.context_id, t.value AS type, COUNT(*) AS n
         FROM edges e, json_each(e.types) t GROUP BY e.context_id, t.value) x
       ON x.context_id = c.context_id AND x.type = c.type WHERE c.n != COALESCE(x.n, 0)`,
    )
    .all() as { contextId: string; type: string; kept: number; actual: number }[];
  for (const row of drift) {
    problems.push(`edge count ${row.contextId}/${row.type}: kept ${row.kept}, actual ${row.actual}`);
  }
  // A context being forgotten in steps (sqlite-context-forget.ts) keeps its count until its last step.
  const forgetting = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'forgetting'").get()
    ? 'WHERE c.id NOT IN (SELECT context_id FROM forgetting)'
    : '';
  const counts = db
    .prepare(
      `SELECT c.id AS contextId, c.memories AS kept, (SELECT COUNT(*) FROM memories m
       WHERE m.context_id = c.id) AS actual FROM contexts c ${forgetting}`,
    )
    .all() as { contextId: string; kept: number; actual: number }[];
  for (const row of counts) {
    if (row.kept !== row.actual)
      problems.push(`memory count ${row.contextId}: kept ${row.kept}, actual ${row.actual}`);
  }
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'vector_spaces'").get()) {
    const spaces = db
      .prepare(
        `SELECT s.context_id AS contextId, s.space AS space, s.rows AS kept, COALESCE(x.n, 0) AS actual
         FROM vector_spaces s LEFT JOIN (SELECT context_id, space, COUNT(*) AS n FROM vectors GROUP BY 1, 2) x
         ON x.context_id = s.context_id AND x.space = s.space WHERE s.rows != COALESCE(x.n, 0)`,
      )
      .all() as { contextId: string; space: string; kept: number; actual: number }[];
    for (const row of spaces) {
      problems.push(`vector count ${row.contextId}/${row.space}: kept ${row.kept}, actual ${row.actual}`);
    }
    // A trained space's rows all name a list: one that does not would never be searched.
    const unlisted = db
      .prepare(
        `SELECT i.context_id AS contextId, i.space AS space, COUNT(*) AS n FROM vector_ivf i
         JOIN vectors v ON v.context_id = i.context_id AND v.space = i.space
         WHERE v.list IS NULL OR v.list < 0 OR v.list >= i.nlist GROUP BY 1, 2`,
      )
      .all() as { contextId: string; space: string; n: number }[];
    for (const row of unlisted) {
      problems.push(
        `vector space ${row.contextId}/${row.space}: ${row.n} rows outside its stored IVF's lists`,
      );
    }
  }
  return { ok: problems.length === 0, problems };
}
