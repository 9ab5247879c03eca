import { randomInt } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { ViewHit, ViewKind } from '../types/view.ts';
import type { VectorSearchOptions } from './archive-store-spec.ts';
import {
  KEPT_FLOATS,
  KeptIvfLists,
  type KeptSpace,
  type StoredRow,
  TopHits,
  toFloats,
} from './kept-ivf-lists.ts';
import { lazyStatement } from './lazy-statement.ts';
import { vectorDimensionError, vectorRowKey } from './store-rules.ts';
import {
  APPROXIMATE_VECTOR_THRESHOLD,
  dot,
  IVF_SAMPLE_PER_LIST,
  ivfListCount,
  nearestCentroid,
  trainCentroids,
  writeUnit,
} from './vector-index.ts';

/** How many (context, space) centroid sets a store keeps in memory (least recently used is dropped). */
const CACHED_SPACES = 64;

/**
 * Lists a search reads first: a quarter of them (at least 8), and no more than about STORED_IVF_MAX_ROWS rows
 * (lists hold rows / nlist rows on average). A quarter, not VectorIndex's eighth: its recall@10 against
 * the exact scan was 0.938 (30k) / 0.970 (100k) with an eighth and 0.967 / 0.981 with a quarter
 * (bench/vector-recall-bench.ts --index stored-ivf, 256-dim mixture data; docs/semantic-knn.md "Stored IVF").
 * The row bound makes the scan grow as sqrt(n) from ~130k rows on (recall there not measured).
 */
export function storedProbeCount(nlist: number, rows: number): number {
  const perList = Math.max(1, rows / nlist);
  return Math.max(8, Math.min(Math.ceil(nlist / 4), Math.ceil(STORED_IVF_MAX_ROWS / perList)));
}

/** The row bound of a search's first lists (storedProbeCount). */
export const STORED_IVF_MAX_ROWS = 32_768;

/** A trained space's centroids as this process read them. */
export interface StoredIvf {
  generation: number;
  dims: number;
  nlist: number;
  /** nlist unit vectors, row-major. */
  centroids: Float32Array;
}

interface IvfMetaRow {
  dims: number;
  nlist: number;
  trained_rows: number;
  generation: number;
}

/**
 * The SQLite store's stored IVF (migration 14): a vector space holding more than `threshold` rows is clustered
 * into nlist = ceil(sqrt(n)) lists (spherical k-means, vector-index.ts); the centroids are one row of
 * `vector_ivf` and every vector row names its list (`vectors.list`, indexed). So a search in a fresh process
 * reads the centroids (sqrt(n) x dims) and the rows of the lists it probes, never the whole space, and
 * nothing is built when an archive opens.
 *
 * - Write: a row written to a trained space joins its nearest centroid's list in the write's own statement;
 *   the write that takes the space past the threshold, or past twice the rows it was last trained on, trains
 *   it again in its transaction (two passes over the space's rows: an evenly spaced sample of 32 rows per
 *   list, then every row's list). Amortised, that is constant work per row for a given list count; the write
 *   that triggers it pays it (`docs/semantic-knn.md`, "Stored IVF").
 * - Search: the lists of the `storedProbeCount` nearest centroids are scored exactly; when they yield fewer than
 *   `limit` hits (a narrow kind filter) the next lists are read, twice as many each round, up to every list.
 *   Scores are exact cosines of the stored vectors, ranked as VectorIndex ranks them; only recall is
 *   approximate. (A `memoryIds` search of a trained space is SqliteVectors' exact scan of those rows.)
 * - Kept lists: a list read once stays in the process (unit vectors, at most KEPT_FLOATS floats for the whole
 *   store: beyond it other spaces go first, then the searched space's least recently searched lists) and is
 *   brought up to the context's vector_version from the rows written since (`vectors.changed`, an index range;
 *   more than CATCH_UP_LIMIT drops them). A deleted
 *   row leaves nothing to catch up from, so once a space has caught up a search checks its hits' memories
 *   against the table (one statement) and searches again without the gone ones.
 * - Centroids per (context, space) are checked against `vector_ivf.generation` (one key lookup) on every call;
 *   a rolled-back unit of work clears everything (`clear`).
 */
