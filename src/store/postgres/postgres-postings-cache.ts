import type { SemanticPosting } from '../semantic-index-spec.ts';
import { SemanticPostingsCache } from '../semantic-postings-cache.ts';
import type { UnitPrefetch } from './postgres-unit-prefetch.ts';

/** Document frequencies kept at most, all contexts together (~100 bytes each). */
const MAX_KEPT_DF = 200_000;
/** Contexts whose kept reads' version is remembered at most. */
const MAX_VERSIONS = 4096;

/** One weight-ordered read of a term's postings: min <= weight < below, the first `top` (null: all). */
export interface WindowRead {
  term: string;
  min: number;
  below: number;
  top: number | null;
}

/**
 * The PostgreSQL semantic index's posting reads kept across units of work (per store): an add-1 at 10k read
 * ~1,700 posting rows in two or three statements, most of them the same common and short lists as the add
 * before (rows cost Node ~1-2 us each to parse, and the server its index scans). A kept read is a term's
 * `top` heaviest postings (SemanticPostingsCache; Infinity: the whole list); a window is served when a kept
 * read holds all of it, and the store's answer is the same rows in the same order.
 *
 * Exactness across processes: the cache of a context is used only inside a write unit of work (it holds the
 * context's lock) whose read-ahead version (UnitPrefetch.snapshotVersion: the semantic snapshot row's xmin,
 * change count and creation time) equals the version the cache was left at by the last unit that used it and
 * committed. Every statement that changes a context's postings writes or deletes that row (writeDocs,
 * replaceAll, deleteMemory, deleteContext), so any other writer (another process, a write outside a unit)
 * moves the version and the context's lists are dropped. Inside the unit, its own writeDocs keep the lists
 * current (SemanticPostingsCache.inserted; a removal or a replaced document drops them) and the version with
 * them; any other write of the unit invalidates its read-ahead, and the unit stops using the cache and drops
 * it at its end, as does a rollback. Reads outside a write unit never use it.
 */
export class PostgresPostingsCache {
  private readonly lists: SemanticPostingsCache;
  /** Per context: document frequencies at the snapshot (null: the term has none), kept with the lists. */
  private readonly df = new Map<string, Map<string, number | null>>();
  /** Frequencies kept, all contexts (MAX_KEPT_DF at most). */
  private dfTerms = 0;
  /** Per context: the version its kept lists are exact at (set when the unit that used them committed). */
  private readonly versions = new Map<string, string>();
  /** Per context: the unit using (and maintaining) its lists now. */
  private readonly owners = new Map<string, UnitPrefetch>();
  /** Per context: writeDocs in flight (reads bypass the lists meanwhile). */
  private readonly inFlight = new Map<string, number>();
  /** Moves at each write's start and end, any context: a read started before one is not kept. */
  private writeEpoch = 0;

  constructor(budget?: number) {
    // Every read is kept (minTop 1): a lone short list still costs a statement when missing.
    this.lists = new SemanticPostingsCache(budget, 1);
  }

  /** Postings held (tests). */
  get postings(): number {
    return this.lists.postings;
  }

  /**
   * Whether reads of `contextId` in the unit whose read-ahead is `unit` may use and fill the lists; the unit
   * takes them over (dropping them unless their version is the one it read ahead).
   */
  usable(contextId: string, unit: UnitPrefetch | undefined): boolean {
    const owner = this.owners.get(contextId);
    if (!unit?.snapshot || unit.snapshotVersion === undefined) {
      // A write of the unit other than writeDocs: its lists may be stale from here on.
      if (owner !== undefined && owner === unit) this.drop(contextId);
      return false;
    }
    if ((this.inFlight.get(contextId) ?? 0) > 0) return false;
    if (owner === unit) return true;
    // A unit holds the context's lock from its read-ahead on, so an earlier owner has ended at the server
    // (its end hook may not have run yet: then its version is unknown and the lists go).
    if (owner !== undefined || this.versions.get(contextId) !== unit.snapshotVersion) {
      this.clear(contextId);
    }
    this.versions.delete(contextId);
    this.owners.set(contextId, unit);
    unit.onEnd((committed) => {
      if (this.owners.get(contextId) !== unit) return;
      this.owners.delete(contextId);
      if (committed && unit.snapshotVersion !== undefined) {
        // Bounded: a context whose version was forgotten drops its lists at its next unit (a miss).
        this.versions.delete(contextId);
        if (this.versions.size >= MAX_VERSIONS) this.forget(this.versions.keys().next().value!);
        this.versions.set(contextId, unit.snapshotVersion);
      } else this.clear(contextId);
    });
    return true;
  }

  /** The write counter, read before a read is issued (`keep` compares it). */
  get epoch(): number {
    return this.writeEpoch;
  }

