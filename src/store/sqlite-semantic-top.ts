import type Database from 'better-sqlite3';
import type { SemanticPosting } from './semantic-index-spec.ts';

/**
 * The size of every kept row: terms in more documents than this at the snapshot are read by the forward
 * search through their SEMANTIC_TOP_SIZE heaviest postings only (MAX_POSTINGS_PER_TERM); a shorter list is
 * kept whole (held < size).
 */
export const SEMANTIC_TOP_SIZE = 1024;

/**
 * Compaction, `graphmemix migrate` and whole-list reads keep rows for terms with at least this many
 * postings (shorter lists are cheap statements; a list of at most 32 postings is read whole by the forward
 * search's first top-k read anyway).
 */
export const WHOLE_ROW_MIN = 64;

/** A posting entering a term's kept row (a document written by writeDocs). */
export interface EnteredPosting {
  term: string;
  memoryId: string;
  weight: number;
}

/**
 * The SQLite semantic index's kept top lists (table `semantic_top`, migration 12): per (context, term), the
 * answer to `postings(term, { top: size })` as ONE row (ids joined by newlines, weights as float64), so a
 * forward search reads a common term's 1,024 heaviest postings as one row instead of 1,024 (better-sqlite3
 * row objects: 1.1-1.4 ms of CPU per term read at 1M, 0.2-0.3 ms as a row). Newlines, not JSON: splitting
 * is ~5x faster than JSON.parse of the same ids (150-200 ms for 300 rows at 1M), so a term whose postings
 * name an id with a newline has no row (its reads take the statement). A row is exact whenever it exists:
 * - `entered` puts new postings into the rows they sort into (weight desc, then id in SQLite's BINARY
 *   order), called by every write of postings but compaction, which clears and rebuilds;
 * - the trigger of migration 12 drops a row when a posting inside it is deleted (whatever deletes it: a
 *   changed vector, a forgotten memory's cascade); the next read of the term stores it again;
 * - held < size means the row is the term's whole list, so any new posting enters and any delete drops it;
 *   such rows also answer weight windows (a rare term's whole-list read: `window`).
 * Callers write rows only inside a write transaction (the read they store and the store are one unit).
 */
export interface SemanticTopLists {
  /** The first `n` postings of the term's row when it answers a read of n (size >= n), else undefined. */
  read(contextId: string, term: string, n: number): SemanticPosting[] | undefined;
  /**
   * The postings with minWeight <= weight < below from the term's row when it holds them all (it is the
   * whole list, or minWeight is above its last weight), else undefined.
   */
  window(contextId: string, term: string, minWeight: number, below: number): SemanticPosting[] | undefined;
  /** Stores `rows`, the current answer to `{ top: size }` (replaces a row of the term). */
  store(contextId: string, term: string, size: number, rows: readonly SemanticPosting[]): void;
  /** New postings, now in semantic_postings: each enters its term's row if it sorts into it. */
  entered(contextId: string, postings: readonly EnteredPosting[]): void;
  /** Drops the context's rows (compaction rewrites every posting). */
  clearContext(contextId: string): void;
}

/** A row as `get` reads it: size, held, last weight, ids, weights. */
type Row = [number, number, number, string, Buffer];

/** Between the ids of a row (an id holding it keeps its term out of the table). */
const SEPARATOR = '\n';

