/**
 * Per-connection cache of the edges a question reads around its pool (sqlite-relations.ts): each memory's
 * complete edge list (`neighbors`), by (context, memory id), which also answers `edgesAmong` for pairs with a
 * cached end. A warm retrieve at 10k read ~160 edge rows per question through two or three statements;
 * questions about one archive keep meeting the same memories (half of a 300-question run's pool members had
 * been in an earlier pool). Records are kept above the port (src/pipeline/pool-records.ts, same generation).
 *
 * Exact: an entry is what the statement returned under one write generation of the file, and `validate` drops
 * everything when the generation moved: `PRAGMA data_version` (another connection committed) or this
 * connection's `total_changes()` (it wrote, committed or not). Reads inside a transaction bypass the cache
 * (they may see rows a rollback removes, which no counter would then report). Bounded in bytes;
 * the oldest entries go first. Holds the rows as read: every caller gets fresh edge objects built from them.
 */

/** An edge row as stored (types still JSON): shared between the lists of both ends, never mutated. */
export interface EdgeRow {
  a: string;
  b: string;
  /** pairKey(a, b), built once per row read: warm questions meet the same rows again and again. */
  key: string;
  types: string;
  strength: number;
  similarity: number | null;
}

/**
 * Edge statements this process ran for `neighbors` and `edgesAmong` (never reset here). Tests read
 * differences to see what the cache answered.
 */
export const sqliteReadWork = { edgeStatements: 0 };

/** Bytes of edge rows a connection keeps (about 100k edges). */
const EDGE_BYTES = 16 * 1024 * 1024;
/** Share of the budget an eviction leaves: batches amortise the walk. */
const EVICT_TO = 0.875;

export class SqliteReadCache {
  private generation = '';
  readonly edges = new BoundedMap<readonly EdgeRow[]>(EDGE_BYTES, edgeListBytes);

  /** Drops every entry unless `generation` is the one the entries were read under. */
  validate(generation: string): void {
    if (generation === this.generation) return;
    this.edges.clear();
    this.generation = generation;
  }
}

/** Cache key of a memory (the context's length first: unambiguous whatever characters the ids hold). */
export function memoryKey(contextId: string, memoryId: string): string {
  // A question's ~150 lookups share one context: its prefix is formatted once, not per lookup.
  if (contextId !== keyContext) {
    keyContext = contextId;
    keyPrefix = `${contextId.length}:${contextId}`;
  }
  return keyPrefix + memoryId;
}

let keyContext = '';
let keyPrefix = '0:';

/**
 * A Map bounded by an estimate of its values' bytes (keys counted too), evicting in insertion order. Each
 * entry keeps its estimate, so an eviction does not measure the value again.
 */
export class BoundedMap<T> {
  private readonly entries = new Map<string, { value: T; bytes: number }>();
  private bytes = 0;

  constructor(
    private readonly budget: number,
    private readonly sizeOf: (value: T) => number,
  ) {}

  get(key: string): T | undefined {
    return this.entries.get(key)?.value;
  }

  set(key: string, value: T): void {
    if (this.entries.has(key)) return;
    const bytes = this.sizeOf(value) + 2 * key.length;
    if (bytes > this.budget / 64) return;
    this.entries.set(key, { value, bytes });
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
    for (const [key, entry] of this.entries) {
      if (this.bytes <= target) break;
      this.entries.delete(key);
      this.bytes -= entry.bytes;
    }
  }
}

function edgeListBytes(rows: readonly EdgeRow[]): number {
  let bytes = 48;
  // A row held by both ends' lists is counted twice: the estimate stays an upper bound.
  for (const row of rows) bytes += 2 * (2 * (row.a.length + row.b.length) + row.types.length) + 120;
  return bytes;
}
