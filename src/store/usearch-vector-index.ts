import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { loadOptionalPackage, type UsearchIndex, type UsearchModule } from '../importers/optional-package.ts';
import type { ViewHit, ViewKind } from '../types/view.ts';
import type { VectorRow, VectorSearchOptions } from './archive-store-spec.ts';
import { lazyStatement } from './lazy-statement.ts';
import { APPROXIMATE_VECTOR_THRESHOLD, VectorIndex } from './vector-index.ts';

type Usearch = UsearchModule;

/**
 * HNSW parameters (usearch): M = 32 links per node, ef = 256 while building and 320 while searching. Chosen
 * with bench/vector-recall-bench.ts: ef 128 gave recall@10 0.965-0.982 at 100k depending on the build, ef 320 gives 1.000
 * (docs/semantic-knn.md, "Persistent approximate index").
 */
export const ANN_PARAMS = { connectivity: 32, expansionAdd: 256, expansionSearch: 320 } as const;
/**
 * The file is brought up to date on a write once the rows written since it was saved reach
 * max(ANN_REFRESH_MIN, ANN_REFRESH_RATIO x its size): until then a search scores those rows exactly, so the
 * delta a search reads stays small and the file is rewritten about once per 1% of growth (amortised constant
 * per write). Above ANN_REBUILD_SLACK dead entries per live row, or with more than ANN_INCREMENTAL_RATIO new
 * rows per indexed one, it is rebuilt from the stored vectors.
 */
export const ANN_REFRESH_MIN = 256;
export const ANN_REFRESH_RATIO = 0.01;
export const ANN_REBUILD_SLACK = 0.2;
/** A refresh adding more than this share of the file's size rebuilds it instead (see refresh). */
export const ANN_INCREMENTAL_RATIO = 0.1;
/** Searches asking for more than this (the dense kNN's reverse search asks for everything) stay exact. */
const MAX_ANN_LIMIT = 1024;

interface AnnRow {
  context_id: string;
  space: string;
  file: string;
  version: number;
  size: number;
  dims: number;
  checksum: string;
}

interface Loaded {
  file: string;
  index: UsearchIndex;
  row: AnnRow;
}

interface DbVector {
  id: number;
  memory_id: string;
  kind: ViewKind;
  key: string;
  vector: Buffer;
}

/**
 * The SQLite store's persistent approximate vector index: one usearch HNSW file per (context, embedding space)
 * holding more than `threshold` vectors, in the folder `<archive>.vectors/` next to the archive, named by a
 * hash of (context, space) and a build id (never by anything a client sends). Keys are the rowids of the
 * `vectors` table; `vector_ann` (migration 10) records per space the file, its checksum and the
 * `contexts.vector_version` it covers (its watermark); every vector row carries the version that wrote it
 * (`vectors.changed`).
 *
 * - Search: the HNSW proposes `2 limit + 160` rows (`4 limit + 160` with a kind filter); rows deleted or rewritten since the
 *   watermark are dropped, rows written since are scored exactly (an index range), and the proposals are
 *   re-scored exactly from the stored vectors: scores are exact cosines, only recall is approximate.
 * - Write: after a vector write commits, `afterWrite` builds the file when the space passes the threshold and
 *   refreshes it (add the rows written since, re-save) once they reach the refresh rule; never per request.
 * - Safety: a file is written to a temporary name, fsynced, renamed, and only then recorded (old files are
 *   removed after); it is loaded only when its sha256 matches the record, since usearch aborts the process on
 *   a damaged file. A missing or damaged file is rebuilt by the next write to that space; searches meanwhile
 *   take the exact path. Forgetting a context removes its files; a forgotten memory's vectors leave the file
 *   at the next rebuild of its space (`afterDelete` rebuilds at once).
 * Without the optional package `usearch` (or for an in-memory archive) nothing of this runs: exact search.
 */
export class UsearchVectorIndexes {
  private library: Promise<Usearch | undefined> | undefined;
  private failure: string | undefined;
  private readonly loaded = new Map<string, Loaded>();
  /** Files whose checksum this process has checked (or written). */
  private readonly verified = new Set<string>();
  private readonly deltas = new Map<string, { version: number; watermark: number; rows: VectorRow[] }>();
  private readonly s: ReturnType<typeof prepare>;
  readonly folder: string | undefined;

  constructor(
    private readonly db: Database.Database,
    archiveFile: string | undefined,
    private readonly options: {
      threshold?: number;
      /** Replaces the package import (tests: a missing package). */
      load?: () => Promise<Usearch>;
      readonly?: boolean;
    } = {},
  ) {
    this.s = prepare(db);
    this.folder = archiveFile === undefined ? undefined : `${archiveFile}.vectors`;
  }

  get threshold(): number {
    return this.options.threshold ?? APPROXIMATE_VECTOR_THRESHOLD;
  }