export class SqliteStoredIvf {
  private readonly cache = new Map<string, StoredIvf>();
  private readonly meta: Database.Statement;
  private readonly centroidsOf: Database.Statement;
  private readonly spaceRows: Database.Statement;
  private readonly rowsOfLists: Database.Statement;
  private readonly rowsSince: Database.Statement;
  private readonly keysOf: Database.Statement;
  private readonly lists: KeptIvfLists;
  private readonly walk: Database.Statement;
  private readonly setList: Database.Statement;
  private readonly saveIvf: Database.Statement;

  readonly threshold: number;

  constructor(db: Database.Database, options: { threshold?: number; keptFloats?: number } = {}) {
    this.threshold = options.threshold ?? APPROXIMATE_VECTOR_THRESHOLD;
    this.lists = new KeptIvfLists(options.keptFloats ?? KEPT_FLOATS);
    this.meta = lazyStatement(
      db,
      'SELECT dims, nlist, trained_rows, generation FROM vector_ivf WHERE context_id = ? AND space = ?',
    );
    this.centroidsOf = lazyStatement(
      db,
      'SELECT centroids FROM vector_ivf WHERE context_id = ? AND space = ? AND generation = ?',
    );
    this.spaceRows = lazyStatement(db, 'SELECT rows FROM vector_spaces WHERE context_id = ? AND space = ?');
    this.rowsOfLists = lazyStatement(
      db,
      `SELECT memory_id, kind, key, vector, list FROM vectors WHERE context_id = ? AND space = ?
       AND list IN (SELECT value FROM json_each(?))`,
      true,
    );
    this.rowsSince = lazyStatement(
      db,
      `SELECT memory_id, kind, key, vector, list FROM vectors WHERE context_id = ? AND space = ? AND changed > ?
       ORDER BY changed LIMIT ?`,
      true,
    );
    this.keysOf = lazyStatement(
      db,
      `SELECT memory_id, kind, key FROM vectors WHERE context_id = ? AND space = ?
       AND memory_id IN (SELECT value FROM json_each(?))`,
      true,
    );
    this.walk = lazyStatement(
      db,
      `SELECT rowid, vector FROM vectors WHERE context_id = ? AND space = ? ORDER BY memory_id, kind, key`,
      true,
    );
    this.setList = lazyStatement(db, 'UPDATE vectors SET list = ? WHERE rowid = ?');
    this.saveIvf = lazyStatement(
      db,
      `INSERT INTO vector_ivf (context_id, space, dims, nlist, trained_rows, generation, centroids)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (context_id, space) DO UPDATE SET dims = excluded.dims,
       nlist = excluded.nlist, trained_rows = excluded.trained_rows, generation = excluded.generation,
       centroids = excluded.centroids`,
    );
  }

  /** The trained IVF of (context, space), or undefined (not trained, or a file from before migration 14). */
  current(contextId: string, space: string): StoredIvf | undefined {
    const row = this.metaOf(contextId, space);
    if (row === undefined) return undefined;
    const key = `${contextId}\u0000${space}`;
    const cached = this.cache.get(key);
    if (cached && cached.generation === row.generation) {
      this.cache.delete(key);
      this.cache.set(key, cached);
      return cached;
    }
    const blob = (this.centroidsOf.get(contextId, space, row.generation) as { centroids: Buffer }).centroids;
    const ivf: StoredIvf = {
      generation: row.generation,
      dims: row.dims,
      nlist: row.nlist,
      centroids: toFloats(blob),
    };
    this.cache.delete(key);
    this.cache.set(key, ivf);
    if (this.cache.size > CACHED_SPACES) this.cache.delete(this.cache.keys().next().value!);
    return ivf;
  }

  /** The list a vector joins in a trained space. */
  listOf(ivf: StoredIvf, vector: Float32Array): number {
    const unit = new Float32Array(ivf.dims);
    writeUnit(vector, unit, 0);
    return nearestCentroid(ivf.centroids, ivf.nlist, unit, 0, ivf.dims);
  }

