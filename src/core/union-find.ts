/**
 * Disjoint sets over the integers 0..size-1 with path halving and union by size.
 * `reset()` is O(1): entries are lazily re-initialised through a generation stamp, which matters because the
 * proposal search runs one small Kruskal per evaluated swap.
 */
export class UnionFind {
  private readonly parent: Int32Array;
  private readonly size: Int32Array;
  private readonly stamp: Uint32Array;
  private generation = 1;

  constructor(size: number) {
    this.parent = new Int32Array(size);
    this.size = new Int32Array(size);
    this.stamp = new Uint32Array(size);
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
    if (this.size[ra]! < this.size[rb]!) [ra, rb] = [rb, ra];
    this.parent[rb] = ra;
    this.size[ra] = this.size[ra]! + this.size[rb]!;
    return true;
  }
}
