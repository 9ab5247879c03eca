import type { LexicalSearchOptions } from './archive-store-spec.ts';
import { workWithin } from './work-bound.ts';

/**
 * Work bounds of one view kind's lexical search (SQLite and PostgreSQL; the in-memory store's reference index
 * scores everything). A question made only of words most memories hold (the metadata view's "user",
 * "message", a weekday) has no rare term to bound the others, and the exact top-k reads lists as long as the
 * context; where those words tie (equal tf in views of equal length), the exact tie-break (memory id) needs
 * every tied memory scored. Past a bound the search keeps the best it found and says so
 * (LexicalSearchOptions.onBounded; the retrieve's `lexical_search_bounded` flag).
 * Measured (docs/store-lexical-index.md "Work bounds"): the 300 bench questions read at most ~59k rows and
 * score at most ~2.7k candidates per question at 100k memories (none bounded); at 1M, 2 of them are bounded.
 */

/** Postings rows read per kind: ~65 ms of SQLite doclist reading at ~0.25 us a row. */
export const LEXICAL_ROWS_BOUND = 262_144;

/**
 * Exact-score reads per kind: SQLite candidates scored (one forward-list read each, ~8 us cold with its GC);
 * PostgreSQL forward-list probes, one per missing tf of a candidate (its postings carry the tfs it was read
 * from; a candidate of a 50-word question may miss 40 lists, so counting candidates let 16k of them cost 800k
 * probes: 4.0 s against 2.7 s unbounded at 100k, bench/worst-question-probe.ts).
 */
export const LEXICAL_SCORED_BOUND = 16_384;

/** The bounds of one search: the defaults, or smaller ones asked for (never larger, at least 1). */
export function lexicalWorkBounds(asked: LexicalSearchOptions['work']): { rows: number; scored: number } {
  return {
    rows: workWithin(asked?.rows, LEXICAL_ROWS_BOUND),
    scored: workWithin(asked?.scored, LEXICAL_SCORED_BOUND),
  };
}
