import { GraphmemixError } from '../errors/graphmemix-error.ts';
import { lowerBound } from './lower-bound.ts';
import {
  listThreshold,
  type SemanticDoc,
  type SemanticDocChange,
  type SemanticIndexStore,
  type SemanticNeighbour,
  type SemanticPosting,
  type SemanticPostingFilter,
  type SemanticSnapshot,
  type SemanticSnapshotInput,
  type SemanticTermBound,
  type SemanticVector,
  type StagedSemanticReplace,
  stagingSpent,
  stagingWithOtherK,
} from './semantic-index-spec.ts';
import { compareStrings } from './store-rules.ts';

interface StoredDoc {
  terms: string[];
  weights: number[];
  neighbours: SemanticNeighbour[];
  threshold: number;
  /** Its posting entries, so a list change updates their ratio in place. */
  entries: StoredPosting[];
}

/** A posting with its document's ratio (weight / threshold; Infinity while the list is open). */
interface StoredPosting {
  memoryId: string;
  weight: number;
  ratio: number;
}

interface ContextIndex {
  snapshot: SemanticSnapshot;
  df: Map<string, number>;
  docs: Map<string, StoredDoc>;
  /** term -> postings sorted by weight desc, then memory id asc (prefix reads for `top` / `minWeight`). */
  postings: Map<string, StoredPosting[]>;
  /** neighbour id -> owners of the lists naming it. */
  referrers: Map<string, Set<string>>;
}

/**
 * The in-memory semantic index: plain maps and sorted posting arrays; each posting carries its document's
 * ratio, updated in place when the list changes. `minRatio` and `maxRatio` scan a whole posting list
 * (thresholds change too often to keep a second order): fine for an in-memory backend. `hasMemory` ties it to its store's records.
 */
export class MemorySemanticIndex implements SemanticIndexStore {
  private readonly contexts = new Map<string, ContextIndex>();

  constructor(private readonly hasMemory: (contextId: string, id: string) => boolean = () => true) {}

  /** Drops everything of a context (the store forgets it). */
  dropContext(contextId: string): void {
    this.contexts.delete(contextId);
  }

  async getSnapshot(contextId: string): Promise<SemanticSnapshot | undefined> {
    const snapshot = this.contexts.get(contextId)?.snapshot;
    return snapshot ? { ...snapshot } : undefined;
  }

  async documentFrequencies(contextId: string, terms: readonly string[]): Promise<Map<string, number>> {
    const df = this.contexts.get(contextId)?.df;
    const out = new Map<string, number>();
    for (const term of terms) {
      const value = df?.get(term);
      if (value !== undefined) out.set(term, value);
    }
    return out;
  }

  async replaceAll(
    contextId: string,
    snapshot: SemanticSnapshotInput,
    given: Iterable<SemanticDoc>,
  ): Promise<void> {
    // Iterated twice (every id checked before anything changes): the port promises a single pass.
    const docs = [...given];
    for (const doc of docs) this.assertMemory(contextId, doc.memoryId);
    const index: ContextIndex = {
      snapshot: {
        space: snapshot.space,
        documents: snapshot.documents,
        k: snapshot.k,
        createdAt: snapshot.createdAt,
        changes: 0,
      },
      df: new Map(snapshot.df),
      docs: new Map(),
      postings: new Map(),
      referrers: new Map(),
    };
    for (const doc of docs) this.insertDoc(index, doc, false);
    for (const list of index.postings.values()) list.sort(comparePostings);
    this.contexts.set(contextId, index);
  }

  stagedReplace(contextId: string, k: number): StagedSemanticReplace {
    // Staged documents are held here until commit: this backend holds everything in memory anyway.
    let staged: SemanticDoc[] | undefined = [];
    const open = (): SemanticDoc[] => {
      if (!staged) throw stagingSpent(contextId);
      return staged;
    };
    return {
      stage: async (docs) => {
        const into = open();
        for (const doc of docs) into.push(doc);
      },
      commit: async (snapshot) => {
        // Spent whether the commit succeeds or not, as on SQLite.
        const docs = open();
        staged = undefined;
        if (snapshot.k !== k) throw stagingWithOtherK(contextId, k, snapshot.k);
        await this.replaceAll(contextId, snapshot, docs);
      },
      abort: async () => {
        staged = undefined;
      },
    };
  }

