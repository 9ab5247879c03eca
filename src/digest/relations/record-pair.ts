/** An unordered pair of memory ids, stored ordered (a < b in string order) so each pair exists once. */
export type RecordPair = readonly [a: string, b: string];

export function orderedPair(x: string, y: string): RecordPair {
  return x < y ? [x, y] : [y, x];
}

/** The (sequence, id) order of records: ingestion order, ties by id (sources may reuse sequences). */
export function compareBySequence(
  x: { sequence: number; id: string },
  y: { sequence: number; id: string },
): number {
  return x.sequence - y.sequence || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
}

/** Collects pairs without duplicates or self-pairs, in first-seen order. */
export class PairSet {
  // Partners by the pair's smaller id: the one partner's id while there is one, a Set from the second on. No
  // key string per pair (~60 bytes a pair less: consecutive_turn makes ~1M pairs in a 1M-memory rebuild).
  private readonly partners = new Map<string, string | Set<string>>();
  readonly pairs: RecordPair[] = [];

  add(x: string, y: string): void {
    if (x === y) return;
    const pair = orderedPair(x, y);
    const [a, b] = pair;
    const known = this.partners.get(a);
    if (known === undefined) this.partners.set(a, b);
    else if (typeof known === 'string') {
      if (known === b) return;
      this.partners.set(a, new Set([known, b]));
    } else {
      if (known.has(b)) return;
      known.add(b);
    }
    this.pairs.push(pair);
  }

  has(x: string, y: string): boolean {
    const [a, b] = orderedPair(x, y);
    const known = this.partners.get(a);
    return known === b || (typeof known === 'object' && known.has(b));
  }
}