  /**
   * What `/v1/health` and `--version` say: 'usearch' (HNSW files above the threshold, exact below) or
   * 'in-process' (exact: no package, it failed to load, or an in-memory archive). Nothing is loaded to answer.
   */
  describe(): 'usearch' | 'in-process' {
    if (this.folder === undefined || this.failure !== undefined) return 'in-process';
    return this.options.load !== undefined || usearchInstalled() ? 'usearch' : 'in-process';
  }

  /** Hits from the approximate index, or undefined when this space has none (the caller scans exactly). */
  async search(
    contextId: string,
    space: string,
    version: number,
    query: Float32Array,
    options: VectorSearchOptions,
  ): Promise<ViewHit[] | undefined> {
    if (this.folder === undefined || options.limit > MAX_ANN_LIMIT || options.limit <= 0) return undefined;
    const row = this.s.getAnn.get(contextId, space) as AnnRow | undefined;
    if (!row || row.version > version || query.length !== row.dims) return undefined;
    if (options.memoryIds !== undefined) {
      const rows = (
        this.s.byMemory.all(contextId, space, JSON.stringify([...new Set(options.memoryIds)])) as DbVector[]
      ).map(toRow);
      return new VectorIndex(rows, { approximateAbove: Number.POSITIVE_INFINITY }).search(query, options);
    }
    const library = await this.library_();
    if (!library) return undefined;
    const loaded = this.view(library, row);
    if (!loaded) return undefined;
    const wanted = Math.min(
      loaded.index.size(),
      options.kinds ? options.limit * 4 + 160 : options.limit * 2 + 160,
    );
    const proposals = wanted > 0 ? loaded.index.search(query, wanted, 1).keys : new BigUint64Array();
    const ids = JSON.stringify(Array.from(proposals, (key) => Number(key)));
    const rows = (this.s.proposed.all(ids, contextId, space, row.version) as DbVector[]).map(toRow);
    const delta = this.delta(contextId, space, row.version, version);
    const hits = new VectorIndex([...rows, ...delta], { approximateAbove: Number.POSITIVE_INFINITY }).search(
      query,
      options,
    );
    // A kind filter that removed most proposals: the exact path answers instead of a short list.
    if (hits.length < options.limit && proposals.length >= wanted && wanted < loaded.index.size())
      return undefined;
    return hits;
  }

  /** After vectors of `space` were written: build or refresh its file when the rule says so. */
  async afterWrite(contextId: string, space: string): Promise<void> {
    if (this.folder === undefined || this.options.readonly) return;
    const row = this.s.getAnn.get(contextId, space) as AnnRow | undefined;
    if (!row) {
      const count = (this.s.boundedCount.get(contextId, space, this.threshold + 1) as { n: number }).n;
      if (count <= this.threshold) return;
    } else {
      const changed = (this.s.changedCount.get(contextId, space, row.version) as { n: number }).n;
      const fileOk = this.fileMatches(row);
      if (fileOk && changed < Math.max(ANN_REFRESH_MIN, ANN_REFRESH_RATIO * row.size)) return;
    }
    const library = await this.library_();
    if (!library) return;
    this.refresh(library, contextId, space, row);
  }

  /** Whether this store keeps usearch files (a folder, and the package loads). */
  async serves(): Promise<boolean> {
    if (this.folder === undefined) return false;
    return (await this.library_()) !== undefined;
  }

  /** After memories were deleted: their vectors must not stay in a file (forget means forget). */
  async afterDelete(contextId: string): Promise<void> {
    if (this.folder === undefined || this.options.readonly) return;
    const rows = this.s.annOfContext.all(contextId) as AnnRow[];
    if (rows.length === 0) return;
    const library = await this.library_();
    if (!library) return;
    for (const row of rows) this.refresh(library, contextId, row.space, undefined);
  }

  /** Removes the files of a context (its vector_ann rows went with the context). */
  forgetFiles(files: readonly string[]): void {
    if (this.folder === undefined) return;
    for (const file of files) {
      this.dropLoaded(file);
      rmSync(join(this.folder, file), { force: true });
    }
  }

  /** Files recorded for a context (read before deleting it). */
  filesOf(contextId: string): string[] {
    return (this.s.annOfContext.all(contextId) as AnnRow[]).map((row) => row.file);
  }

  close(): void {
    this.loaded.clear();
    this.deltas.clear();
  }

  private library_(): Promise<Usearch | undefined> {
    this.library ??= loadOptionalPackage('usearch', 'the approximate vector index', this.options.load).catch(
      (error: Error) => {
        this.failure = error.message;
        return undefined;
      },
    );
    return this.library;
  }