  async replaceSnapshot(contextId: string, snapshot: SemanticSnapshotInput): Promise<void> {
    const fresh = {
      space: snapshot.space,
      documents: snapshot.documents,
      k: snapshot.k,
      createdAt: snapshot.createdAt,
      changes: 0,
    };
    const index = this.contexts.get(contextId);
    if (index) {
      index.snapshot = fresh;
      index.df = new Map(snapshot.df);
      return;
    }
    this.contexts.set(contextId, {
      snapshot: fresh,
      df: new Map(snapshot.df),
      docs: new Map(),
      postings: new Map(),
      referrers: new Map(),
    });
  }

  async getDocs(contextId: string, ids: readonly string[]): Promise<SemanticDoc[]> {
    const docs = this.contexts.get(contextId)?.docs;
    if (!docs) return [];
    return ids.flatMap((memoryId) => {
      const doc = docs.get(memoryId);
      return doc
        ? [
            {
              memoryId,
              terms: [...doc.terms],
              weights: [...doc.weights],
              neighbours: doc.neighbours.map((n) => ({ ...n })),
            },
          ]
        : [];
    });
  }

  async getVectors(contextId: string, ids: readonly string[]): Promise<SemanticVector[]> {
    const docs = this.contexts.get(contextId)?.docs;
    if (!docs) return [];
    return ids.flatMap((memoryId) => {
      const doc = docs.get(memoryId);
      return doc
        ? [{ memoryId, terms: [...doc.terms], weights: [...doc.weights], threshold: doc.threshold }]
        : [];
    });
  }

  async writeDocs(contextId: string, change: SemanticDocChange): Promise<void> {
    const index = this.contexts.get(contextId);
    if (!index) throw noSnapshot(contextId);
    for (const doc of change.put ?? []) this.assertMemory(contextId, doc.memoryId);
    for (const list of change.lists ?? []) {
      if (!index.docs.has(list.memoryId) && !(change.put ?? []).some((d) => d.memoryId === list.memoryId)) {
        throw new GraphmemixError('INVALID_INPUT', `no semantic document for "${list.memoryId}"`);
      }
    }
    for (const id of change.remove ?? []) this.dropDoc(index, id);
    for (const doc of change.put ?? []) {
      this.dropDoc(index, doc.memoryId);
      this.insertDoc(index, doc, true);
    }
    for (const list of change.lists ?? []) {
      const doc = index.docs.get(list.memoryId)!;
      this.unlinkList(index, list.memoryId, doc.neighbours);
      doc.neighbours = list.neighbours.map((n) => ({ ...n }));
      doc.threshold = listThreshold(doc.neighbours, index.snapshot.k);
      for (const entry of doc.entries) entry.ratio = ratioOf(entry.weight, doc.threshold);
      this.linkList(index, list.memoryId, doc.neighbours);
    }
    index.snapshot.changes += (change.put?.length ?? 0) + (change.remove?.length ?? 0);
  }

  async termBounds(
    contextId: string,
    terms: readonly string[],
    options: { ratio?: boolean } = {},
  ): Promise<Map<string, SemanticTermBound>> {
    const index = this.contexts.get(contextId);
    const out = new Map<string, SemanticTermBound>();
    if (!index) return out;
    for (const term of terms) {
      const list = index.postings.get(term);
      if (!list || list.length === 0) continue;
      // maxRatio scans the whole list: only the exact reverse search asks for it (Infinity bounds any ratio).
      let maxRatio = options.ratio ? 0 : Number.POSITIVE_INFINITY;
      if (options.ratio) for (const posting of list) if (posting.ratio > maxRatio) maxRatio = posting.ratio;
      out.set(term, { maxWeight: list[0]!.weight, maxRatio });
    }
    return out;
  }

  async postings(contextId: string, term: string, filter: SemanticPostingFilter): Promise<SemanticPosting[]> {
    const index = this.contexts.get(contextId);
    const list = index?.postings.get(term);
    if (!index || !list) return [];
    const plain = (p: StoredPosting): SemanticPosting => ({ memoryId: p.memoryId, weight: p.weight });
    if ('top' in filter) return list.slice(0, Math.max(0, filter.top)).map(plain);
    const below = filter.below ?? Number.POSITIVE_INFINITY;
    if ('minWeight' in filter) {
      let from = 0;
      while (from < list.length && list[from]!.weight >= below) from++;
      let end = from;
      while (end < list.length && list[end]!.weight >= filter.minWeight) end++;
      return list.slice(from, end).map(plain);
    }
    const out: SemanticPosting[] = [];
    for (const posting of list) {
      const value = posting.ratio;
      if (value >= filter.minRatio && (filter.below === undefined || value < below)) out.push({ ...posting });
    }
    return out;
  }

