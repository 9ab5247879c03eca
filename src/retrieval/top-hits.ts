import type { ViewHit } from '../types/view.ts';

/**
 * The one order of lexical hits: score descending, then memory id, view kind and view key ascending, so
 * results are deterministic and every backend breaks ties the same way.
 */
export function compareHits(x: ViewHit, y: ViewHit): number {
  return (
    y.rawScore - x.rawScore ||
    compareStrings(x.memoryId, y.memoryId) ||
    compareStrings(x.kind, y.kind) ||
    compareStrings(x.key, y.key)
  );
}

function compareStrings(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The best `limit` hits under compareHits, kept in a binary heap whose root is the worst kept hit: selecting
 * k of n costs O(n log k) instead of sorting all n (the sort was most of a query at 1M views).
 */
export class TopHits {
  private readonly heap: ViewHit[] = [];

  constructor(readonly limit: number) {}

  get size(): number {
    return this.heap.length;
  }

  get full(): boolean {
    return this.heap.length >= this.limit;
  }

  /** The worst kept hit (the admission threshold once full). */
  get worst(): ViewHit | undefined {
    return this.heap[0];
  }

  /** Offers a hit; returns whether it was kept. */
  offer(hit: ViewHit): boolean {
    if (this.limit <= 0) return false;
    const heap = this.heap;
    if (heap.length < this.limit) {
      heap.push(hit);
      this.up(heap.length - 1);
      return true;
    }
    // Worse than or equal to the worst kept: rejected (compareHits > 0 means `hit` ranks after heap[0]).
    if (compareHits(hit, heap[0]!) >= 0) return false;
    heap[0] = hit;
    this.down(0);
    return true;
  }

  /** The kept hits, best first. */
  sorted(): ViewHit[] {
    return [...this.heap].sort(compareHits);
  }

  // Heap order: a parent ranks after (is worse than) its children.
  private up(index: number): void {
    const heap = this.heap;
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (compareHits(heap[i]!, heap[parent]!) <= 0) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private down(index: number): void {
    const heap = this.heap;
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let worst = i;
      if (left < heap.length && compareHits(heap[left]!, heap[worst]!) > 0) worst = left;
      if (right < heap.length && compareHits(heap[right]!, heap[worst]!) > 0) worst = right;
      if (worst === i) return;
      [heap[i], heap[worst]] = [heap[worst]!, heap[i]!];
      i = worst;
    }
  }
}
