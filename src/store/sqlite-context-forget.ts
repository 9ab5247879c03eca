import type Database from 'better-sqlite3';
import type { SqliteLexicalIndex } from './sqlite-lexical-index.ts';

/**
 * Rows one forget step deletes at most (about: rows sharing the last key value go together): ~0.1-0.2 s of
 * the file's write lock on this machine (bench/forget-probe.ts), so other writers of the file wait at most
 * that long between steps instead of the whole forget (~19 s at 100k memories, minutes at 1M).
 */
export const FORGET_STEP_ROWS = 16_384;
/**
 * What a forget step aims to take (its rows sized from the last step's time per row, StepSizer): another
 * writer waits about that long. At 100k (bench/forget-probe.ts), fixed 16,384-row steps: p50 83-94 ms, longest
 * 246-487 ms, forget 16.9-23.7 s; 25 ms: p50 24 ms, longest 126-141 ms, forget 19.6-20.8 s
 * (docs/living-archive.md "Round 27"). Longer than a compaction's 20 ms: the user's own reads and writes wait
 * out the whole forget, and a step's fixed cost is larger.
 */
export const FORGET_STEP_MS = 25;
/** The fewest rows a sized step deletes (a step must make progress whatever its last one took). */
export const FORGET_MIN_STEP_ROWS = 256;
/** The first step's rows, before any step has been timed. */
export const FORGET_FIRST_STEP_ROWS = 2048;

/**
 * FTS5 leaf pages one merge step writes at most: the documents' deletes leave their postings behind with
 * tombstones (FTS5 merge work is off while they flush), and the merge stage lets FTS5 drop them by its own
 * rule ('deletemerge') in pieces this size.
 */
const MERGE_PAGES = 128;

/**
 * Merge steps one forget runs at most: writers that keep adding segments between its steps cannot keep it
 * merging for ever. A constant, not the index's size (counting it reads the whole index: 21-25 ms warm, 0.64 s
 * cold at 1M memories, in a step that holds the write lock); 2,048 x 128 pages is ~30x the 1M archive's index.
 */
const MERGE_STEPS = 2048;

/**
 * A stage of a forget: the lexical documents, FTS5 merge work, their statistics, or a table's rows in key
 * order.
 */
type Stage =
  | { kind: 'docs' }
  | { kind: 'merge' }
  | { kind: 'stats' }
  | { kind: 'rows'; table: string; column: string };

const rows = (table: string, column: string): Stage => ({ kind: 'rows', table, column });

/**
 * What a forget deletes, in this order; each `rows` stage walks an index whose key starts with (context_id,
 * column) and whose column values are near unique (a memory id, a term), so a step is a bounded range.
 * - The lexical documents first: they are found through the memories (lex_docs has no context column).
 *   Then FTS5's merges that their deletes call for, in bounded steps.
 * - Rows that hang off memories before the memories, so no step leaves a dangling row (the foreign key
 *   check of `integrityCheck` holds between any two steps); the memories' cascades then find nothing.
 * - semantic_top before the postings (their delete trigger probes it), counters before the rows whose
 *   triggers update them (the counter checks of `integrityCheck` skip a context being forgotten).
 * - Rows without a memory after the memories; the context row last, with the mark (its cascade takes the
 *   semantic snapshot and the usearch file rows).
 * Extend with every new per-context table (the forget test checks that no table keeps a row of the context).
 * A mark stores its stage's index: a stage inserted later (round 21: `merge`) makes a forget left by older
 * code resume one stage early, which only re-runs a finished stage (its deletes find nothing).
 */
const STAGES: readonly Stage[] = [
  { kind: 'docs' },
  { kind: 'merge' },
  { kind: 'stats' },
  rows('semantic_top', 'term'),
  rows('semantic_postings', 'memory_id'),
  rows('semantic_neighbours', 'memory_id'),
  rows('semantic_docs', 'memory_id'),
  rows('edge_counts', 'type'),
  rows('edges', 'a'),
  rows('memory_keys', 'memory_id'),
  rows('memory_tags', 'memory_id'),
  rows('memory_versions', 'memory_id'),
  rows('vector_ivf', 'space'),
  rows('vector_spaces', 'space'),
  rows('vectors', 'memory_id'),
  rows('views', 'memory_id'),
  rows('kind_counts', 'kind'),
  rows('memories', 'id'),
  rows('relation_journal', 'seq'),
  rows('semantic_df', 'term'),
  rows('questions', 'id'),
];

interface Mark {
  stage: number;
  cursor: string | null;
}

interface RangeStatements {
  cutoff: Database.Statement;
  upTo: Database.Statement;
  all: Database.Statement;
}

/**
 * Forgetting a SQLite context in steps (migration 15), so that forgetting a large user does not hold the
 * file's one write lock for the whole delete: `begin` marks the context (table `forgetting`), each `step` is
 * one IMMEDIATE transaction deleting at most ~`stepRows` rows where the last step stopped, and the last one
 * deletes the context row with its mark. While marked, writes to the context are refused (writeMemories) and
 * the library refuses its reads (CONFLICT): no one sees a half-deleted user. A process killed between steps
 * leaves a consistent file (every step is a transaction; integrityCheck passes) and the mark: forgetting the
 * context again resumes at the recorded stage.
 */