  async referrers(contextId: string, ids: readonly string[]): Promise<string[]> {
    const referrers = this.contexts.get(contextId)?.referrers;
    const out = new Set<string>();
    for (const id of ids) for (const owner of referrers?.get(id) ?? []) out.add(owner);
    return [...out].sort(compareStrings);
  }

  async thresholds(contextId: string): Promise<Map<string, number>> {
    const docs = this.contexts.get(contextId)?.docs;
    return new Map([...(docs ?? [])].map(([id, doc]) => [id, doc.threshold]));
  }

  /** The memory store calls this when a memory is deleted (its own document and unique words go with it). */
  dropMemory(contextId: string, id: string): void {
    this.dropUniqueTerms(contextId, id);
    const index = this.contexts.get(contextId);
    if (index) this.dropDoc(index, id);
  }

  /**
   * Drops the snapshot's df-1 entries of the memory's document terms (before it is replaced or deleted), as
   * the SQL backends do: a word only it held leaves with it, and df 1 is what the snapshot assumes for a word
   * it never saw.
   */
  dropUniqueTerms(contextId: string, id: string): void {
    const index = this.contexts.get(contextId);
    const doc = index?.docs.get(id);
    if (!index || !doc) return;
    for (const term of doc.terms) if ((index.df.get(term) ?? 0) <= 1) index.df.delete(term);
  }

  private insertDoc(index: ContextIndex, doc: SemanticDoc, keepSorted: boolean): void {
    const neighbours = doc.neighbours.map((n) => ({ ...n }));
    const threshold = listThreshold(neighbours, index.snapshot.k);
    const entries: StoredPosting[] = [];
    index.docs.set(doc.memoryId, {
      terms: [...doc.terms],
      weights: [...doc.weights],
      neighbours,
      threshold,
      entries,
    });
    doc.terms.forEach((term, at) => {
      let list = index.postings.get(term);
      if (!list) {
        list = [];
        index.postings.set(term, list);
      }
      const weight = doc.weights[at]!;
      const posting = { memoryId: doc.memoryId, weight, ratio: ratioOf(weight, threshold) };
      entries.push(posting);
      if (keepSorted) list.splice(lowerBound(list, posting, comparePostings), 0, posting);
      else list.push(posting);
    });
    this.linkList(index, doc.memoryId, neighbours);
  }

  private dropDoc(index: ContextIndex, id: string): void {
    const doc = index.docs.get(id);
    if (!doc) return;
    doc.terms.forEach((term, at) => {
      const list = index.postings.get(term)!;
      const position = lowerBound(
        list,
        { memoryId: id, weight: doc.weights[at]!, ratio: 0 },
        comparePostings,
      );
      if (list[position]?.memoryId === id) list.splice(position, 1);
      if (list.length === 0) index.postings.delete(term);
    });
    this.unlinkList(index, id, doc.neighbours);
    index.docs.delete(id);
  }

  private linkList(index: ContextIndex, owner: string, neighbours: readonly SemanticNeighbour[]): void {
    for (const { memoryId } of neighbours) {
      let owners = index.referrers.get(memoryId);
      if (!owners) {
        owners = new Set();
        index.referrers.set(memoryId, owners);
      }
      owners.add(owner);
    }
  }

  private unlinkList(index: ContextIndex, owner: string, neighbours: readonly SemanticNeighbour[]): void {
    for (const { memoryId } of neighbours) {
      const owners = index.referrers.get(memoryId);
      owners?.delete(owner);
      if (owners?.size === 0) index.referrers.delete(memoryId);
    }
  }

  private assertMemory(contextId: string, id: string): void {
    if (!this.hasMemory(contextId, id)) {
      throw new GraphmemixError(
        'INVALID_INPUT',
        `semantic document of unknown memory "${id}" in "${contextId}"`,
      );
    }
  }
}

function ratioOf(weight: number, threshold: number): number {
  return threshold > 0 ? weight / threshold : Number.POSITIVE_INFINITY;
}

function comparePostings(x: StoredPosting, y: StoredPosting): number {
  return y.weight - x.weight || compareStrings(x.memoryId, y.memoryId);
}

export function noSnapshot(contextId: string): GraphmemixError {
  return new GraphmemixError('STORE', `context "${contextId}" has no semantic snapshot; compact it first`);
}
