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

import { BoundedMap } from './bounded-map.ts';

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

function edgeListBytes(rows: readonly EdgeRow[]): number {
  let bytes = 48;
  // A row held by both ends' lists is counted twice: the estimate stays an upper bound.
  for (const row of rows) bytes += 2 * (2 * (row.a.length + row.b.length) + row.types.length) + 120;
  return bytes;
}
