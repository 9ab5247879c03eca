import type Database from 'better-sqlite3';
import type { FilteredPage } from './archive-store-spec.ts';
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
 * interleave finely cost a seek per row of the smaller one (no index answers them faster), so the page stops
 * once it has made `work` seeks, at the last position it decided (a candidate some tag skipped, or a match):
 * everything up to it is known, and `stoppedAfter` says where the next page goes on. At most tags.length - 1
 * seeks run past `work` before a decision, so every stopped page moves past its keyset.
 */
export function intersectTags(
  seeks: TagSeeks,
  contextId: string,
  tags: readonly ScopeTag[],
  after: { sequence?: number; id?: string },
  bounds: { limit: number; work: number },
  accept: (id: string) => string | undefined,
): FilteredPage<string> {
  const items: string[] = [];
  if (bounds.limit === 0) return { items };
  let spent = 0;
  const seek = (statement: Database.Statement, tag: ScopeTag, ...at: unknown[]): Position | undefined => {
    spent++;
    return statement.get(contextId, tag.name, tag.value, ...at) as Position | undefined;
  };
  /** After deciding `decided`: the page so far, stopped there, once the seeks are spent. */
  const stop = (decided: Position): FilteredPage<string> | undefined =>
    spent >= bounds.work ? { items, stoppedAfter: { sequence: decided[0], id: decided[1] } } : undefined;
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
        items.push(value);
        if (items.length === bounds.limit) break;
      }
      const stopped = stop(candidate);
      if (stopped) return stopped;
      candidate = seek(seeks.after, tags[turn]!, candidate[0], candidate[1]);
      agreed = 1;
    } else {
      const reached = seek(seeks.from, tags[turn]!, candidate[0], candidate[1]);
      if (reached !== undefined && reached[0] === candidate[0] && reached[1] === candidate[1]) agreed++;
      else {
        // The tag has no row from the candidate up to `reached`: the candidate and all before it are decided.
        const stopped = reached === undefined ? undefined : stop(candidate);
        if (stopped) return stopped;
        candidate = reached;
        agreed = 1;
      }
    }
    turn = (turn + 1) % tags.length;
  }
  return { items };
}
