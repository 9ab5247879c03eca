import type { SemanticPosting } from './semantic-index-spec.ts';

/**
 * Bytes of postings a connection keeps between writes, estimated per posting (postingBytes: the object, its
 * array slot and its id string); past it the least recently used lists are dropped. 40 MiB is ~400k
 * postings of short ids.
 */
export const SEMANTIC_POSTINGS_CACHE_BYTES = 40 << 20;

/** Only reads at least this long are kept: the truncated reads of common terms (MAX_POSTINGS_PER_TERM). */
export const CACHED_TOP_MIN = 256;

/**
 * The `{ top: n }` posting reads of the SQLite semantic index, kept across writes (exact, per connection).
 * Every incremental add reads its common terms through their n heaviest postings (n = 1,024: about half of
 * an add-1's posting rows at 10k), and consecutive adds share most common terms, so those reads are kept
 * and maintained instead of re-read:
 * - a document written by this connection (`inserted`) enters each cached list of its terms where it sorts
 *   (weight desc, then id as SQLite orders it); a tie on weight drops the list instead (JS and SQLite may
 *   order ids differently), as does any removal (`clearContext`: the removed postings are not known here);
 * - another connection's commit (`validate` with PRAGMA data_version) and a rolled-back unit of work
 *   (`clear`) drop everything.
 * So a cached list always equals what the statement would return now. Arrays handed out are copies.
 */
export class SemanticPostingsCache {
  private version = -1;
  /** Estimated bytes of the cached postings. */
  private bytes = 0;
  private count = 0;
  /** context -> term -> n -> rows. */
  private readonly lists = new Map<string, Map<string, Map<number, SemanticPosting[]>>>();
  /**
   * The kept lists by last use, least recent first. A full cache evicts from here: at 1M an add reads ~8
   * common terms, more than fit, and dropping every list at once made each add re-read ~2 of them (2,200
   * posting rows) whatever its terms.
   */
  private readonly order = new Map<string, { contextId: string; term: string; top: number }>();

  /**
   * `budget`: estimated bytes kept (tests use a small one). `minTop`: shorter reads are not kept (SQLite
   * re-reads short lists cheaply in process; a networked backend keeps them too, to skip whole statements).
   */
  constructor(
    private readonly budget = SEMANTIC_POSTINGS_CACHE_BYTES,
    private readonly minTop = CACHED_TOP_MIN,
  ) {}

  /** Estimated bytes held (tests). */
  get held(): number {
    return this.bytes;
  }

  /** Kept postings (tests). */
  get postings(): number {
    return this.count;
  }

  validate(version: number): void {
    if (version !== this.version) this.clear();
    this.version = version;
  }

  clear(): void {
    this.lists.clear();
    this.order.clear();
    this.bytes = 0;
    this.count = 0;
  }

  clearContext(contextId: string): void {
    const terms = this.lists.get(contextId);
    if (!terms) return;
    for (const [term, byTop] of [...terms])
      for (const top of [...byTop.keys()]) this.remove(contextId, term, top);
  }

  get(contextId: string, term: string, top: number): SemanticPosting[] | undefined {
    const rows = this.lists.get(contextId)?.get(term)?.get(top);
    if (!rows) return undefined;
    const key = keyOf(contextId, term, top);
    this.order.delete(key);
    this.order.set(key, { contextId, term, top });
    return rows.slice();
  }

  /** True when some read of `term` is kept (it may still be stale until `validate`). */
  keeps(contextId: string, term: string): boolean {
    return this.lists.get(contextId)?.has(term) ?? false;
  }

  /**
   * The first `n` postings of a kept list of `term` with top >= n: the same rows as `{ top: n }` (same
   * order; a kept list shorter than its top is the whole list). A forward search reads each query term's
   * top k (32) first, and at 1M most query terms are common ones whose 1,024 heaviest postings are kept.
   */
  prefix(contextId: string, term: string, n: number): SemanticPosting[] | undefined {
    const byTop = this.lists.get(contextId)?.get(term);
    if (!byTop) return undefined;
    for (const [top, rows] of byTop) {
      if (top < n) continue;
      const key = keyOf(contextId, term, top);
      this.order.delete(key);
      this.order.set(key, { contextId, term, top });
      return rows.slice(0, n);
    }
    return undefined;
  }

