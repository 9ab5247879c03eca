import type { ScopeTag } from '../memory-scope-tags.ts';

/**
 * One page of memories holding every one of `tags` (two or more), in (sequence, id) order after the keyset
 * position, as ONE statement: the leapfrog join of the SQLite store (sqlite-tag-intersection.ts) written as a
 * recursive query. Each step seeks the next tag's rows (`memory_tags` keyed (context, name, value, sequence,
 * memory_id)) to the candidate with an index range and LIMIT 1; a row reached by every tag in turn is a match.
 * PostgreSQL evaluates a recursive query only as far as its reader fetches, and the matches are read through
 * LATERAL probes of their memory (the window's conditions, `where`) in the order the recursion makes them, so
 * the inner LIMIT stops the seeks once the page is full; the outer ORDER BY sorts that page only.
 *
 * `params` holds the statement's parameters so far ($1 is the context id); `where` are conditions on `m`
 * written against them; `column` (`m.record`, `m.id`) is returned under its own name. Returns the SQL; the
 * tags, keyset and limit are appended to `params`.
 */
export function tagIntersectionSql(
  tags: readonly ScopeTag[],
  params: unknown[],
  where: string,
  page: { afterSequence?: number; afterId?: string; limit?: number | undefined },
  column: string,
): string {
  // Each tag's name and value as parameters picked by CASE: an array subscript is not leakproof, so PostgreSQL
  // applied it after the row-level security policy (a scan of the table per step: 435 ms a page at 20k).
  const pick = (field: 'name' | 'value') =>
    `CASE leap.turn ${tags
      .map((tag, i) => {
        params.push(tag[field]);
        return `WHEN ${i} THEN $${params.length}::text`;
      })
      .join(' ')} END`;
  const names = pick('name');
  const values = pick('value');
  const first = tags[0]!;
  params.push(first.name, first.value);
  const firstTag = `t.name = $${params.length - 1} AND t.value = $${params.length}`;
  const k = tags.length;
  let start = '';
  if (page.afterSequence !== undefined) {
    params.push(page.afterSequence);
    if (page.afterId === undefined) start = ` AND t.sequence > $${params.length}::bigint`;
    else {
      params.push(page.afterId);
      start = ` AND (t.sequence, t.memory_id) > ($${params.length - 1}::bigint, $${params.length}::text)`;
    }
  }
  params.push(page.limit ?? null);
  const limit = `$${params.length}`;
  // A step after a match (agreed = k) seeks strictly past it; otherwise at or past the candidate, and a row
  // equal to it is one more tag agreeing.
  return `WITH RECURSIVE leap (sequence, id, agreed, turn) AS (
      (SELECT t.sequence, t.memory_id, 1, ${1 % k} FROM memory_tags t
       WHERE t.context_id = $1 AND ${firstTag}${start}
       ORDER BY t.sequence, t.memory_id LIMIT 1)
      UNION ALL
      SELECT r.sequence, r.memory_id,
        CASE WHEN leap.agreed < ${k} AND r.sequence = leap.sequence AND r.memory_id = leap.id
          THEN leap.agreed + 1 ELSE 1 END,
        (leap.turn + 1) % ${k}
      FROM leap CROSS JOIN LATERAL (
        SELECT t.sequence, t.memory_id FROM memory_tags t
        WHERE t.context_id = $1 AND t.name = ${names} AND t.value = ${values}
          AND (t.sequence, t.memory_id) >= (leap.sequence, leap.id)
          AND NOT (leap.agreed = ${k} AND t.sequence = leap.sequence AND t.memory_id = leap.id)
        ORDER BY t.sequence, t.memory_id LIMIT 1
      ) r
    )
    SELECT value AS ${column.slice(column.indexOf('.') + 1)} FROM (
      SELECT ${column} AS value, leap.sequence, leap.id FROM leap CROSS JOIN LATERAL (
        SELECT m.record, m.id FROM memories m WHERE ${where} AND m.id = leap.id
      ) m
      WHERE leap.agreed = ${k} LIMIT ${limit}
    ) page ORDER BY sequence, id`;
}
