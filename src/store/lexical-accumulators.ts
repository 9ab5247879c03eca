/**
 * Per-document bounds of one lexical search (search-lexical-index.ts): lower and upper bound sums and the
 * lists a document was read from, in growable typed arrays addressed through a slot table indexed by
 * document id. A Map of objects cost most of a search at 1M views (hashing, allocation, GC); the slot table
 * is shared by all searches of the process (they are synchronous) and cleared through the ids it touched,
 * so a search pays for the documents it reads, not for the index size.
 */
export class LexicalAccumulators {
  private static instance: LexicalAccumulators | undefined;
  /** doc id -> 0 (unseen), -1 (dead: cannot rank), or index + 1. */
  private slots = new Int32Array(1 << 16);
  private readonly deadDocs: number[] = [];
  docs = new Int32Array(1024);
  low = new Float64Array(1024);
  high = new Float64Array(1024);
  mask = new Int32Array(1024);
  size = 0;

  /** The process-wide instance, emptied. */
  static fresh(): LexicalAccumulators {
    LexicalAccumulators.instance ??= new LexicalAccumulators();
    LexicalAccumulators.instance.clear();
    return LexicalAccumulators.instance;
  }

  /** 0 unseen, -1 dead, else index + 1. */
  slot(doc: number): number {
    return doc < this.slots.length ? this.slots[doc]! : 0;
  }

  add(doc: number, low: number, high: number, mask: number): void {
    this.reserve(doc);
    if (this.size === this.docs.length) this.grow();
    const at = this.size++;
    this.docs[at] = doc;
    this.low[at] = low;
    this.high[at] = high;
    this.mask[at] = mask;
    this.slots[doc] = at + 1;
  }

  kill(doc: number): void {
    this.reserve(doc);
    this.slots[doc] = -1;
    this.deadDocs.push(doc);
  }

  private clear(): void {
    for (let i = 0; i < this.size; i++) this.slots[this.docs[i]!] = 0;
    for (const doc of this.deadDocs) this.slots[doc] = 0;
    this.deadDocs.length = 0;
    this.size = 0;
  }

  private reserve(doc: number): void {
    if (doc < this.slots.length) return;
    let length = this.slots.length;
    while (length <= doc) length *= 2;
    const slots = new Int32Array(length);
    slots.set(this.slots);
    this.slots = slots;
  }

  private grow(): void {
    const length = this.docs.length * 2;
    const docs = new Int32Array(length);
    docs.set(this.docs);
    this.docs = docs;
    const low = new Float64Array(length);
    low.set(this.low);
    this.low = low;
    const high = new Float64Array(length);
    high.set(this.high);
    this.high = high;
    const mask = new Int32Array(length);
    mask.set(this.mask);
    this.mask = mask;
  }
}

/**
 * The candidates of one field's exact scoring (search-lexical-index.ts): document ids with their score
 * ceilings, taken best ceiling first from a binary max-heap (built in linear time; a search stops taking long
 * before the last, so a full sort would order what is never read). Process-wide and reused like
 * LexicalAccumulators (searches are synchronous), so a search allocates no per-candidate object.
 */
export class CandidateOrder {
  private static instance: CandidateOrder | undefined;
  private docs = new Int32Array(1024);
  private high = new Float64Array(1024);
  /** Candidates not taken yet. */
  size = 0;

  static fresh(): CandidateOrder {
    CandidateOrder.instance ??= new CandidateOrder();
    CandidateOrder.instance.size = 0;
    return CandidateOrder.instance;
  }

  add(doc: number, high: number): void {
    if (this.size === this.docs.length) this.grow();
    this.docs[this.size] = doc;
    this.high[this.size++] = high;
  }

  /** Orders the candidates added so far for `take` (call once, after the last `add`). */
  heapify(): void {
    for (let at = (this.size >> 1) - 1; at >= 0; at--) this.siftDown(at);
  }

  /** The highest ceiling not taken yet (size > 0). */
  get topHigh(): number {
    return this.high[0]!;
  }

  /**
   * Takes the candidate with the highest ceiling and returns its id; equal ceilings lowest id (the earliest
   * written view) first, so a search that stops taking at a work bound takes the same ones every time.
   */
  take(): number {
    const doc = this.docs[0]!;
    const last = --this.size;
    this.docs[0] = this.docs[last]!;
    this.high[0] = this.high[last]!;
    this.siftDown(0);
    return doc;
  }

  private siftDown(from: number): void {
    const { docs, high, size } = this;
    const doc = docs[from]!;
    const value = high[from]!;
    let at = from;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= size) break;
      const right = child + 1;
      if (
        right < size &&
        (high[right]! > high[child]! || (high[right] === high[child] && docs[right]! < docs[child]!))
      )
        child++;
      if (high[child]! < value || (high[child] === value && docs[child]! > doc)) break;
      docs[at] = docs[child]!;
      high[at] = high[child]!;
      at = child;
    }
    docs[at] = doc;
    high[at] = value;
  }

  private grow(): void {
    const length = this.docs.length * 2;
    const docs = new Int32Array(length);
    docs.set(this.docs);
    this.docs = docs;
    const high = new Float64Array(length);
    high.set(this.high);
    this.high = high;
  }
}
