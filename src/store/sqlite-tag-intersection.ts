import type Database from 'better-sqlite3';
import type { ScopeTag } from './memory-scope-tags.ts';

/** A position in (sequence, memory id) order. */
type Position = readonly [sequence: number, id: string];

/** Seeks of one tag's rows (`memory_tags`, keyed (context, name, value, sequence, memory_id)). */
export interface TagSeeks {
  /** The first row at or after the position (inclusive), or after it (strict). */
  from: Database.Statement;
  after: Database.Statement;
  /** The first row whose sequence is above a sequence (a keyset position given without an id). */
  afterSequence: Database.Statement;
}

export function prepareTagSeeks(prepare: (sql: string) => Database.Statement): TagSeeks {
  const head =
    'SELECT sequence, memory_id FROM memory_tags WHERE context_id = ? AND name = ? AND value = ? AND';
  const tail = 'ORDER BY sequence, memory_id LIMIT 1';
  return {
    from: prepare(`${head} (sequence, memory_id) >= (?, ?) ${tail}`).raw(),
    after: prepare(`${head} (sequence, memory_id) > (?, ?) ${tail}`).raw(),
    afterSequence: prepare(`${head} sequence > ? ${tail}`).raw(),
  };
}

/**
 * Memories holding every one of `tags` (two or more), in (sequence, id) order after the keyset position, until
 * `limit` of them pass `accept` (the filter's other conditions; it returns the page's value for a memory, or
 * undefined). A leapfrog join: each tag's rows are in page order, so the candidate is the largest position
 * any tag has reached and every tag seeks to it in turn; where the tags' memories sit in runs (a new app's
 * memories, one agent's year) a page costs a seek per run boundary, not a walk of either tag. Sets that
 * interleave finely still cost a seek per row of the smaller one (no index answers them faster).
 */
export function intersectTags(
  seeks: TagSeeks,
  contextId: string,
  tags: readonly ScopeTag[],
  after: { sequence?: number; id?: string },
  limit: number,
  accept: (id: string) => string | undefined,
): string[] {
  const out: string[] = [];
  if (limit === 0) return out;
  const seek = (statement: Database.Statement, tag: ScopeTag, ...at: unknown[]): Position | undefined =>
    statement.get(contextId, tag.name, tag.value, ...at) as Position | undefined;
  let candidate =
    after.sequence === undefined
      ? seek(seeks.from, tags[0]!, Number.MIN_SAFE_INTEGER, '')
      : after.id === undefined
        ? seek(seeks.afterSequence, tags[0]!, after.sequence)
        : seek(seeks.after, tags[0]!, after.sequence, after.id);
  let agreed = 1;
  let turn = 1;
  while (candidate !== undefined) {
    if (agreed === tags.length) {
      const value = accept(candidate[1]);
      if (value !== undefined) {
        out.push(value);
        if (out.length === limit) break;
      }
      candidate = seek(seeks.after, tags[turn]!, candidate[0], candidate[1]);
      agreed = 1;
    } else {
      const reached = seek(seeks.from, tags[turn]!, candidate[0], candidate[1]);
      if (reached !== undefined && reached[0] === candidate[0] && reached[1] === candidate[1]) agreed++;
      else {
        candidate = reached;
        agreed = 1;
      }
    }
    turn = (turn + 1) % tags.length;
  }
  return out;
}