export function createSemanticTopLists(db: Database.Database): SemanticTopLists {
  let prepared: ReturnType<typeof prepare> | undefined;
  const statements = () => {
    prepared ??= prepare(db);
    return prepared;
  };
  /** Postings [from, to) of a row. */
  const decode = (ids: string, weights: Buffer, to: number, from = 0): SemanticPosting[] => {
    const names = ids.split(SEPARATOR);
    const view = new DataView(weights.buffer, weights.byteOffset, weights.byteLength);
    const end = Math.min(to, names.length);
    const out = new Array<SemanticPosting>(Math.max(0, end - from));
    for (let at = from; at < end; at++)
      out[at - from] = { memoryId: names[at]!, weight: view.getFloat64(8 * at, true) };
    return out;
  };
  const store = (contextId: string, term: string, size: number, rows: readonly SemanticPosting[]) => {
    const s = statements();
    if (rows.length === 0 || rows.some((row) => row.memoryId.includes(SEPARATOR))) {
      s.remove.run(contextId, term);
      return;
    }
    const weights = Buffer.alloc(8 * rows.length);
    const view = new DataView(weights.buffer, weights.byteOffset, weights.byteLength);
    for (let at = 0; at < rows.length; at++) view.setFloat64(8 * at, rows[at]!.weight, true);
    const last = rows[rows.length - 1]!;
    s.upsert.run(
      contextId,
      term,
      size,
      rows.length,
      last.weight,
      last.memoryId,
      rows.map((row) => row.memoryId).join(SEPARATOR),
      weights,
    );
  };
  return {
    read(contextId, term, n) {
      const row = statements().get.get(contextId, term) as Row | undefined;
      if (!row || row[0] < n) return undefined;
      return decode(row[3], row[4], Math.max(0, n));
    },
    window(contextId, term, minWeight, below) {
      const row = statements().get.get(contextId, term) as Row | undefined;
      if (!row) return undefined;
      const [size, held, lastWeight, ids, weights] = row;
      if (held >= size && !(minWeight > lastWeight)) return undefined;
      const view = new DataView(weights.buffer, weights.byteOffset, weights.byteLength);
      // Weights are desc: the window is [first below `below`, first below `minWeight`).
      const firstBelow = (value: number) => {
        let lo = 0;
        let hi = held;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (view.getFloat64(8 * mid, true) >= value) lo = mid + 1;
          else hi = mid;
        }
        return lo;
      };
      return decode(ids, weights, firstBelow(minWeight), firstBelow(below));
    },
    store,
    entered(contextId, postings) {
      if (postings.length === 0) return;
      const s = statements();
      const byTerm = new Map<string, EnteredPosting[]>();
      for (const posting of postings) {
        const list = byTerm.get(posting.term);
        if (list) list.push(posting);
        else byTerm.set(posting.term, [posting]);
      }
      // One statement for the delta's terms; only rows a posting enters are read whole and rewritten.
      const heads = s.headsIn.all(contextId, JSON.stringify([...byTerm.keys()])) as [
        string,
        number,
        number,
        number,
        string,
      ][];
      for (const [term, size, held, lastWeight, lastId] of heads) {
        const last = { memoryId: lastId, weight: lastWeight };
        const entering = byTerm.get(term)!.filter((p) => held < size || comparePostings(p, last) < 0);
        if (entering.length === 0) continue;
        const row = s.get.get(contextId, term) as Row;
        const next = enterRow(row[3], row[4], held, size, entering);
        if (!next) {
          s.remove.run(contextId, term);
          continue;
        }
        s.upsert.run(contextId, term, size, next.held, next.lastWeight, next.lastId, next.ids, next.weights);
      }
    },
    clearContext(contextId) {
      statements().clear.run(contextId);
    },
  };
}

function prepare(db: Database.Database) {
  return {
    get: db
      .prepare(
        'SELECT size, held, last_weight, ids, weights FROM semantic_top WHERE context_id = ? AND term = ?',
      )
      .raw(),
    headsIn: db
      .prepare(`SELECT term, size, held, last_weight, last_id FROM semantic_top WHERE context_id = ?
        AND term IN (SELECT value FROM json_each(?))`)
      .raw(),
    upsert:
      db.prepare(`INSERT INTO semantic_top (context_id, term, size, held, last_weight, last_id, ids, weights)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (context_id, term) DO UPDATE SET size = excluded.size,
      held = excluded.held, last_weight = excluded.last_weight, last_id = excluded.last_id, ids = excluded.ids,
      weights = excluded.weights`),
    remove: db.prepare('DELETE FROM semantic_top WHERE context_id = ? AND term = ?'),
    clear: db.prepare('DELETE FROM semantic_top WHERE context_id = ?'),
  };
}

/** A kept row after postings entered it: what `store` writes. */
export interface EnteredRow {
  ids: string;
  weights: Buffer;
  held: number;
  lastWeight: number;
  lastId: string;
}

/**
 * The row (`held` ids joined by SEPARATOR, their float64 weights) with `entering` put where they sort and
 * cut to `size`, built from slices of the row's text and bytes: decoding a whole row into posting objects to
 * insert one was ~1 ms of an add-1 at 1M (~4.7 rows entered per add, ~700 postings each). Undefined when an
 * entering id holds SEPARATOR (such a term has no row).
 */
