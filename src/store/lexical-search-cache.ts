import type { FieldRow } from './search-lexical-index.ts';

/**
 * Per-connection caches of the SQLite lexical search (search-lexical-index.ts). Both are exact: the
 * postings cache is dropped whenever the database changes, the document cache holds rows that never change.
 */

/**
 * Byte budgets of a connection's PostingsCache (estimated sizes: see the `*Bytes` functions below). Each part
 * is dropped whole when an entry would take it past its budget: pages (doclist rows, 8 bytes each) 8 MiB,
 * term statistics 8 MiB, field rows 1 MiB. Counts of entries did not bound memory (a statistics entry holds
 * one object per impact bucket), and issue #10 bounds peak RSS at 1M memories.
 */
export const POSTINGS_CACHE_BUDGET = { pages: 8 << 20, stats: 8 << 20, fields: 1 << 20 } as const;

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
  private readonly bytes = { pages: 0, stats: 0, fields: 0 };
  private readonly pages = new Map<string, number[]>();
  private readonly stats = new Map<string, { bucket: number; docs: number }[] | null>();
  private readonly fieldRows = new Map<string, FieldRow[]>();
  private readonly absent = new Set<string>();

  constructor(
    private readonly budget: { pages: number; stats: number; fields: number } = POSTINGS_CACHE_BUDGET,
  ) {}

  /** Estimated bytes held per part (tests). */
  get held(): Readonly<{ pages: number; stats: number; fields: number }> {
    return { ...this.bytes };
  }

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
      const bytes = entryBytes(contextId) + 96 * rows.length;
      if (this.bytes.fields + bytes > this.budget.fields) {
        this.fieldRows.clear();
        this.bytes.fields = 0;
      }
      this.fieldRows.set(contextId, rows);
      this.bytes.fields += bytes;
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
      for (const term of missing) {
        const list = read_.get(term);
        const key = `${field}:${term}`;
        // One object per impact bucket (~40 bytes each with its array slot).
        const bytes = entryBytes(key) + 40 * (list?.length ?? 0);
        if (this.bytes.stats + bytes > this.budget.stats) {
          this.stats.clear();
          this.bytes.stats = 0;
        }
        // null: the term has no postings in this field (remembered too).
        this.stats.set(key, list ?? null);
        this.bytes.stats += bytes;
        if (list) found.set(term, list);
      }
    }
    return found;
  }

  /**
   * Query terms the dictionary lacks in the current state (dropped with the rest on a change: a write may add
   * them); undefined while bypassed. Bounded: emptied past ABSENT_TERMS entries.
   */
  absentTerms(): Set<string> | undefined {
    if (!this.active) return undefined;
    if (this.absent.size >= ABSENT_TERMS) this.absent.clear();
    return this.absent;
  }

  page(token: string, after: number, size: number, read: () => number[]): number[] {
    if (!this.active) return read();
    const key = `${token}:${after}:${size}`;
    let rows = this.pages.get(key);
    if (rows === undefined) {
      rows = read();
      const bytes = entryBytes(key) + 8 * rows.length;
      if (this.bytes.pages + bytes > this.budget.pages) {
        this.pages.clear();
        this.bytes.pages = 0;
      }
      this.pages.set(key, rows);
      this.bytes.pages += bytes;
    }
    return rows;
  }

  private clear(): void {
    this.absent.clear();
    this.pages.clear();
    this.stats.clear();
    this.fieldRows.clear();
    this.bytes.pages = 0;
    this.bytes.stats = 0;
    this.bytes.fields = 0;
  }
}

/** Absent terms a PostingsCache remembers at most (a few words of each question). */
const ABSENT_TERMS = 4096;

/** A map entry keyed by `key`: the key string (2 bytes a character at most), the entry and its array header. */
function entryBytes(key: string): number {
  return 2 * key.length + 64;
}

/** This connection wrote to the lexical index (called after its transaction committed). */
export interface CachedDocument {
  memoryId: string;
  key: string;
  /** The forward list [doc id, length, term id, tf, ...] (forwardWords of the lex_docs blob). */
  terms: Uint32Array;
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
  return entry.terms.byteLength + 2 * (entry.memoryId.length + entry.key.length) + 64;
}