  /**
   * Called inside a vector write's transaction, after its rows: trains the space when it has passed the
   * threshold untrained, or twice the rows it was trained on. Returns whether it trained.
   */
  maybeTrain(contextId: string, space: string): boolean {
    const rows = (this.spaceRows.get(contextId, space) as { rows: number } | undefined)?.rows ?? 0;
    if (rows <= this.threshold) return false;
    const meta = this.metaOf(contextId, space);
    if (meta !== undefined && rows <= 2 * meta.trained_rows) return false;
    this.train(contextId, space, rows);
    return true;
  }

  /**
   * Exact cosines over the probed lists (see the class); undefined when the space is not trained. `version` is
   * the context's vector_version: lists this process keeps are brought up to it first. A `memoryIds` search is
   * the caller's (the exact scan of those memories' rows).
   */
  search(
    contextId: string,
    space: string,
    version: number,
    query: Float32Array,
    options: Omit<VectorSearchOptions, 'memoryIds'>,
  ): ViewHit[] | undefined {
    const ivf = this.current(contextId, space);
    if (ivf === undefined) return undefined;
    if (options.limit <= 0) return [];
    if (query.length !== ivf.dims) throw vectorDimensionError(space, ivf.dims, query.length);
    const unit = new Float32Array(ivf.dims);
    writeUnit(query, unit, 0);
    const kinds = options.kinds ? new Set<ViewKind>(options.kinds) : undefined;
    const kept = this.lists.entry(contextId, space, ivf.generation);
    if (kept.version < version) this.catchUp(contextId, space, kept, version);
    const order = Array.from({ length: ivf.nlist }, (_, c) => ({
      c,
      score: dot(unit, ivf.centroids, c * ivf.dims, ivf.dims),
    })).sort((x, y) => y.score - x.score || x.c - y.c);
    for (;;) {
      const best = new TopHits(options.limit);
      let probed = 0;
      // The space's rows now (kept by trigger), not when trained: lists grow up to twice between trainings.
      const rows = (this.spaceRows.get(contextId, space) as { rows: number } | undefined)?.rows ?? 0;
      let batch = storedProbeCount(ivf.nlist, rows);
      while (probed < ivf.nlist && best.size < options.limit) {
        const lists = order.slice(probed, probed + batch).map((entry) => entry.c);
        this.load(contextId, space, kept, lists);
        for (const list of lists) kept.touch(list).score(unit, kinds, best);
        probed += lists.length;
        batch *= 2;
      }
      const top = best.sorted();
      // Rows deleted since a list was read leave nothing to catch up from: the hits' memories are checked
      // against the table, and a search that met one runs again without it.
      if (!kept.caughtUp || top.length === 0 || this.dropRemoved(contextId, space, kept, top) === 0) {
        this.lists.trim(kept);
        return top;
      }
    }
  }

  /** Reads the lists not kept yet. */
  private load(contextId: string, space: string, kept: KeptSpace, lists: readonly number[]): void {
    const missing = lists.filter((list) => !kept.lists.has(list));
    if (missing.length === 0) return;
    for (const list of missing) kept.open(list);
    const rows = this.rowsOfLists.all(contextId, space, JSON.stringify(missing)) as StoredRow[];
    for (const row of rows) kept.put(row);
  }

  /** Applies the rows written since the kept lists' version; drops them all when that is more than a build. */
  private catchUp(contextId: string, space: string, kept: KeptSpace, version: number): void {
    if (kept.lists.size > 0) {
      const rows = this.rowsSince.all(contextId, space, kept.version, CATCH_UP_LIMIT + 1) as StoredRow[];
      if (rows.length > CATCH_UP_LIMIT) kept.reset();
      else {
        for (const row of rows) kept.put(row);
        kept.caughtUp = true;
      }
    }
    kept.version = version;
  }

  /** The row keys (vectorRowKey) the table holds for the hits' memories: what a search checks hits against. */
  storedKeys(contextId: string, space: string, hits: readonly ViewHit[]): Set<string> {
    const ids = [...new Set(hits.map((hit) => hit.memoryId))];
    return new Set(
      (this.keysOf.all(contextId, space, JSON.stringify(ids)) as [string, ViewKind, string][]).map(
        ([memoryId, kind, key]) => vectorRowKey({ memoryId, kind, key }),
      ),
    );
  }

