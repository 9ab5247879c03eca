/**
 * Disjoint sets over the integers 0..size-1 with path halving and union by size.
 * `reset()` is O(1): entries are lazily re-initialised through a generation stamp, which matters because the
 * proposal search runs one small Kruskal per evaluated swap.
 * Plain arrays of small integers, not typed arrays: a question builds ~10 of these over ~48 elements (solver,
 * offline verifiers), and a typed array past 64 bytes is allocated off the V8 heap, several times the cost
 * of these arrays' whole use.
 */
export class UnionFind {
  private readonly parent: number[];
  private readonly size: number[];
  private readonly stamp: number[];
  private generation = 1;

  constructor(size: number) {
    this.parent = new Array<number>(size).fill(0);
    this.size = new Array<number>(size).fill(0);
    this.stamp = new Array<number>(size).fill(0);
  }

  /** Makes every element a singleton again. */
  reset(): void {
    this.generation += 1;
  }

  find(x: number): number {
    if (this.stamp[x] !== this.generation) {
      this.stamp[x] = this.generation;
      this.parent[x] = x;
      this.size[x] = 1;
      return x;
    }
    let node = x;
    let up = this.parent[node]!;
    while (up !== node) {
      const grand = this.parent[up]!;
      this.parent[node] = grand;
      node = up;
      up = grand;
    }
    return node;
  }

  /** Joins the sets of a and b; false when they were already joined (the edge would close a cycle). */
  union(a: number, b: number): boolean {
    let ra = this.find(a);
    let rb = this.find(b);
    if (ra === rb) return false;
    if (this.size[ra]! < this.size[rb]!) {
      const smaller = ra;
      ra = rb;
      rb = smaller;
    }
    this.parent[rb] = ra;
    this.size[ra] = this.size[ra]! + this.size[rb]!;
    return true;
  }
}