  /** `read`'s rows from the kept lists, or undefined (read the store). */
  get(contextId: string, read: WindowRead): SemanticPosting[] | undefined {
    const kept = this.lists.widest(contextId, read.term);
    if (!kept) return undefined;
    const { rows, top } = kept;
    // A read shorter than its top is the whole list.
    const whole = rows.length < top;
    if (read.top !== null) {
      if (read.min !== Number.NEGATIVE_INFINITY || read.below !== Number.POSITIVE_INFINITY) return undefined;
      return whole || rows.length >= read.top ? rows.slice(0, Math.max(0, read.top)) : undefined;
    }
    // Every posting with weight >= min is kept when the kept rows go below min (ties at min may follow).
    if (!whole && !(rows.length > 0 && rows[rows.length - 1]!.weight < read.min)) return undefined;
    return rows.filter((posting) => posting.weight >= read.min && posting.weight < read.below);
  }

  /** Keeps a store read's rows (when no write of the context started since `epoch` and the unit still owns). */
  keep(
    contextId: string,
    unit: UnitPrefetch | undefined,
    epoch: number,
    read: WindowRead,
    rows: SemanticPosting[],
  ) {
    if (this.owners.get(contextId) !== unit || this.writeEpoch !== epoch) return;
    if (read.below !== Number.POSITIVE_INFINITY) return;
    if (read.top !== null) {
      if (read.min === Number.NEGATIVE_INFINITY) this.lists.set(contextId, read.term, read.top, rows);
      return;
    }
    // Weights are positive: from 0 down it is the whole list; otherwise the first rows.length postings.
    const top = read.min <= 0 ? Number.POSITIVE_INFINITY : rows.length;
    if (top > 0) this.lists.set(contextId, read.term, top, rows);
  }

  /**
   * A writeDocs of `contextId` starts in the unit `unit`; the returned function ends it with what it did
   * (undefined: it failed; the unit rolls back and its end drops the lists).
   */
  writing(
    contextId: string,
    unit: UnitPrefetch | undefined,
  ): (done?: {
    put: ReadonlyArray<{ memoryId: string; terms: readonly string[]; weights: readonly number[] }>;
    replaced: boolean;
  }) => void {
    this.inFlight.set(contextId, (this.inFlight.get(contextId) ?? 0) + 1);
    this.writeEpoch++;
    return (done) => {
      const left = this.inFlight.get(contextId)! - 1;
      if (left > 0) this.inFlight.set(contextId, left);
      else this.inFlight.delete(contextId);
      this.writeEpoch++;
      const owned = unit !== undefined && this.owners.get(contextId) === unit;
      if (!owned) {
        // Not this unit's lists: they are checked against the version when next used.
        return;
      }
      if (!done || done.replaced) {
        this.drop(contextId);
        return;
      }
      for (const doc of done.put) this.lists.inserted(contextId, doc.memoryId, doc.terms, doc.weights);
    };
  }

  /**
   * The largest weight of `term` (termBounds' maxWeight) from a kept read: null when the kept read is the
   * whole list and it is empty, undefined when nothing is kept (read the store).
   */
  maxWeight(contextId: string, term: string): number | null | undefined {
    const kept = this.lists.widest(contextId, term);
    if (!kept) return undefined;
    if (kept.rows.length > 0) return kept.rows[0]!.weight;
    return kept.top > 0 ? null : undefined;
  }

  /** Kept document frequencies of `terms` (null: none), and the terms not kept. */
  frequencies(
    contextId: string,
    terms: readonly string[],
  ): { known: Map<string, number | null>; missing: string[] } {
    const kept = this.df.get(contextId);
    const known = new Map<string, number | null>();
    const missing: string[] = [];
    for (const term of new Set(terms)) {
      const df = kept?.get(term);
      if (df === undefined) missing.push(term);
      else known.set(term, df);
    }
    return { known, missing };
  }

  /** Keeps document frequencies read by the unit that owns the context (`read`: the terms asked). */
  keepFrequencies(
    contextId: string,
    unit: UnitPrefetch | undefined,
    read: readonly string[],
    found: ReadonlyMap<string, number>,
  ) {
    if (this.owners.get(contextId) !== unit) return;
    const kept = this.df.get(contextId) ?? new Map<string, number | null>();
    // Most recently used context last; past the bound, the least recently used contexts' terms go whole.
    this.df.delete(contextId);
    this.dfTerms -= kept.size;
    if (kept.size + read.length > MAX_KEPT_DF) kept.clear();
    for (const [other, terms] of this.df) {
      if (this.dfTerms + kept.size + read.length <= MAX_KEPT_DF) break;
      this.df.delete(other);
      this.dfTerms -= terms.size;
    }
    for (const term of read) kept.set(term, found.get(term) ?? null);
    this.df.set(contextId, kept);
    this.dfTerms += kept.size;
  }

  /** Drops what is kept of `contextId` (lists and frequencies). */
  private clear(contextId: string): void {
    this.lists.clearContext(contextId);
    this.dfTerms -= this.df.get(contextId)?.size ?? 0;
    this.df.delete(contextId);
  }

  /** Drops what is kept of a context no unit owns (its version is forgotten). */
  private forget(contextId: string): void {
    this.versions.delete(contextId);
    if (!this.owners.has(contextId)) this.clear(contextId);
  }

  /** Drops the lists of `contextId` and its owner (nothing is known of them any more). */
  private drop(contextId: string): void {
    this.clear(contextId);
    this.owners.delete(contextId);
    this.versions.delete(contextId);
  }
}