export function enterRow(
  ids: string,
  weights: Buffer,
  held: number,
  size: number,
  entering: readonly EnteredPosting[],
): EnteredRow | undefined {
  if (entering.some((posting) => posting.memoryId.includes(SEPARATOR))) return undefined;
  const view = new DataView(weights.buffer, weights.byteOffset, weights.byteLength);
  // starts[j]: where id j begins; starts[held] is one past the end (as if a separator followed the last id).
  const starts = new Int32Array(held + 1);
  for (let j = 1, at = -1; j <= held; j++) {
    at = j === held ? ids.length : ids.indexOf(SEPARATOR, at + 1);
    starts[j] = at + 1;
  }
  const idAt = (j: number) => ids.slice(starts[j]!, starts[j + 1]! - 1);
  const weightAt = (j: number) => view.getFloat64(8 * j, true);
  /** First j whose posting does not sort before `posting` (weight desc, then id in UTF-8 order). */
  const insertAt = (posting: EnteredPosting) => {
    let low = 0;
    let high = held;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const weight = weightAt(mid);
      const before =
        weight > posting.weight ||
        (weight === posting.weight && compareUtf8(idAt(mid), posting.memoryId) < 0);
      if (before) low = mid + 1;
      else high = mid;
    }
    return low;
  };
  const sorted = [...entering].sort(comparePostings);
  const total = Math.min(size, held + sorted.length);
  const parts: string[] = [];
  const out = Buffer.alloc(8 * total);
  let count = 0;
  let lastId = '';
  let lastWeight = 0;
  /** Copies row postings [from, to) (as many as still fit). */
  const copyRun = (from: number, to: number) => {
    const end = Math.min(to, from + (total - count));
    if (end <= from) return;
    parts.push(ids.slice(starts[from]!, starts[end]! - 1));
    weights.copy(out, 8 * count, 8 * from, 8 * end);
    count += end - from;
    lastId = idAt(end - 1);
    lastWeight = weightAt(end - 1);
  };
  let next = 0;
  for (const posting of sorted) {
    const at = insertAt(posting);
    copyRun(next, at);
    next = at;
    if (count === total) break;
    parts.push(posting.memoryId);
    out.writeDoubleLE(posting.weight, 8 * count);
    count++;
    lastId = posting.memoryId;
    lastWeight = posting.weight;
  }
  copyRun(next, held);
  return { ids: parts.join(SEPARATOR), weights: out, held: count, lastWeight, lastId };
}

/** The order of `ORDER BY weight DESC, memory_id` (SQLite's BINARY collation: UTF-8 bytes). */
export function comparePostings(x: SemanticPosting, y: SemanticPosting): number {
  return y.weight - x.weight || compareUtf8(x.memoryId, y.memoryId);
}

/**
 * UTF-8 byte order of two strings (= code point order). JS `<` compares UTF-16 code units, which puts
 * U+E000..U+FFFF after the surrogates of astral characters, where UTF-8 puts them before.
 */
export function compareUtf8(x: string, y: string): number {
  const n = Math.min(x.length, y.length);
  for (let at = 0; at < n; at++) {
    let a = x.charCodeAt(at);
    let b = y.charCodeAt(at);
    if (a === b) continue;
    if (a >= 0xd800 && b >= 0xd800) {
      a = a >= 0xe000 ? a - 0x800 : a + 0x2000;
      b = b >= 0xe000 ? b - 0x800 : b + 0x2000;
    }
    return a - b;
  }
  return x.length - y.length;
}

/**
 * Stores the rows compaction would have built that a file does not have yet (one written before migration
 * 12, or rows dropped by deletes since): every term in at least WHOLE_ROW_MIN documents at its context's
 * snapshot. `graphmemix migrate` runs it; it walks those terms' heaviest postings (~10 s at 1M: 10.6k terms),
 * which is why opening a file never does (reads fill rows one term at a time). Returns the rows stored.
 */
export function fillSemanticTopLists(db: Database.Database): number {
  const top = createSemanticTopLists(db);
  const contexts = db.prepare('SELECT context_id FROM semantic_snapshots ORDER BY context_id').pluck();
  const missing = db
    .prepare(`SELECT d.term FROM semantic_df d WHERE d.context_id = ? AND d.df >= ? AND NOT EXISTS
      (SELECT 1 FROM semantic_top t WHERE t.context_id = d.context_id AND t.term = d.term AND t.size >= ?)`)
    .pluck();
  const heaviest = db
    .prepare(`SELECT memory_id, weight FROM semantic_postings WHERE context_id = ? AND term = ?
      ORDER BY weight DESC, memory_id LIMIT ?`)
    .raw();
  let stored = 0;
  for (const contextId of contexts.all() as string[]) {
    db.transaction(() => {
      for (const term of missing.all(contextId, WHOLE_ROW_MIN, SEMANTIC_TOP_SIZE) as string[]) {
        const rows = (heaviest.all(contextId, term, SEMANTIC_TOP_SIZE) as [string, number][]).map(
          ([memoryId, weight]) => ({ memoryId, weight }),
        );
        top.store(contextId, term, SEMANTIC_TOP_SIZE, rows);
        if (rows.length > 0) stored++;
      }
    }).immediate();
  }
  return stored;
}
