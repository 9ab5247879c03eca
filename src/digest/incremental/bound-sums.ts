import type { SemanticPosting } from '../../store/semantic-index-spec.ts';

/** One query term of a forward search: its weight in the query. */
export interface BoundTerm {
  term: string;
  weight: number;
}

/** What a round of exactTopK knows: the threshold and the candidates still to score exactly. */
export interface BoundView {
  /** k-th largest lower bound (exact score where known, partial sum otherwise) less `slack`. */
  theta: number;
  /** How many seen documents not scored yet have an upper bound that reaches theta. */
  pendingCount: number;
  /**
   * Those documents, best bound first. Built on demand: a round whose count says "read deeper" never needs
   * them, and at 1M a search's early rounds hold thousands (allocating and sorting them was most of `view`'s
   * cost, --cpu-prof). Valid until the next `update` or `view` of the same sums (throws after).
   */
  pending(): Array<{ id: string; upper: number }>;
  lower: LowerBounds;
}

/**
 * The partial sums of one forward search, kept across its rounds. Each round only extends the posting
 * prefixes of some terms (a deeper weight window, or a truncated term's heaviest postings, which start with
 * the top-k rows already read), so a posting is resolved to its document slot and added once per search;
 * recomputing every sum each round re-read the 1,024-posting prefixes of common terms up to six times (the
 * largest CPU item of an add, measured by --cpu-prof). The seen-cap sums, which do change with every cap,
 * are recomputed from the per-term slot arrays (typed arrays, no id lookups). A prefix that is not an
 * extension of what was added (never expected: every read is weight desc, then id) resets the sums.
 *
 * Sums are added in a different order than one pass per round would (floating point differs in the last
 * bits); bounds are only compared through `slack`, which is far above that, so the search reads and
 * returns the same as before.
 */
export class BoundSums {
  private ids: string[] = [];
  private slots = new SlotTable(this.ids);
  private sums = new Float64Array(256);
  private seenCaps = new Float64Array(256);
  /** Per term (query order): the slot of each posting added, -1 for the query itself. */
  private termSlots: Int32Array[];
  private termCounts: number[];
  private termRows: Array<readonly SemanticPosting[] | undefined>;
  /** Bumped by every view and update: a view's pending list reads the sums as they were at the view. */
  private version = 0;

  constructor(
    private readonly terms: readonly BoundTerm[],
    private readonly self: string,
  ) {
    this.termSlots = terms.map(() => new Int32Array(16));
    this.termCounts = terms.map(() => 0);
    this.termRows = terms.map(() => undefined);
  }

  /** Adds what each term's prefix holds beyond what was added before. */
  update(prefixes: ReadonlyMap<string, readonly SemanticPosting[]>): void {
    this.version++;
    for (let at = 0; at < this.terms.length; at++) {
      const rows = prefixes.get(this.terms[at]!.term)!;
      if (rows === this.termRows[at]) continue;
      if (!this.extends(at, rows)) {
        this.reset();
        this.update(prefixes);
        return;
      }
      this.add(at, rows);
    }
  }

  /** The bounds for caps `capOf` (what an unread posting of a term weighs at most). */
  view(capOf: (term: string) => number, exact: Map<string, number>, k: number, slack: number): BoundView {
    const count = this.ids.length;
    let capSum = 0;
    this.seenCaps.fill(0, 0, count);
    for (let at = 0; at < this.terms.length; at++) {
      const { term, weight } = this.terms[at]!;
      const cap = weight * capOf(term);
      capSum += cap;
      if (cap === 0) continue;
      const slots = this.termSlots[at]!;
      for (let i = 0, n = this.termCounts[at]!; i < n; i++) {
        const slot = slots[i]!;
        if (slot >= 0) this.seenCaps[slot]! += cap;
      }
    }
    const lower = new LowerBounds(this.slots, this.sums, count, exact);
    const theta = lower.kth(k) - slack;
    // A slot marked scored is one whose id has an exact score (LowerBounds marks them): no map lookup.
    const scored = lower.scored;
    const upperOf = (slot: number): number => this.sums[slot]! + capSum - this.seenCaps[slot]!;
    const reaches = (slot: number): boolean => scored[slot] === 0 && upperOf(slot) >= theta;
    let pendingCount = 0;
    for (let slot = 0; slot < count; slot++) if (reaches(slot)) pendingCount++;
    const version = ++this.version;
    const pending = (): Array<{ id: string; upper: number }> => {
      if (version !== this.version) throw new Error('BoundSums: a view was read after the sums changed');
      const out: Array<{ id: string; upper: number }> = [];
      for (let slot = 0; slot < count; slot++) {
        if (reaches(slot)) out.push({ id: this.ids[slot]!, upper: upperOf(slot) });
      }
      return out.sort((x, y) => y.upper - x.upper);
    };
    return { theta, pendingCount, pending, lower };
  }

