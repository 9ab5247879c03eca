/** One mutual-kNN pair by document index (a < b), with the mean of the two directed cosines. */
export interface KnnPair {
  a: number;
  b: number;
  similarity: number;
}

/** The arrays of a TopKLists (posted between threads: transferred, not copied). */
export interface TopKListArrays {
  k: number;
  neighbour: Int32Array;
  score: Float64Array;
  count: Uint16Array;
  kth: Float64Array;
}

/**
 * Bounded nearest-neighbour lists for n items: each keeps its k best (score desc, then index asc, so ties
 * resolve the same way on every run). Flat typed arrays: no per-item allocation for 100k items.
 */
export class TopKLists {
  readonly k: number;
  private readonly neighbour: Int32Array;
  private readonly score: Float64Array;
  private readonly count: Uint16Array;
  /** Entry score per item (0 until full, then the k-th score): one read decides most offers. */
  private readonly kth: Float64Array;

  constructor(n: number, k: number, arrays?: TopKListArrays) {
    this.k = k;
    if (arrays !== undefined) {
      if (arrays.k !== k || arrays.count.length !== n || arrays.neighbour.length !== n * k) {
        throw new RangeError(`lists of ${arrays.count.length} x ${arrays.k} given for ${n} x ${k}`);
      }
      ({ neighbour: this.neighbour, score: this.score, count: this.count, kth: this.kth } = arrays);
      return;
    }
    this.neighbour = new Int32Array(n * k);
    this.score = new Float64Array(n * k);
    this.count = new Uint16Array(n);
    this.kth = new Float64Array(n);
  }

  /** The lists' arrays, shared with this object (a worker transfers them to the thread that merges). */
  arrays(): TopKListArrays {
    return { k: this.k, neighbour: this.neighbour, score: this.score, count: this.count, kth: this.kth };
  }

  /**
   * Offers every entry of `other` (lists of the same items, filled from other offers) that this list does not
   * hold: each list then keeps the k best of both, as if it had been offered both sets (offer keeps the k
   * best of what it is given, whatever the order).
   */
  merge(other: TopKLists): void {
    if (other.k !== this.k || other.count.length !== this.count.length) {
      throw new RangeError('merge of lists of other items or another k');
    }
    for (let item = 0; item < this.count.length; item++) {
      const base = item * this.k;
      for (let r = 0; r < other.count[item]!; r++) {
        const j = other.neighbour[base + r]!;
        if (this.scoreOf(item, j) === undefined) this.offer(item, j, other.score[base + r]!);
      }
    }
  }

  /** Offers `other` with `score` to the list of `item`; scores <= 0 are never neighbours. */
  offer(item: number, other: number, score: number): void {
    if (!(score > 0) || score < this.kth[item]!) return;
    const base = item * this.k;
    let size = this.count[item]!;
    if (size === this.k) {
      const lastScore = this.score[base + size - 1]!;
      if (score < lastScore || (score === lastScore && other > this.neighbour[base + size - 1]!)) return;
      size--;
    } else {
      this.count[item] = size + 1;
    }
    let at = base + size;
    while (at > base) {
      const prevScore = this.score[at - 1]!;
      if (prevScore > score || (prevScore === score && this.neighbour[at - 1]! < other)) break;
      this.score[at] = prevScore;
      this.neighbour[at] = this.neighbour[at - 1]!;
      at--;
    }
    this.score[at] = score;
    this.neighbour[at] = other;
    if (this.count[item] === this.k) this.kth[item] = this.score[base + this.k - 1]!;
  }

  /** The score a newcomer must reach to enter `item`'s list: 0 until it is full, then its k-th score. */
  threshold(item: number): number {
    return this.kth[item]!;
  }

  /** Neighbours of `item`, best first. */
  neighbours(item: number): Array<{ index: number; score: number }> {
    const base = item * this.k;
    const out: Array<{ index: number; score: number }> = [];
    for (let r = 0; r < this.count[item]!; r++) {
      out.push({ index: this.neighbour[base + r]!, score: this.score[base + r]! });
    }
    return out;
  }

  /** The directed score of `other` in `item`'s list, or undefined when it is not there. */
  scoreOf(item: number, other: number): number | undefined {
    const base = item * this.k;
    for (let r = 0; r < this.count[item]!; r++) {
      if (this.neighbour[base + r] === other) return this.score[base + r];
    }
    return undefined;
  }

  /**
   * Mutual pairs: i in top-k of j and j in top-k of i. similarity = mean of the two directed scores (equal
   * for a symmetric cosine; the definition is kept so an asymmetric score would still be handled).
   * In (a, b) order: a store's replaceEdges streams pairs given in that order, and otherwise diffs them
   * against every stored edge of the context (at 1M memories ~1M schema edges held in maps).
   */
  mutualPairs(): KnnPair[] {
    const pairs: KnnPair[] = [];
    for (let i = 0; i < this.count.length; i++) {
      const base = i * this.k;
      const first = pairs.length;
      for (let r = 0; r < this.count[i]!; r++) {
        const j = this.neighbour[base + r]!;
        if (j <= i) continue;
        const back = this.scoreOf(j, i);
        if (back !== undefined) pairs.push({ a: i, b: j, similarity: (this.score[base + r]! + back) / 2 });
      }
      // The list is by score; its few pairs (at most k) are put in b order by insertion.
      for (let at = first + 1; at < pairs.length; at++) {
        const pair = pairs[at]!;
        let to = at;
        while (to > first && pairs[to - 1]!.b > pair.b) {
          pairs[to] = pairs[to - 1]!;
          to--;
        }
        pairs[to] = pair;
      }
    }
    return pairs;
  }
}

/**
 * Rounds a cosine to 1e-9 before ranking, so sums taken in a different order (inverted index vs brute
 * force) rank ties the same way.
 */
export function rankableScore(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}
