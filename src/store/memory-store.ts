import { GraphmemixError } from '../errors/graphmemix-error.ts';
import { Bm25Index } from '../retrieval/bm25-index.ts';
import { TOKENIZER_VERSION } from '../retrieval/tokenize.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { EvalQuestion } from '../types/question.ts';
import type { MemoryEdge, RelationType } from '../types/relation.ts';
import type { MemoryView, ViewHit } from '../types/view.ts';
import type {
  ArchiveStore,
  ContextInfo,
  ContextStats,
  EdgeChange,
  FilteredPage,
  FilterPageOptions,
  ForgetOptions,
  KeyedRecord,
  LexicalSearchOptions,
  MemoryFilter,
  MemoryVersion,
  MemoryWrite,
  PendingMediaRef,
  RelationWork,
  VectorRow,
  VectorSearchOptions,
  VersionWindow,
  WriteOutcome,
} from './archive-store-spec.ts';
import { pairKey } from './edge-merge.ts';
import { MemoryKeyIndex } from './memory-key-index.ts';
import { MemorySemanticIndex } from './memory-semantic-index.ts';
import { type ContextData, contextInfo } from './memory-store-context-data.ts';
import { memoryStoreIntegrityCheck } from './memory-store-integrity-check.ts';
import { MemoryStoreKeyLookups } from './memory-store-key-lookups.ts';
import { MemoryStoreReads } from './memory-store-reads.ts';
import { MemoryStoreRelations } from './memory-store-relations.ts';
import { MemoryStoreVectors } from './memory-store-vectors.ts';
import { assertWrite, compareStrings, TOKENIZER_VERSION_META } from './store-rules.ts';

/**
 * The in-memory backend: plain maps, nothing persisted. For tests, the demo and short-lived embeddings.
 * Everything crossing the boundary is cloned, so callers can never mutate stored state by accident.
 * The BM25 index is built lazily on the first search of a context, then maintained per write (add/remove of
 * the written memory's views); vector indexes are built lazily and dropped on any write to their context.
 */
export function createMemoryStore(): ArchiveStore {
  return new MemoryStore();
}

class MemoryStore implements ArchiveStore {
  readonly specificationVersion = 'v1' as const;
  readonly backend = 'memory';
  readonly vectorSupport = 'in-process';
  private readonly contexts = new Map<string, ContextData>();
  /** The context ids in listContexts order. */
  private readonly contextOrder: string[] = [];
  private readonly questions = new Map<string, EvalQuestion>();
  /** Its terms are always this tokenizer's (nothing outlives the process): recorded like a migrated store's. */
  private readonly meta = new Map<string, string>([[TOKENIZER_VERSION_META, String(TOKENIZER_VERSION)]]);
  private closed = false;
  /** Journal sequence, shared by all contexts (like SQLite's AUTOINCREMENT). */
  private nextSeq = 1;
  readonly semantic = new MemorySemanticIndex(
    (contextId, id) => this.contexts.get(contextId)?.memories.has(id) ?? false,
  );
  private readonly relations = new MemoryStoreRelations(
    this.contexts,
    () => this.assertOpen(),
    (contextId, create) => this.context(contextId, create),
  );
  private readonly vectors = new MemoryStoreVectors(
    this.contexts,
    () => this.assertOpen(),
    (contextId, create) => this.context(contextId, create),
  );
  private readonly keyLookups = new MemoryStoreKeyLookups(this.contexts, () => this.assertOpen());
  private readonly reads = new MemoryStoreReads(this.contexts, () => this.assertOpen());

  async listContexts(options: { afterId?: string; limit?: number } = {}): Promise<ContextInfo[]> {
    this.assertOpen();
    // contextOrder is kept sorted: a page is a binary search and a slice, whatever the number of contexts.
    const start = options.afterId === undefined ? 0 : this.contextSlot(options.afterId, true);
    const end = options.limit === undefined ? undefined : start + options.limit;
    return this.contextOrder.slice(start, end).map((id) => contextInfo(id, this.contexts.get(id)!));
  }