  /** True when `rows` starts with the postings added for term `at` (same documents, same order). */
  private extends(at: number, rows: readonly SemanticPosting[]): boolean {
    const n = this.termCounts[at]!;
    if (rows.length < n) return false;
    const slots = this.termSlots[at]!;
    for (let i = 0; i < n; i++) {
      const slot = slots[i]!;
      const id = rows[i]!.memoryId;
      if (slot < 0 ? id !== this.self : this.ids[slot] !== id) return false;
    }
    return true;
  }

  private add(at: number, rows: readonly SemanticPosting[]): void {
    const weight = this.terms[at]!.weight;
    let n = this.termCounts[at]!;
    let slots = this.termSlots[at]!;
    if (slots.length < rows.length) {
      const wider = new Int32Array(Math.max(rows.length, slots.length * 2));
      wider.set(slots.subarray(0, n));
      slots = wider;
      this.termSlots[at] = slots;
    }
    for (; n < rows.length; n++) {
      const posting = rows[n]!;
      if (posting.memoryId === this.self) {
        slots[n] = -1;
        continue;
      }
      const slot = this.slots.slotOf(posting.memoryId);
      if (slot === this.sums.length) {
        this.sums = grow(this.sums);
        this.seenCaps = grow(this.seenCaps);
      }
      this.sums[slot]! += weight * posting.weight;
      slots[n] = slot;
    }
    this.termCounts[at] = n;
    this.termRows[at] = rows;
  }

  private reset(): void {
    this.ids = [];
    this.slots = new SlotTable(this.ids);
    this.sums = new Float64Array(256);
    this.seenCaps = new Float64Array(256);
    this.termSlots = this.terms.map(() => new Int32Array(16));
    this.termCounts = this.terms.map(() => 0);
    this.termRows = this.terms.map(() => undefined);
  }
}

/**
 * Every seen document's lower bound: its partial sum by slot, replaced by its exact score once scored (and
 * exact scores of documents never seen in a posting, the seeds). Kept in typed arrays rather than a map
 * entry per document: refine takes the k-th largest after every scored batch.
 */
export class LowerBounds {
  /** Per slot: 1 once its document has an exact score (read by BoundSums.view). */
  readonly scored: Uint8Array;

  constructor(
    private readonly slots: SlotTable,
    private readonly sums: Float64Array,
    private readonly count: number,
    private readonly exact: Map<string, number>,
  ) {
    this.scored = new Uint8Array(count);
    for (const id of exact.keys()) this.mark(id);
  }

  set(id: string, score: number): void {
    this.exact.set(id, score);
    this.mark(id);
  }

  /** The k-th largest lower bound (0 when fewer than k), one value per document. */
  kth(k: number): number {
    const top: number[] = [];
    for (let slot = 0; slot < this.count; slot++) {
      if (this.scored[slot] === 0) keepLargest(top, k, this.sums[slot]!);
    }
    // forEach, not for-of: for-of's iterator-result reads had no type feedback while `exact` was still
    // empty (the search's first calls), and the optimized kth bailed out at them once per add.
    this.exact.forEach((score) => {
      keepLargest(top, k, score);
    });
    return top.length < k ? 0 : top[0]!;
  }