  /** The rows written since the watermark, as an exact index (cached per vector version). */
  private delta(contextId: string, space: string, watermark: number, version: number): VectorRow[] {
    const key = `${contextId}\u0000${space}`;
    const cached = this.deltas.get(key);
    if (cached && cached.version === version && cached.watermark === watermark) return cached.rows;
    const rows = (this.s.changedRows.all(contextId, space, watermark) as DbVector[]).map(toRow);
    this.deltas.set(key, { version, watermark, rows });
    return rows;
  }

  /**
   * Whether the recorded file is there with its checksum. Checked once per file and process (file names are
   * unique per build and never rewritten): a write must not hash the whole file again.
   */
  private fileMatches(row: AnnRow): boolean {
    if (this.verified.has(row.file)) return true;
    const path = join(this.folder!, row.file);
    const ok = existsSync(path) && sha256(path) === row.checksum;
    if (ok) this.verified.add(row.file);
    return ok;
  }

  /** The recorded file, memory-mapped, after checking its checksum once per process; undefined if damaged. */
  private view(library: Usearch, row: AnnRow): Loaded | undefined {
    const key = `${row.context_id}\u0000${row.space}`;
    const cached = this.loaded.get(key);
    if (cached && cached.file === row.file) return cached;
    if (!this.fileMatches(row)) return undefined;
    const index = newIndex(library, row.dims);
    index.view(join(this.folder!, row.file));
    const loaded = { file: row.file, index, row };
    this.loaded.set(key, loaded);
    return loaded;
  }

  private dropLoaded(file: string): void {
    for (const [key, loaded] of this.loaded) if (loaded.file === file) this.loaded.delete(key);
  }

  /**
   * Brings the file of (context, space) up to the current rows: incrementally from a sound recorded file
   * (remove rewritten keys, add the rows written since), else (or with too many dead entries) rebuilt from every
   * stored vector. Rows are read in one read transaction with the version they reach (the new watermark).
   */
  private refresh(library: Usearch, contextId: string, space: string, row: AnnRow | undefined): void {
    const folder = this.folder!;
    const read = this.db.transaction(() => {
      const version =
        (this.s.version.get(contextId) as { vector_version: number } | undefined)?.vector_version ?? 0;
      const live = (this.s.count.get(contextId, space) as { n: number }).n;
      // Large deltas are rebuilt from scratch: HNSW insertion into a loaded file lost recall when the
      // delta was a sizeable share of it (30k vectors as 10k + 2 x 10k: recall@10 0.992 against 1.000 for one
      // build; 100k as 30k + 7 x 10k: 0.965), while one build per 10% of growth stays amortised constant.
      const incremental =
        row !== undefined &&
        this.fileMatches(row) &&
        (this.s.changedCount.get(contextId, space, row.version) as { n: number }).n <=
          ANN_INCREMENTAL_RATIO * row.size;
      const rows = (
        incremental
          ? this.s.changedRows.all(contextId, space, row.version)
          : this.s.allRows.all(contextId, space)
      ) as DbVector[];
      return { version, live, incremental, rows };
    });
    const snapshot = read();
    if (snapshot.rows.length === 0 && !snapshot.incremental) return;
    const dims = row?.dims ?? snapshot.rows[0]!.vector.byteLength / 4;
    const index = newIndex(library, dims);
    if (snapshot.incremental) {
      index.load(join(folder, row!.file));
      const keys = snapshot.rows.map((r) => BigInt(r.id));
      for (const key of keys) if (index.contains(key)) index.remove(key);
      if (index.size() + snapshot.rows.length > snapshot.live * (1 + ANN_REBUILD_SLACK)) {
        // Too many dead entries (deleted rows): rebuild from every stored vector.
        this.refresh(library, contextId, space, undefined);
        return;
      }
    }
    addRows(index, snapshot.rows, dims);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const name = `${createHash('sha256').update(`${contextId}\u0000${space}`).digest('hex').slice(0, 24)}-${randomBytes(6).toString('hex')}.usearch`;
    const temporary = join(folder, `${name}.tmp`);
    index.save(temporary);
    const fd = openSync(temporary, 'r');
    fsyncSync(fd);
    closeSync(fd);
    const checksum = sha256(temporary);
    renameSync(temporary, join(folder, name));
    this.verified.add(name);
    const next: AnnRow = {
      context_id: contextId,
      space,
      file: name,
      version: snapshot.version,
      size: index.size(),
      dims,
      checksum,
    };
    const written = this.db
      .transaction(() => {
        const current = this.s.getAnn.get(contextId, space) as AnnRow | undefined;
        // Another process recorded a newer file meanwhile: keep it.
        if (current && current.version > next.version) return false;
        this.s.putAnn.run(next);
        return true;
      })
      .immediate();
    if (!written) {
      rmSync(join(folder, name), { force: true });
      return;
    }
    this.loaded.delete(`${contextId}\u0000${space}`);
    this.removeOrphans(contextId, space, name);
  }

