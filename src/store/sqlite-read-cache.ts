/**
 * Per-connection cache of what a question reads around its pool (sqlite-store.ts): each memory's complete
 * edge list (`neighbors`) and its stored record JSON (`getMemories`), by (context, memory id). A warm retrieve
 * at 10k read ~160 edge rows and 48 records per question through three statements; questions about one archive
 * keep meeting the same memories (half of a 300-question run's pool members had been in an earlier pool).
 *
 * Exact: an entry is what the statement returned under one write generation of the file, and `validate` drops
 * everything when the generation moved: `PRAGMA data_version` (another connection committed) or this
 * connection's `total_changes()` (it wrote, committed or not). Reads inside a transaction bypass the cache
 * (they may see rows a rollback removes, which no counter would then report). Bounded in bytes per kind;
 * the oldest entries go first. Holds strings only: every caller gets fresh objects built from them.
 */

/** An edge row as stored (types still JSON): shared between the lists of both ends, never mutated. */
export interface EdgeRow {
  a: string;
  b: string;
  types: string;
  strength: number;
  similarity: number | null;
}

/**
 * Statements this process ran for the cached reads (never reset here): edge reads (`neighbors`,
 * `edgesAmong`) and record reads (`getMemories`). Tests read differences to see what the cache answered.
 */
export const sqliteReadWork = { edgeStatements: 0, recordStatements: 0 };

/** Bytes of edge rows and of record JSON a connection keeps (each; about 100k edges, 40k chat records). */
const EDGE_BYTES = 16 * 1024 * 1024;
const RECORD_BYTES = 16 * 1024 * 1024;
/** Share of the budget an eviction leaves: batches amortise the walk. */
const EVICT_TO = 0.875;

export class SqliteReadCache {
  private generation = '';
  readonly edges = new BoundedMap<readonly EdgeRow[]>(EDGE_BYTES, edgeListBytes);
  readonly records = new BoundedMap<string>(RECORD_BYTES, (json) => 2 * json.length + 64);

  /** Drops every entry unless `generation` is the one the entries were read under. */
  validate(generation: string): void {
    if (generation === this.generation) return;
    this.edges.clear();
    this.records.clear();
    this.generation = generation;
  }
}

/** Cache key of a memory (the context's length first: unambiguous whatever characters the ids hold). */
export function memoryKey(contextId: string, memoryId: string): string {
  return `${contextId.length}:${contextId}${memoryId}`;
}

/** A Map bounded by an estimate of its values' bytes (keys counted too), evicting in insertion order. */
export class BoundedMap<T> {
  private readonly entries = new Map<string, T>();
  private bytes = 0;

  constructor(
    private readonly budget: number,
    private readonly sizeOf: (value: T) => number,
  ) {}

  get(key: string): T | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: T): void {
    if (this.entries.has(key)) return;
    const bytes = this.sizeOf(value) + 2 * key.length;
    if (bytes > this.budget / 64) return;
    this.entries.set(key, value);
    this.bytes += bytes;
    if (this.bytes > this.budget) this.evict();
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private evict(): void {
    const target = this.budget * EVICT_TO;
    for (const [key, value] of this.entries) {
      if (this.bytes <= target) break;
      this.entries.delete(key);
      this.bytes -= this.sizeOf(value) + 2 * key.length;
    }
  }
}

function edgeListBytes(rows: readonly EdgeRow[]): number {
  let bytes = 48;
  // A row held by both ends' lists is counted twice: the estimate stays an upper bound.
  for (const row of rows) bytes += 2 * (row.a.length + row.b.length + row.types.length) + 96;
  return bytes;
}
