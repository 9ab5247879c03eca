import type { FieldRow } from './search-lexical-index.ts';

/**
 * Per-connection caches of the SQLite lexical search (search-lexical-index.ts). Both are exact: the
 * postings cache is dropped whenever the database changes, the document cache holds rows that never change.
 */

/** Rows of postings pages a connection keeps between writes (8 bytes each: about 8 MiB). */
const PAGE_CACHE_ROWS = 1_000_000;

/**
 * What searches read from the postings (FTS5 doclist pages, per-term bucket counts, field statistics), kept
 * while the database does not change: `validate` drops everything when `PRAGMA data_version` moved (another
 * connection committed) and `lexicalIndexWritten` when this connection wrote. A warm question re-read the
 * pages of the same common terms through ~30 FTS5 queries; those are now map lookups. Arrays handed out
 * are shared and never mutated by the search.
 */
export class PostingsCache {
  private version = -1;
  private written = false;
  private active = true;
  private rows = 0;
  private readonly pages = new Map<string, number[]>();
  private readonly stats = new Map<string, { bucket: number; docs: number }[] | null>();
  private readonly fieldRows = new Map<string, FieldRow[]>();

  validate(version: number): void {
    if (version !== this.version || this.written) this.clear();
    this.version = version;
    this.written = false;
  }

  markWritten(): void {
    this.written = true;
  }

  /** Runs `work` reading and storing nothing. */
  bypass<T>(work: () => T): T {
    this.active = false;
    try {
      return work();
    } finally {
      this.active = true;
    }
  }

  fields(contextId: string, read: () => FieldRow[]): FieldRow[] {
    if (!this.active) return read();
    let rows = this.fieldRows.get(contextId);
    if (rows === undefined) {
      rows = read();
      if (this.fieldRows.size > 4096) this.fieldRows.clear();
      this.fieldRows.set(contextId, rows);
    }
    return rows;
  }

  termStats(
    field: number,
    terms: readonly number[],
    read: (missing: number[]) => Map<number, { bucket: number; docs: number }[]>,
  ): Map<number, { bucket: number; docs: number }[]> {
    if (!this.active) return read([...terms]);
    const found = new Map<number, { bucket: number; docs: number }[]>();
    const missing: number[] = [];
    for (const term of terms) {
      const hit = this.stats.get(`${field}:${term}`);
      if (hit === undefined) missing.push(term);
      else if (hit !== null) found.set(term, hit);
    }
    if (missing.length > 0) {
      const read_ = read(missing);
      if (this.stats.size > 200_000) this.stats.clear();
      for (const term of missing) {
        const list = read_.get(term);
        // null: the term has no postings in this field (remembered too).
        this.stats.set(`${field}:${term}`, list ?? null);
        if (list) found.set(term, list);
      }
    }
    return found;
  }

  page(token: string, after: number, size: number, read: () => number[]): number[] {
    if (!this.active) return read();
    const key = `${token}:${after}:${size}`;
    let rows = this.pages.get(key);
    if (rows === undefined) {
      rows = read();
      if (this.rows + rows.length > PAGE_CACHE_ROWS) {
        this.pages.clear();
        this.rows = 0;
      }
      this.pages.set(key, rows);
      this.rows += rows.length;
    }
    return rows;
  }

  private clear(): void {
    this.pages.clear();
    this.stats.clear();
    this.fieldRows.clear();
    this.rows = 0;
  }
}

/** This connection wrote to the lexical index (called after its transaction committed). */
export interface CachedDocument {
  memoryId: string;
  key: string;
  /** The forward blob [doc id, length, term id, tf, ...]. */
  terms: Buffer;
}

/** Bytes of forward lists a connection keeps (about 100k typical chat views). */
const DOCUMENT_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * The lex_docs rows recent searches scored, by id, bounded by DOCUMENT_CACHE_BYTES; eviction keeps the
 * recently read (CLOCK: a read sets a flag, the eviction walk spares a flagged entry once and clears it). A row
 * is immutable (documents are removed and re-added under new ids, never rewritten) and ids are never reused
 * (AUTOINCREMENT), so an entry is never stale: a deleted document loses its postings and is simply not a
 * candidate again. Reading ~250 candidates per field by id was the largest part of a warm question's lexical
 * search at 10k memories. Holds term ids and memory ids, no text.
 *
 * Why a flag and not a move to the back (a true LRU, as before): V8 Maps pay a delete + re-insert of the same
 * key with a rehash far more often than once per table (measured: ~1 us a hit at 16k entries, 10-50 us for a
 * key read again and again), and a warm question hits hundreds of entries.
 */
export class DocumentCache {
  private readonly entries = new Map<number, { value: CachedDocument; used: boolean }>();
  private bytes = 0;

  constructor(private readonly budget = DOCUMENT_CACHE_BYTES) {}

  get(doc: number): CachedDocument | undefined {
    const hit = this.entries.get(doc);
    if (!hit) return undefined;
    hit.used = true;
    return hit.value;
  }

  set(doc: number, value: CachedDocument): void {
    if (this.entries.has(doc)) return;
    this.entries.set(doc, { value, used: false });
    this.bytes += size(value);
    if (this.bytes > this.budget) this.evict();
  }

  /** Entries held (tests). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Drops entries not read since the last walk, oldest first, down to EVICT_TO of the budget, walking ONE
   * iterator per pass (a fresh `entries().next()` per evicted entry skips every deleted slot at the front of
   * V8's ordered hash table until it rehashes: issue #10, docs/living-archive.md "A question"). A pass that
   * only cleared flags is followed by one that evicts.
   */
  private evict(): void {
    const target = this.budget * EVICT_TO;
    while (this.bytes > target) {
      for (const [doc, entry] of this.entries) {
        if (this.bytes <= target) break;
        if (entry.used) {
          entry.used = false;
          continue;
        }
        this.entries.delete(doc);
        this.bytes -= size(entry.value);
      }
    }
  }
}

/** Share of the budget an eviction leaves: batches amortise the walk, the cache stays mostly full. */
const EVICT_TO = 0.875;

function size(entry: CachedDocument): number {
  return entry.terms.length + 2 * (entry.memoryId.length + entry.key.length) + 64;
}