  private mark(id: string): void {
    const slot = this.slots.find(id);
    if (slot !== undefined) this.scored[slot] = 1;
  }
}

function grow(values: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> {
  const out = new Float64Array(values.length * 2);
  out.set(values);
  return out;
}

/**
 * Keeps the k largest values seen in `top` (ascending; k is small, so no copy and no full sort): the k-th
 * largest is then top[0] once k values are in.
 */
function keepLargest(top: number[], k: number, value: number): void {
  if (top.length === k) {
    if (!(value > top[0]!)) return;
    top.shift();
  }
  let at = top.length;
  while (at > 0 && top[at - 1]! > value) at--;
  top.splice(at, 0, value);
}

/**
 * Memory id -> slot of one search: open addressing (linear probing, at most half full) over typed arrays,
 * keyed by an FNV-1a hash of the id and confirmed by the id itself, so a lookup is exact. At 1M a search adds
 * ~8k postings, most of them ids split fresh from a kept row: a Map keyed by those strings cost ~270 ns a
 * posting (the largest JavaScript item of an add-1, --cpu-prof); this table ~3x less (docs/living-archive.md
 * "Round 24").
 */
export class SlotTable {
  private hashes = new Int32Array(1024);
  /** Slot + 1 per table entry; 0 = empty. */
  private entries = new Int32Array(1024);

  /** `ids`: slot -> id, appended to by slotOf (the caller's array). `hash`: tests force collisions with it. */
  constructor(
    private readonly ids: string[],
    private readonly hash: (id: string) => number = (id) => hashOf(id),
  ) {}

  /** The slot of `id`; a new one (the next index of `ids`, pushed) when it has none. */
  slotOf(id: string): number {
    const hash = this.hash(id);
    const mask = this.entries.length - 1;
    let at = hash & mask;
    for (; ; at = (at + 1) & mask) {
      const entry = this.entries[at]!;
      if (entry === 0) break;
      if (this.hashes[at] === hash && this.ids[entry - 1] === id) return entry - 1;
    }
    const slot = this.ids.length;
    this.ids.push(id);
    this.hashes[at] = hash;
    this.entries[at] = slot + 1;
    if (this.ids.length * 2 > this.entries.length) this.grow();
    return slot;
  }

  /** The slot of `id`, if it has one. */
  find(id: string): number | undefined {
    const hash = this.hash(id);
    const mask = this.entries.length - 1;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const entry = this.entries[at]!;
      if (entry === 0) return undefined;
      if (this.hashes[at] === hash && this.ids[entry - 1] === id) return entry - 1;
    }
  }

  private grow(): void {
    const hashes = this.hashes;
    const entries = this.entries;
    this.hashes = new Int32Array(entries.length * 2);
    this.entries = new Int32Array(entries.length * 2);
    const mask = this.entries.length - 1;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      if (entry === 0) continue;
      let at = hashes[i]! & mask;
      while (this.entries[at] !== 0) at = (at + 1) & mask;
      this.hashes[at] = hashes[i]!;
      this.entries[at] = entry;
    }
  }
}

/**
 * The hash seed of this process. Memory ids are chosen by clients: with a fixed hash, ids picked to share a
 * table index (a brute force of ~2^15 tries each, offline) would turn one user's searches into long probe runs on
 * the write worker every user shares. Slots are given in order of first sight, so results do not depend on it.
 */
const PROCESS_SEED = Math.floor(Math.random() * 0x100000000) | 0 || 1;

/**
 * FNV-1a over the UTF-16 code units from a seeded basis, with a final mix so the low bits (the table index) use
 * every unit and the seed.
 */
export function hashOf(id: string, seed: number = PROCESS_SEED): number {
  let hash = (0x811c9dc5 ^ seed) | 0;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  hash ^= hash >>> 15;
  return Math.imul(hash, 0x2c1b3c6d) ^ (hash >>> 12);
}