  private dropRemoved(contextId: string, space: string, kept: KeptSpace, hits: readonly ViewHit[]): number {
    const stored = this.storedKeys(contextId, space, hits);
    let removed = 0;
    for (const hit of hits) if (!stored.has(vectorRowKey(hit)) && kept.remove(vectorRowKey(hit))) removed++;
    return removed;
  }

  clear(): void {
    this.cache.clear();
    this.lists.clear();
  }

  private metaOf(contextId: string, space: string): IvfMetaRow | undefined {
    try {
      return this.meta.get(contextId, space) as IvfMetaRow | undefined;
    } catch {
      return undefined; // a read-only file from before migration 14
    }
  }

  /** Centroids from an evenly spaced sample, then every row's list; a new generation. */
  private train(contextId: string, space: string, rows: number): void {
    const nlist = ivfListCount(rows);
    const sampleSize = Math.min(rows, nlist * IVF_SAMPLE_PER_LIST);
    let dims = 0;
    let sample = new Float32Array(0);
    let taken = 0;
    let position = 0;
    for (const [, blob] of this.walk.iterate(contextId, space) as Iterable<[number, Buffer]>) {
      // Row `position` is sampled when it is the first at or past the next evenly spaced mark.
      if (taken < sampleSize && position >= Math.floor((taken * rows) / sampleSize)) {
        const vector = toFloats(blob);
        if (dims === 0) {
          dims = vector.length;
          sample = new Float32Array(sampleSize * dims);
        }
        writeUnit(vector, sample, taken * dims);
        taken++;
      }
      position++;
    }
    if (taken === 0) return;
    const centroids = trainCentroids(sample, taken, Math.min(nlist, taken), dims);
    const lists = Math.min(nlist, taken);
    const rowids: number[] = [];
    const assigned: number[] = [];
    const unit = new Float32Array(dims);
    for (const [rowid, blob] of this.walk.iterate(contextId, space) as Iterable<[number, Buffer]>) {
      writeUnit(toFloats(blob), unit, 0);
      rowids.push(rowid);
      assigned.push(nearestCentroid(centroids, lists, unit, 0, dims));
    }
    // Written after the walk: better-sqlite3 cannot write while an iterator is open on the connection.
    for (let i = 0; i < rowids.length; i++) this.setList.run(assigned[i], rowids[i]);
    const bytes = Buffer.from(centroids.buffer, centroids.byteOffset, centroids.byteLength);
    // A random generation: a context forgotten and trained again (here or by another process) never reuses one
    // that a cache may still hold.
    this.saveIvf.run(contextId, space, dims, lists, position, randomInt(2 ** 47), bytes);
  }
}

/** Rows written since the kept lists' version applied one by one; more than this drops the lists instead. */
const CATCH_UP_LIMIT = 4096;

/**
 * Maintenance (`graphmemix migrate`): trains every vector space of the file above `threshold` rows that has no
 * stored IVF yet (a file from before migration 14, whose spaces would otherwise wait for their next write and
 * be searched through an in-process index built by each process meanwhile). One transaction per space; walks
 * those spaces. Returns the (context, space) pairs trained.
 */
export function trainUntrainedSpaces(
  db: Database.Database,
  threshold = APPROXIMATE_VECTOR_THRESHOLD,
): Array<{ contextId: string; space: string }> {
  const waiting = db
    .prepare(
      `SELECT s.context_id AS contextId, s.space AS space FROM vector_spaces s LEFT JOIN vector_ivf i
       ON i.context_id = s.context_id AND i.space = s.space WHERE i.context_id IS NULL AND s.rows > ?
       ORDER BY s.context_id, s.space`,
    )
    .all(threshold) as Array<{ contextId: string; space: string }>;
  const ivf = new SqliteStoredIvf(db, { threshold });
  return waiting.filter(({ contextId, space }) =>
    db.transaction(() => ivf.maybeTrain(contextId, space)).immediate(),
  );
}
