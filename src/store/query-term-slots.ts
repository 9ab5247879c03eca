/**
 * Term id -> position in the current query, as a table indexed by term id: scoring a candidate looks up every
 * (term, tf) pair of its forward list, and a Map lookup per pair was most of scoreCandidates. One table for
 * the process (searches are synchronous), grown to the largest id set and cleared through the ids it set, so
 * a search pays for its query terms, not for the dictionary size.
 */
export class QueryTermSlots {
  private static instance: QueryTermSlots | undefined;
  /** term id -> position + 1 (0: not a query term). */
  private slots = new Int32Array(1 << 12);
  private readonly set: number[] = [];

  /**
   * The process-wide table holding `terms` (term ids in query order); a repeated id keeps its last position,
   * as `new Map(terms.map((t, i) => [t, i]))` does.
   */
  static of(terms: readonly number[]): QueryTermSlots {
    QueryTermSlots.instance ??= new QueryTermSlots();
    const table = QueryTermSlots.instance;
    table.clear();
    for (let i = 0; i < terms.length; i++) table.put(terms[i]!, i);
    return table;
  }

  /** The query position of `term`, or -1. */
  positionOf(term: number): number {
    return term < this.slots.length ? this.slots[term]! - 1 : -1;
  }

  private put(term: number, position: number): void {
    if (term >= this.slots.length) {
      let length = this.slots.length;
      while (length <= term) length *= 2;
      const slots = new Int32Array(length);
      slots.set(this.slots);
      this.slots = slots;
    }
    this.slots[term] = position + 1;
    this.set.push(term);
  }

  private clear(): void {
    for (const term of this.set) this.slots[term] = 0;
    this.set.length = 0;
  }
}