  /** Index in contextOrder of the first id >= `id` (> `id` when `after`). */
  private contextSlot(id: string, after = false): number {
    let low = 0;
    let high = this.contextOrder.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const order = compareStrings(this.contextOrder[mid]!, id);
      if (order < 0 || (after && order === 0)) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  async writeMemories(contextId: string, writes: MemoryWrite[]): Promise<WriteOutcome> {
    this.assertOpen();
    for (const write of writes) assertWrite(contextId, write);
    const data = this.context(contextId, true);
    const outcome: WriteOutcome = { inserted: [], updated: [], unchanged: [] };
    for (const write of writes) {
      const id = write.record.id;
      const previous = data.memories.get(id);
      if (previous && previous.contentHash === write.contentHash) {
        if (write.keys) data.keys.set(id, write.keys);
        outcome.unchanged.push(id);
        continue;
      }
      data.keys.set(id, write.keys ?? []);
      if (previous) {
        for (const rows of data.vectors.values()) {
          for (const [key, row] of rows) if (row.memoryId === id) rows.delete(key);
        }
        this.semantic.dropUniqueTerms(contextId, id);
      }
      (previous ? outcome.updated : outcome.inserted).push(id);
      if (previous) {
        const history = data.versions.get(id) ?? [];
        history.push(previous.record);
        data.versions.set(id, history);
      }
      data.journal.push(journalEntry(this.nextSeq++, id, previous?.record));
      const stored = structuredClone({
        record: write.record,
        views: write.views,
        contentHash: write.contentHash,
      });
      data.memories.set(id, stored);
      updateLexical(data, id, stored.views);
    }
    if (outcome.inserted.length + outcome.updated.length > 0) {
      data.lastWrite = new Date().toISOString();
      invalidate(data);
    }
    return outcome;
  }

  getMemory(contextId: string, id: string): Promise<MemoryRecord | undefined> {
    return this.reads.getMemory(contextId, id);
  }

  getMemories(contextId: string, ids: readonly string[]): Promise<MemoryRecord[]> {
    return this.reads.getMemories(contextId, ids);
  }

  listMemories(
    contextId: string,
    options?: { afterSequence?: number; afterId?: string; limit?: number },
  ): Promise<MemoryRecord[]> {
    return this.reads.listMemories(contextId, options);
  }

  contextStats(contextId: string): Promise<ContextStats | undefined> {
    return this.reads.contextStats(contextId);
  }

  matchMemories(
    contextId: string,
    filter: MemoryFilter,
    options: { ids: readonly string[] },
  ): Promise<string[]> {
    return this.reads.matchMemories(contextId, filter, options);
  }

  listFiltered(
    contextId: string,
    filter: MemoryFilter,
    page?: FilterPageOptions,
  ): Promise<FilteredPage<MemoryRecord>> {
    return this.reads.listFiltered(contextId, filter, page);
  }

  matchFiltered(
    contextId: string,
    filter: MemoryFilter,
    page?: FilterPageOptions,
  ): Promise<FilteredPage<string>> {
    return this.reads.matchFiltered(contextId, filter, page);
  }

  memoryVersions(contextId: string, id: string, window?: VersionWindow): Promise<MemoryVersion[]> {
    return this.reads.memoryVersions(contextId, id, window);
  }

  maxSequence(contextId: string): Promise<number | undefined> {
    return this.reads.maxSequence(contextId);
  }

  countMemories(contextId: string): Promise<number> {
    return this.reads.countMemories(contextId);
  }

  getContentHashes(contextId: string, ids: readonly string[]): Promise<Map<string, string>> {
    return this.reads.getContentHashes(contextId, ids);
  }

  async deleteMemory(contextId: string, id: string): Promise<boolean> {
    this.assertOpen();
    const data = this.contexts.get(contextId);
    const removed = data?.memories.get(id);
    if (!data || !removed) return false;
    data.memories.delete(id);
    data.versions.delete(id);
    data.keys.remove(id);
    data.journal.push(journalEntry(this.nextSeq++, id, removed.record));
    for (const key of data.edgesByMemory.get(id) ?? []) {
      const edge = data.edges.get(key);
      if (!edge) continue;
      data.edges.delete(key);
      data.edgesByMemory.get(edge.a === id ? edge.b : edge.a)?.delete(key);
    }
    data.edgesByMemory.delete(id);
    this.semantic.dropMemory(contextId, id);
    for (const rows of data.vectors.values()) {
      for (const [key, row] of rows) if (row.memoryId === id) rows.delete(key);
    }
    data.lexical?.removeMemory(id);
    data.lastWrite = new Date().toISOString();
    invalidate(data);
    return true;
  }

  findByKeys(
    contextId: string,
    keys: readonly string[],
    options?: { limit?: number },
  ): Promise<MemoryRecord[]> {
    return this.keyLookups.findByKeys(contextId, keys, options);
  }

  listPendingMedia(options: { limit: number; after?: PendingMediaRef }): Promise<PendingMediaRef[]> {
    return this.keyLookups.listPendingMedia(options);
  }

  heldMediaKeys(keys: readonly string[]): Promise<Set<string>> {
    return this.keyLookups.heldMediaKeys(keys);
  }

  adjacentByKey(
    contextId: string,
    key: string,
    position: { sequence: number; id: string },
    direction: 'before' | 'after',
  ): Promise<MemoryRecord | undefined> {
    return this.keyLookups.adjacentByKey(contextId, key, position, direction);
  }

  findKeyRange(
    contextId: string,
    from: string,
    to: string,
    options?: { limit?: number },
  ): Promise<KeyedRecord[]> {
    return this.keyLookups.findKeyRange(contextId, from, to, options);
  }

  async deleteContext(contextId: string, options: ForgetOptions = {}): Promise<boolean> {
    // One step: the in-memory store has no lock to share.
    await options.started?.();
    return (options.schedule ?? ((step) => step()))(async () => this.deleteContextNow(contextId));
  }

  private deleteContextNow(contextId: string): boolean {
    this.assertOpen();
    const existed = this.contexts.delete(contextId);
    if (existed) this.contextOrder.splice(this.contextSlot(contextId), 1);
    this.semantic.dropContext(contextId);
    let questions = false;
    for (const [key, question] of this.questions) {
      if (question.contextId === contextId) questions = this.questions.delete(key);
    }
    return existed || questions;
  }

  getViews(contextId: string, memoryIds: readonly string[]): Promise<MemoryView[]> {
    return this.reads.getViews(contextId, memoryIds);
  }

  pendingRelationWork(contextId: string, limit: number): Promise<RelationWork[]> {
    return this.relations.pendingRelationWork(contextId, limit);
  }

  clearRelationWork(contextId: string, seqs: readonly number[] | { through: number }): Promise<void> {
    return this.relations.clearRelationWork(contextId, seqs);
  }

  relationWorkStatus(contextId: string): Promise<{ pending: number; lastSeq?: number }> {
    return this.relations.relationWorkStatus(contextId);
  }

  hasRelationWork(contextId: string): Promise<boolean> {
    return this.relations.hasRelationWork(contextId);
  }

  contextsWithRelationWork(): Promise<string[]> {
    return this.relations.contextsWithRelationWork();
  }

  replaceEdges(
    contextId: string,
    types: readonly RelationType[],
    edges: readonly MemoryEdge[],
  ): Promise<void> {
    return this.relations.replaceEdges(contextId, types, edges);
  }

  changeEdges(contextId: string, changes: readonly EdgeChange[]): Promise<void> {
    return this.relations.changeEdges(contextId, changes);
  }

  neighbors(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    return this.relations.neighbors(contextId, memoryIds);
  }

  edgesAmong(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    return this.relations.edgesAmong(contextId, memoryIds);
  }

  countEdges(contextId: string): Promise<Record<RelationType, number>> {
    return this.relations.countEdges(contextId);
  }

  async putQuestions(questions: readonly EvalQuestion[]): Promise<number> {
    this.assertOpen();
    for (const question of questions) {
      this.questions.set(pairKey(question.contextId, question.id), structuredClone(question));
    }
    return questions.length;
  }

  async listQuestions(contextId?: string): Promise<EvalQuestion[]> {
    this.assertOpen();
    const all = [...this.questions.values()];
    return structuredClone(contextId === undefined ? all : all.filter((q) => q.contextId === contextId));
  }

  async searchLexical(contextId: string, query: string, options: LexicalSearchOptions): Promise<ViewHit[]> {
    this.assertOpen();
    const data = this.contexts.get(contextId);
    if (!data) return [];
    data.lexical ??= Bm25Index.build(
      [...data.memories.values()].flatMap((stored) => stored.views.filter((view) => view.text !== '')),
    );
    return data.lexical.search(query, options);
  }

  putVectors(contextId: string, space: string, rows: readonly VectorRow[]): Promise<void> {
    return this.vectors.putVectors(contextId, space, rows);
  }

  getVectors(contextId: string, space: string, memoryIds?: readonly string[]): Promise<VectorRow[]> {
    return this.vectors.getVectors(contextId, space, memoryIds);
  }

  searchVectors(
    contextId: string,
    space: string,
    query: Float32Array,
    options: VectorSearchOptions,
  ): Promise<ViewHit[]> {
    return this.vectors.searchVectors(contextId, space, query, options);
  }

  async getMeta<T = unknown>(key: string): Promise<T | undefined> {
    this.assertOpen();
    const value = this.meta.get(key);
    return value === undefined ? undefined : (JSON.parse(value) as T);
  }

  async listMetaKeys(prefix = ''): Promise<string[]> {
    this.assertOpen();
    return [...this.meta.keys()].filter((key) => key.startsWith(prefix)).sort();
  }

  listVectorSpaces(contextId: string): Promise<string[]> {
    return this.vectors.listVectorSpaces(contextId);
  }

  async setMeta(key: string, value: unknown): Promise<void> {
    this.assertOpen();
    if (value === undefined) this.meta.delete(key);
    else this.meta.set(key, JSON.stringify(value));
  }

  async integrityCheck(): Promise<{ ok: boolean; problems: string[] }> {
    this.assertOpen();
    return memoryStoreIntegrityCheck(this.contexts);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private context(contextId: string, create: boolean): ContextData {
    let data = this.contexts.get(contextId);
    if (!data) {
      data = {
        memories: new Map(),
        edges: new Map(),
        edgesByMemory: new Map(),
        journal: [],
        vectors: new Map(),
        vectorIndexes: new Map(),
        keys: new MemoryKeyIndex(),
        versions: new Map(),
      };
      if (create) {
        this.contexts.set(contextId, data);
        this.contextOrder.splice(this.contextSlot(contextId), 0, contextId);
      }
    }
    return data;
  }

  private assertOpen(): void {
    if (this.closed) throw new GraphmemixError('STORE', 'the memory store is closed');
  }
}

/** Vector indexes are rebuilt lazily after a write; the BM25 index is maintained in place (updateLexical). */
function invalidate(data: ContextData): void {
  data.vectorIndexes.clear();
}

/** Replaces a memory's documents in the context's BM25 index, when one has been built (else built lazily). */
function updateLexical(data: ContextData, id: string, views: readonly MemoryView[]): void {
  if (!data.lexical) return;
  data.lexical.removeMemory(id);
  for (const view of views) if (view.text !== '') data.lexical.add(view);
}

function journalEntry(seq: number, memoryId: string, before: MemoryRecord | undefined): RelationWork {
  return before === undefined ? { seq, memoryId } : { seq, memoryId, before: structuredClone(before) };
}