export class SqliteContextForget {
  private readonly ranges = new Map<string, RangeStatements>();
  private readonly s: {
    mark: Database.Statement;
    exists: Database.Statement;
    insertMark: Database.Statement;
    updateMark: Database.Statement;
    deleteMark: Database.Statement;
    deleteContext: Database.Statement;
  };

  constructor(
    private readonly db: Database.Database,
    private readonly lexical: SqliteLexicalIndex | undefined,
  ) {
    this.s = {
      mark: db.prepare('SELECT stage, cursor FROM forgetting WHERE context_id = ?'),
      exists: db
        .prepare(`SELECT EXISTS (SELECT 1 FROM contexts WHERE id = ?)
          OR EXISTS (SELECT 1 FROM questions WHERE context_id = ?)`)
        .pluck(),
      insertMark: db.prepare('INSERT INTO forgetting (context_id, started_at) VALUES (?, ?)'),
      updateMark: db.prepare('UPDATE forgetting SET stage = ?, cursor = ? WHERE context_id = ?'),
      deleteMark: db.prepare('DELETE FROM forgetting WHERE context_id = ?'),
      deleteContext: db.prepare('DELETE FROM contexts WHERE id = ?'),
    };
  }

  /**
   * Marks the context as being forgotten (or finds the mark of a forget a killed process left). False when
   * there is nothing to forget: no context row, no question and no mark.
   */
  begin(contextId: string, startedAt: string): boolean {
    return this.db
      .transaction(() => {
        if (this.s.mark.get(contextId) !== undefined) return true;
        if (this.s.exists.get(contextId, contextId) !== 1) return false;
        this.s.insertMark.run(contextId, startedAt);
        return true;
      })
      .immediate();
  }

  /** One step of at most about `rows` rows in one transaction; true once the context and its mark are gone. */
  step(contextId: string, rows: number = FORGET_STEP_ROWS): boolean {
    return this.db
      .transaction(() => {
        const mark = this.s.mark.get(contextId) as Mark | undefined;
        // Finished by another connection meanwhile.
        if (mark === undefined) return true;
        let { stage, cursor } = mark;
        let budget = rows;
        while (stage < STAGES.length && budget > 0) {
          const done = this.runStage(STAGES[stage]!, contextId, cursor, budget);
          budget -= done.removed;
          if (!done.finished) {
            cursor = done.cursor;
            break;
          }
          stage++;
          cursor = null;
        }
        if (stage < STAGES.length) {
          this.s.updateMark.run(stage, cursor, contextId);
          return false;
        }
        this.s.deleteContext.run(contextId);
        this.s.deleteMark.run(contextId);
        return true;
      })
      .immediate();
  }

  private runStage(
    stage: Stage,
    contextId: string,
    cursor: string | null,
    budget: number,
  ): { removed: number; finished: boolean; cursor: string | null } {
    if (stage.kind === 'docs') {
      if (!this.lexical) return { removed: 0, finished: true, cursor: null };
      // A document (its FTS5 delete, without merge work, and its lex_docs row) costs about what a row of the
      // other stages costs: 4,096 of them took ~23 ms at 100k (bench/forget-probe.ts, FORGET_PROBE_TRACE=1),
      // 16,384 posting rows 0.1-0.2 s.
      const done = this.lexical.forgetDocs(contextId, cursor ?? '', budget);
      return { removed: done.removed, finished: done.finished, cursor: done.last };
    }
    if (stage.kind === 'merge') {
      if (!this.lexical) return { removed: 0, finished: true, cursor: null };
      // Steps left (the cursor), at most MERGE_STEPS.
      const left = cursor === null ? MERGE_STEPS : Number(cursor);
      if (left <= 0 || !this.lexical.mergeStep(MERGE_PAGES))
        return { removed: 0, finished: true, cursor: null };
      // A step that merged does nothing else (its budget is the pages).
      return { removed: budget, finished: false, cursor: String(left - 1) };
    }
    if (stage.kind === 'stats') {
      if (!this.lexical) return { removed: 0, finished: true, cursor: null };
      return { ...this.lexical.forgetStats(contextId, budget), cursor: null };
    }
    const s = this.range(stage.table, stage.column);
    const cutoff = s.cutoff.get(contextId, budget - 1) as string | number | undefined;
    if (cutoff === undefined) return { removed: s.all.run(contextId).changes, finished: true, cursor: null };
    return { removed: s.upTo.run(contextId, cutoff).changes, finished: false, cursor: null };
  }

  private range(table: string, column: string): RangeStatements {
    let s = this.ranges.get(table);
    if (!s) {
      // Names come from STAGES, never from a request.
      s = {
        cutoff: this.db
          .prepare(`SELECT ${column} FROM ${table} WHERE context_id = ? ORDER BY ${column} LIMIT 1 OFFSET ?`)
          .pluck(),
        upTo: this.db.prepare(`DELETE FROM ${table} WHERE context_id = ? AND ${column} <= ?`),
        all: this.db.prepare(`DELETE FROM ${table} WHERE context_id = ?`),
      };
      this.ranges.set(table, s);
    }
    return s;
  }
}