  /** Files of this (context, space) other than the recorded one: earlier builds and interrupted ones. */
  private removeOrphans(contextId: string, space: string, keep: string): void {
    const prefix = createHash('sha256').update(`${contextId}\u0000${space}`).digest('hex').slice(0, 24);
    for (const file of readdirSync(this.folder!)) {
      if (file.startsWith(prefix) && file !== keep) {
        this.dropLoaded(file);
        rmSync(join(this.folder!, file), { force: true });
      }
    }
  }
}

function addRows(index: UsearchIndex, rows: readonly DbVector[], dims: number): void {
  const CHUNK = 4096;
  for (let from = 0; from < rows.length; from += CHUNK) {
    const chunk = rows.slice(from, from + CHUNK);
    const matrix = new Float32Array(chunk.length * dims);
    for (const [i, r] of chunk.entries()) matrix.set(toRow(r).vector, i * dims);
    index.add(
      BigUint64Array.from(chunk, (r) => BigInt(r.id)),
      matrix,
      0,
    );
  }
}

function newIndex(library: Usearch, dims: number): UsearchIndex {
  return new library.Index({
    dimensions: dims,
    metric: 'cos',
    quantization: 'f32',
    connectivity: ANN_PARAMS.connectivity,
    expansion_add: ANN_PARAMS.expansionAdd,
    expansion_search: ANN_PARAMS.expansionSearch,
    multi: false,
  });
}

function toRow(row: DbVector): VectorRow {
  // Copy: the blob's buffer may not be 4-byte aligned.
  const bytes = new Uint8Array(row.vector.byteLength);
  bytes.set(row.vector);
  return { memoryId: row.memory_id, kind: row.kind, key: row.key, vector: new Float32Array(bytes.buffer) };
}

/** The file's sha256, read in 4 MiB chunks: a 1M-vector file is over 1 GB and must not be held in memory. */
function sha256(path: string): string {
  const hash = createHash('sha256');
  const chunk = Buffer.allocUnsafe(4 << 20);
  const fd = openSync(path, 'r');
  try {
    for (let read = readSync(fd, chunk); read > 0; read = readSync(fd, chunk))
      hash.update(chunk.subarray(0, read));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

let installed: boolean | undefined;
/** Whether `usearch` resolves from here (a path lookup, nothing loaded): for reports only. */
export function usearchInstalled(): boolean {
  if (installed === undefined) {
    try {
      createRequire(import.meta.url).resolve('usearch');
      installed = true;
    } catch {
      installed = false;
    }
  }
  return installed;
}

/** Lazily prepared: a read-only store of an older schema has no vector_ann table and never reaches them. */
function prepare(db: Database.Database) {
  const p = (sql: string) => lazyStatement(db, sql);
  return {
    getAnn: p('SELECT * FROM vector_ann WHERE context_id = ? AND space = ?'),
    annOfContext: p('SELECT * FROM vector_ann WHERE context_id = ?'),
    putAnn: p(`INSERT INTO vector_ann (context_id, space, file, version, size, dims, checksum)
      VALUES (@context_id, @space, @file, @version, @size, @dims, @checksum)
      ON CONFLICT (context_id, space) DO UPDATE SET file = excluded.file, version = excluded.version,
      size = excluded.size, dims = excluded.dims, checksum = excluded.checksum`),
    version: p('SELECT vector_version FROM contexts WHERE id = ?'),
    count: p('SELECT COUNT(*) AS n FROM vectors WHERE context_id = ? AND space = ?'),
    boundedCount: p(
      'SELECT COUNT(*) AS n FROM (SELECT 1 FROM vectors WHERE context_id = ? AND space = ? LIMIT ?)',
    ),
    changedCount: p('SELECT COUNT(*) AS n FROM vectors WHERE context_id = ? AND space = ? AND changed > ?'),
    changedRows: p(`SELECT rowid AS id, memory_id, kind, key, vector FROM vectors
      WHERE context_id = ? AND space = ? AND changed > ?`),
    allRows: p(
      'SELECT rowid AS id, memory_id, kind, key, vector FROM vectors WHERE context_id = ? AND space = ?',
    ),
    // CROSS JOIN fixes the order: one rowid probe per proposal (with `rowid IN (...)` SQLite preferred
    // the vectors_changed range, i.e. every row of the space).
    proposed: p(`SELECT v.rowid AS id, v.memory_id, v.kind, v.key, v.vector FROM json_each(?) AS j
      CROSS JOIN vectors AS v ON v.rowid = j.value WHERE v.context_id = ? AND v.space = ? AND v.changed <= ?`),
    byMemory: p(`SELECT rowid AS id, memory_id, kind, key, vector FROM vectors
      WHERE context_id = ? AND space = ? AND memory_id IN (SELECT value FROM json_each(?))`),
  };
}
