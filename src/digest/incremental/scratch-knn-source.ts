import type {
  SemanticPosting,
  SemanticPostingFilter,
  SemanticTermBound,
} from '../../store/semantic-index-spec.ts';
import { compareStrings } from '../../store/store-rules.ts';
import type { TfidfSpace } from '../semantic/tfidf-space.ts';
import type { KnnSource } from './exact-top-k-search.ts';
import type { SparseDoc } from './frozen-tfidf.ts';

/**
 * A read-only KnnSource over a whole TfidfSpace in memory, for compaction: per term a posting list sorted by
 * weight desc then document index (the space is built in id order, so index order is id order). Only the
 * forward search runs here, so ratios are not kept (maxRatio reads Infinity).
 */
export class ScratchKnnSource implements KnnSource {
  /** Document frequency per term string (the snapshot's df). */
  readonly df: Map<string, number>;
  private readonly docs: SparseDoc[];
  private readonly indexOf: Map<string, number>;
  private readonly termId: Map<string, number>;
  private readonly start: Uint32Array;
  private readonly postDoc: Uint32Array;
  private readonly postWeight: Float32Array;

  constructor(private readonly space: TfidfSpace) {
    const names: string[] = new Array(space.df.length);
    for (const [term, id] of space.vocabulary) names[id] = term;
    this.termId = new Map(space.vocabulary);
    this.df = new Map(names.map((term, id) => [term, space.df[id]!]));
    this.indexOf = new Map(space.ids.map((id, at) => [id, at]));
    this.docs = space.ids.map((memoryId, d) => {
      const entries: Array<[string, number]> = [];
      for (let e = space.docStart[d]!; e < space.docStart[d + 1]!; e++) {
        entries.push([names[space.docTerm[e]!]!, space.docWeight[e]!]);
      }
      entries.sort((x, y) => compareStrings(x[0], y[0]));
      return { memoryId, terms: entries.map((e) => e[0]), weights: entries.map((e) => e[1]) };
    });
    const postings = space.invertedIndex();
    this.start = postings.start;
    this.postDoc = Uint32Array.from(postings.doc);
    this.postWeight = Float32Array.from(postings.weight);
    for (let t = 0; t < space.df.length; t++) {
      const from = this.start[t]!;
      const to = this.start[t + 1]!;
      const order = Array.from({ length: to - from }, (_, i) => from + i).sort(
        (x, y) => postings.weight[y]! - postings.weight[x]! || postings.doc[x]! - postings.doc[y]!,
      );
      order.forEach((slot, i) => {
        this.postDoc[from + i] = postings.doc[slot]!;
        this.postWeight[from + i] = postings.weight[slot]!;
      });
    }
  }

  doc(index: number): SparseDoc {
    return this.docs[index]!;
  }

  async termBounds(terms: readonly string[]): Promise<Map<string, SemanticTermBound>> {
    const out = new Map<string, SemanticTermBound>();
    for (const term of terms) {
      const t = this.termId.get(term);
      if (t === undefined || this.start[t] === this.start[t + 1]) continue;
      out.set(term, { maxWeight: this.postWeight[this.start[t]!]!, maxRatio: Number.POSITIVE_INFINITY });
    }
    return out;
  }

  async postings(term: string, filter: SemanticPostingFilter): Promise<SemanticPosting[]> {
    const t = this.termId.get(term);
    if (t === undefined) return [];
    const from = this.start[t]!;
    let to = this.start[t + 1]!;
    if ('top' in filter) to = Math.min(to, from + Math.max(0, filter.top));
    else if ('minWeight' in filter) {
      let low = from;
      let high = to;
      while (low < high) {
        const mid = (low + high) >> 1;
        if (this.postWeight[mid]! >= filter.minWeight) low = mid + 1;
        else high = mid;
      }
      to = low;
    }
    const out: SemanticPosting[] = [];
    for (let p = from; p < to; p++) {
      out.push({ memoryId: this.space.ids[this.postDoc[p]!]!, weight: this.postWeight[p]! });
    }
    return out;
  }

  async vectors(ids: readonly string[]): Promise<Map<string, SparseDoc>> {
    const out = new Map<string, SparseDoc>();
    for (const id of ids) {
      const at = this.indexOf.get(id);
      if (at !== undefined) out.set(id, this.docs[at]!);
    }
    return out;
  }
}
