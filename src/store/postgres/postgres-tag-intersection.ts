import type { ScopeTag } from '../memory-scope-tags.ts';

/**
 * One page of memories holding every one of `tags` (two or more), in (sequence, id) order after the keyset
 * position, as ONE statement: the leapfrog join of the SQLite store (sqlite-tag-intersection.ts) written as a
 * recursive query. Each step seeks the next tag's rows (`memory_tags` keyed (context, name, value, sequence,
 * memory_id)) to the candidate with an index range and LIMIT 1; a row reached by every tag in turn is a match.
 * PostgreSQL evaluates a recursive query only as far as its reader fetches, and the matches are read through
 * LATERAL probes of their memory (the window's conditions, `where`) in the order the recursion makes them, so
 * the page's LIMIT stops the seeks once the page is full. The recursion makes at most `work` seeks after its
 * first (FILTER_PAGE_WORK; tags that interleave finely cost a seek per row of the smaller one): a page that
 * comes back short after using them up also returns a row flagged `stop`, the last position the recursion
 * decided (a match, or a candidate some tag skipped: every position up to it is known), read from the steps
 * already made (the gate on the page's size keeps it from running when the page is full).
 *
 * `params` holds the statement's parameters so far ($1 is the context id); `where` are conditions on `m`
 * written against them; `column` (`m.record`, `m.id`) is returned as `value`, with `sequence`, `id` and `stop`.
 * Returns the SQL; the tags, keyset, work and limit are appended to `params`.
 */
export function tagIntersectionSql(
  tags: readonly ScopeTag[],
  params: unknown[],
  where: string,
  page: { afterSequence?: number; afterId?: string; limit?: number | undefined },
  work: number,
  column: string,
): string {
  const k = tags.length;
  const leap = leapSql(tags, params, page, work);
  const cap = `$${params.length}`;
  params.push(page.limit ?? null);
  const limit = `$${params.length}`;
  // A step that starts a new candidate (agreed 1, after the first) decides the one before it; a match decides
  // itself. Positions only grow with the step, so the latest such step is the stop.
  return `${leap}, page AS (
      SELECT ${column} AS value, leap.sequence, leap.id FROM leap CROSS JOIN LATERAL (
        SELECT m.record, m.id FROM memories m WHERE ${where} AND m.id = leap.id LIMIT 1
      ) m
      WHERE leap.agreed = ${k} LIMIT ${limit}
    )
    (SELECT value, sequence, id, false AS stop FROM page ORDER BY sequence, id)
    UNION ALL
    (SELECT NULL, sequence, id, true FROM (
        SELECT step, agreed,
          CASE WHEN agreed = ${k} THEN sequence ELSE lag(sequence) OVER steps END AS sequence,
          CASE WHEN agreed = ${k} THEN id ELSE lag(id) OVER steps END AS id
        FROM leap WINDOW steps AS (ORDER BY step)
      ) decided
      WHERE (agreed = ${k} OR (agreed = 1 AND step > 0))
        AND (SELECT count(*) FROM page) < COALESCE(${limit}::bigint, ${Number.MAX_SAFE_INTEGER})
        AND (SELECT max(step) FROM leap) >= ${cap}::int
      ORDER BY step DESC LIMIT 1)`;
}

/** The recursive CTE `leap (sequence, id, agreed, turn, step)`: at most `work` (and at least k) steps. */
function leapSql(
  tags: readonly ScopeTag[],
  params: unknown[],
  page: { afterSequence?: number; afterId?: string },
  work: number,
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
  // At least k steps, so a page that runs out has decided at least one position past its keyset.
  params.push(Math.max(work, k));
  const cap = `$${params.length}::int`;
  // A step after a match (agreed = k) seeks strictly past it; otherwise at or past the candidate, and a row
  // equal to it is one more tag agreeing.
  return `WITH RECURSIVE leap (sequence, id, agreed, turn, step) AS (
      (SELECT t.sequence, t.memory_id, 1, ${1 % k}, 0 FROM memory_tags t
       WHERE t.context_id = $1 AND ${firstTag}${start}
       ORDER BY t.sequence, t.memory_id LIMIT 1)
      UNION ALL
      SELECT r.sequence, r.memory_id,
        CASE WHEN leap.agreed < ${k} AND r.sequence = leap.sequence AND r.memory_id = leap.id
          THEN leap.agreed + 1 ELSE 1 END,
        (leap.turn + 1) % ${k}, leap.step + 1
      FROM leap CROSS JOIN LATERAL (
        SELECT t.sequence, t.memory_id FROM memory_tags t
        WHERE t.context_id = $1 AND t.name = ${names} AND t.value = ${values}
          AND (t.sequence, t.memory_id) >= (leap.sequence, leap.id)
          AND NOT (leap.agreed = ${k} AND t.sequence = leap.sequence AND t.memory_id = leap.id)
        ORDER BY t.sequence, t.memory_id LIMIT 1
      ) r
      WHERE leap.step < ${cap}
    )`;
}
