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
  private readonly keys = new Set<string>();
  readonly pairs: RecordPair[] = [];

  add(x: string, y: string): void {
    if (x === y) return;
    const pair = orderedPair(x, y);
    const key = `${pair[0]}\u0000${pair[1]}`;
    if (this.keys.has(key)) return;
    this.keys.add(key);
    this.pairs.push(pair);
  }

  has(x: string, y: string): boolean {
    const pair = orderedPair(x, y);
    return this.keys.has(`${pair[0]}\u0000${pair[1]}`);
  }
}