  /**
   * The longest kept read of `term` (its `top` heaviest postings; `top` may be Infinity: the whole list),
   * marked as used. The array itself, not a copy: callers must not change it.
   */
  widest(contextId: string, term: string): { top: number; rows: readonly SemanticPosting[] } | undefined {
    const byTop = this.lists.get(contextId)?.get(term);
    if (!byTop) return undefined;
    let best: { top: number; rows: readonly SemanticPosting[] } | undefined;
    for (const [top, rows] of byTop) {
      // More rows cover more; of equal lengths, the larger top tells whether the list ends there.
      if (!best || rows.length > best.rows.length || (rows.length === best.rows.length && top > best.top)) {
        best = { top, rows };
      }
    }
    if (!best) return undefined;
    const key = keyOf(contextId, term, best.top);
    this.order.delete(key);
    this.order.set(key, { contextId, term, top: best.top });
    return best;
  }

  set(contextId: string, term: string, top: number, rows: readonly SemanticPosting[]): void {
    if (top < this.minTop) return;
    const bytes = listBytes(rows);
    if (bytes > this.budget) return;
    this.remove(contextId, term, top);
    for (const oldest of this.order.values()) {
      if (this.bytes + bytes <= this.budget) break;
      this.remove(oldest.contextId, oldest.term, oldest.top);
    }
    let terms = this.lists.get(contextId);
    if (!terms) {
      terms = new Map();
      this.lists.set(contextId, terms);
    }
    let byTop = terms.get(term);
    if (!byTop) {
      byTop = new Map();
      terms.set(term, byTop);
    }
    this.bytes += bytes;
    this.count += rows.length;
    byTop.set(top, rows.slice());
    this.order.set(keyOf(contextId, term, top), { contextId, term, top });
  }

  /** A new document of `contextId` was written (its postings did not exist before). */
  inserted(contextId: string, memoryId: string, terms: readonly string[], weights: readonly number[]): void {
    const cached = this.lists.get(contextId);
    if (!cached) return;
    terms.forEach((term, at) => {
      const byTop = cached.get(term);
      if (!byTop) return;
      const weight = weights[at]!;
      for (const [top, rows] of [...byTop]) {
        const posting = { memoryId, weight };
        const outcome = enter(rows, top, posting);
        if (outcome === 'drop') this.remove(contextId, term, top);
        else if (outcome === 'inserted') {
          this.bytes += postingBytes(posting);
          if (rows.length > top) this.bytes -= postingBytes(rows.pop()!);
          else this.count++;
        }
      }
    });
  }

  private remove(contextId: string, term: string, top: number): void {
    const terms = this.lists.get(contextId);
    const byTop = terms?.get(term);
    const rows = byTop?.get(top);
    if (!terms || !byTop || !rows) return;
    this.bytes -= listBytes(rows);
    this.count -= rows.length;
    byTop.delete(top);
    if (byTop.size === 0) terms.delete(term);
    if (terms.size === 0) this.lists.delete(contextId);
    this.order.delete(keyOf(contextId, term, top));
  }
}

function keyOf(contextId: string, term: string, top: number): string {
  return `${contextId}\u0000${term}\u0000${top}`;
}

/**
 * Puts `posting` into `rows` (the `top` heaviest postings of a term, weight desc) where it sorts; 'drop'
 * when the list cannot be kept exactly: a posting of the same weight is there (the id order is SQLite's).
 */
function enter(
  rows: SemanticPosting[],
  top: number,
  posting: SemanticPosting,
): 'inserted' | 'below' | 'drop' {
  // First position whose weight is below the new one (rows are weight desc).
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows[mid]!.weight > posting.weight) lo = mid + 1;
    else hi = mid;
  }
  if (lo < rows.length && rows[lo]!.weight === posting.weight) return 'drop';
  // Below a full list's last posting: not among the top (the list stays as it is).
  if (lo === rows.length && rows.length >= top) return 'below';
  rows.splice(lo, 0, posting);
  return 'inserted';
}

/** A cached posting: the object (~40 bytes), its array slot and its memory id (2 bytes a character at most). */
function postingBytes(posting: SemanticPosting): number {
  return 48 + 2 * posting.memoryId.length;
}

function listBytes(rows: readonly SemanticPosting[]): number {
  let bytes = 64;
  for (const posting of rows) bytes += postingBytes(posting);
  return bytes;
}
