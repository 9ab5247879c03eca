import { GraphmemixError } from '../errors/graphmemix-error.ts';
import { Bm25Index } from '../retrieval/bm25-index.ts';
import { TOKENIZER_VERSION } from '../retrieval/tokenize.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { EvalQuestion } from '../types/question.ts';
import type { MemoryEdge, RelationType } from '../types/relation.ts';
import type { MemoryView, ViewHit } from '../types/view.ts';
import {
  type ArchiveStore,
  type ContextInfo,
  type ContextStats,
  type EdgeChange,
  type KeyedRecord,
  type LexicalSearchOptions,
  MEDIA_PENDING_KEY,
  type MemoryFilter,
  type MemoryVersion,
  type MemoryWrite,
  type PendingMediaRef,
  type RelationWork,
  type VectorRow,
  type VectorSearchOptions,
  type WriteOutcome,
} from './archive-store-spec.ts';
import { countEdgeTypes, diffEdgeChanges, diffEdgeReplacement, pairKey } from './edge-merge.ts';
import { MemoryKeyIndex } from './memory-key-index.ts';
import { recordMatches } from './memory-scope-tags.ts';
import { MemorySemanticIndex } from './memory-semantic-index.ts';
import {
  assertWrite,
  compareStrings,
  compareVectorRows,
  TOKENIZER_VERSION_META,
  vectorDimensionError,
} from './store-rules.ts';
import { VectorIndex } from './vector-index.ts';

interface StoredMemory {
  record: MemoryRecord;
  views: MemoryView[];
  contentHash: string;
}

interface ContextData {
  memories: Map<string, StoredMemory>;
  edges: Map<string, MemoryEdge>;
  /** memory id -> pair keys of its edges, for neighbors() and deletes. */
  edgesByMemory: Map<string, Set<string>>;
  /** space -> "memoryId\0kind\0key" -> row. */
  vectors: Map<string, Map<string, VectorRow>>;
  lexical?: Bm25Index;
  vectorIndexes: Map<string, VectorIndex>;
  /** The relation journal (ArchiveStore.pendingRelationWork), in seq order. */
  journal: RelationWork[];
  /** Relation lookup keys (MemoryWrite.keys). */
  keys: MemoryKeyIndex;
  lastWrite?: string;
  /** memory id -> its replaced versions, oldest first (ArchiveStore.memoryVersions). */
  versions: Map<string, MemoryRecord[]>;
}

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

  async getMemory(contextId: string, id: string): Promise<MemoryRecord | undefined> {
    this.assertOpen();
    const stored = this.contexts.get(contextId)?.memories.get(id);
    return stored ? structuredClone(stored.record) : undefined;
  }

  async getMemories(contextId: string, ids: readonly string[]): Promise<MemoryRecord[]> {
    this.assertOpen();
    const memories = this.contexts.get(contextId)?.memories;
    if (!memories) return [];
    return ids.flatMap((id) => {
      const stored = memories.get(id);
      return stored ? [structuredClone(stored.record)] : [];
    });
  }

  async listMemories(
    contextId: string,
    options: { afterSequence?: number; afterId?: string; limit?: number; filter?: MemoryFilter } = {},
  ): Promise<MemoryRecord[]> {
    this.assertOpen();
    const memories = this.contexts.get(contextId)?.memories;
    if (!memories) return [];
    const after = options.afterSequence ?? Number.NEGATIVE_INFINITY;
    const afterId = options.afterSequence === undefined ? undefined : options.afterId;
    const filter = options.filter;
    const records = [...memories.values()]
      .map((stored) => stored.record)
      .filter(
        (record) =>
          (record.sequence > after ||
            (record.sequence === after && afterId !== undefined && compareStrings(record.id, afterId) > 0)) &&
          (filter === undefined || recordMatches(record, filter)),
      )
      .sort((x, y) => x.sequence - y.sequence || compareStrings(x.id, y.id));
    return structuredClone(options.limit === undefined ? records : records.slice(0, options.limit));
  }

  async contextStats(contextId: string): Promise<ContextStats | undefined> {
    this.assertOpen();
    const data = this.contexts.get(contextId);
    if (!data) return undefined;
    const byKind: Record<string, number> = {};
    for (const { record } of data.memories.values()) byKind[record.kind] = (byKind[record.kind] ?? 0) + 1;
    return {
      memories: data.memories.size,
      byKind,
      ...(data.lastWrite === undefined ? {} : { lastWrite: data.lastWrite }),
    };
  }

  async matchMemories(
    contextId: string,
    filter: MemoryFilter,
    options: { ids?: readonly string[]; limit?: number },
  ): Promise<string[]> {
    this.assertOpen();
    const memories = this.contexts.get(contextId)?.memories;
    if (!memories) return [];
    if (options.ids !== undefined) {
      return [...new Set(options.ids)].filter((id) => {
        const stored = memories.get(id);
        return stored !== undefined && recordMatches(stored.record, filter);
      });
    }
    // The in-memory store is for small archives: a scan is its index.
    const found = await this.listMemories(contextId, {
      filter,
      ...(options.limit === undefined ? {} : { limit: options.limit }),
    });
    return found.map((record) => record.id);
  }

  async memoryVersions(contextId: string, id: string): Promise<MemoryVersion[]> {
    this.assertOpen();
    const history = this.contexts.get(contextId)?.versions.get(id) ?? [];
    return structuredClone(history.map((record, index) => ({ version: index + 1, record })));
  }

  async maxSequence(contextId: string): Promise<number | undefined> {
    this.assertOpen();
    return this.contexts.get(contextId) === undefined
      ? undefined
      : contextInfo(contextId, this.contexts.get(contextId)!).maxSequence;
  }

  async countMemories(contextId: string): Promise<number> {
    this.assertOpen();
    return this.contexts.get(contextId)?.memories.size ?? 0;
  }

  async getContentHashes(contextId: string, ids: readonly string[]): Promise<Map<string, string>> {
    this.assertOpen();
    const hashes = new Map<string, string>();
    const memories = this.contexts.get(contextId)?.memories;
    for (const id of ids) {
      const stored = memories?.get(id);
      if (stored) hashes.set(id, stored.contentHash);
    }
    return hashes;
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

  async findByKeys(
    contextId: string,
    keys: readonly string[],
    options: { limit?: number } = {},
  ): Promise<MemoryRecord[]> {
    this.assertOpen();
    const data = this.contexts.get(contextId);
    if (!data) return [];
    const found = data.keys.find(keys, (id) => data.memories.get(id)?.record);
    return structuredClone(options.limit === undefined ? found : found.slice(0, options.limit));
  }

  /** In memory the whole archive is already held: the contexts are walked in id order (no I/O at open). */
  async listPendingMedia(options: { limit: number; after?: PendingMediaRef }): Promise<PendingMediaRef[]> {
    this.assertOpen();
    const out: PendingMediaRef[] = [];
    const after = options.after;
    for (const contextId of [...this.contexts.keys()].sort(compareStrings)) {
      if (out.length >= options.limit) break;
      if (after !== undefined && compareStrings(contextId, after.contextId) < 0) continue;
      const data = this.contexts.get(contextId)!;
      const ids = data.keys
        .find([MEDIA_PENDING_KEY], (id) => data.memories.get(id)?.record)
        .map((record) => record.id)
        .sort(compareStrings);
      for (const id of ids) {
        if (after !== undefined && contextId === after.contextId && compareStrings(id, after.id) <= 0)
          continue;
        if (out.length >= options.limit) break;
        out.push({ contextId, id });
      }
    }
    return out;
  }

  async adjacentByKey(
    contextId: string,
    key: string,
    position: { sequence: number; id: string },
    direction: 'before' | 'after',
  ): Promise<MemoryRecord | undefined> {
    this.assertOpen();
    const data = this.contexts.get(contextId);
    if (!data) return undefined;
    const found = data.keys.adjacent(key, position, direction, (id) => data.memories.get(id)?.record);
    return found ? structuredClone(found) : undefined;
  }

  async findKeyRange(
    contextId: string,
    from: string,
    to: string,
    options: { limit?: number } = {},
  ): Promise<KeyedRecord[]> {
    this.assertOpen();
    const data = this.contexts.get(contextId);
    if (!data) return [];
    return data.keys.range(from, to, options.limit).map(({ key, id }) => ({
      key,
      record: structuredClone(data.memories.get(id)!.record),
    }));
  }

  async deleteContext(contextId: string): Promise<boolean> {
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

  async getViews(contextId: string, memoryIds: readonly string[]): Promise<MemoryView[]> {
    this.assertOpen();
    const memories = this.contexts.get(contextId)?.memories;
    if (!memories) return [];
    return structuredClone(memoryIds.flatMap((id) => memories.get(id)?.views ?? []));
  }

  async pendingRelationWork(contextId: string, limit: number): Promise<RelationWork[]> {
    this.assertOpen();
    return structuredClone(this.contexts.get(contextId)?.journal.slice(0, limit) ?? []);
  }

  async clearRelationWork(contextId: string, seqs: readonly number[] | { through: number }): Promise<void> {
    this.assertOpen();
    const data = this.contexts.get(contextId);
    if (!data) return;
    if (!Array.isArray(seqs)) {
      const through = (seqs as { through: number }).through;
      data.journal = data.journal.filter((entry) => entry.seq > through);
      return;
    }
    const cleared = new Set(seqs);
    data.journal = data.journal.filter((entry) => !cleared.has(entry.seq));
  }

  async relationWorkStatus(contextId: string): Promise<{ pending: number; lastSeq?: number }> {
    this.assertOpen();
    const journal = this.contexts.get(contextId)?.journal ?? [];
    const last = journal[journal.length - 1];
    return last === undefined ? { pending: 0 } : { pending: journal.length, lastSeq: last.seq };
  }

  async replaceEdges(
    contextId: string,
    types: readonly RelationType[],
    edges: readonly MemoryEdge[],
  ): Promise<void> {
    this.assertOpen();
    const data = this.context(contextId, edges.length > 0);
    const { upserts, deletes } = diffEdgeReplacement(contextId, data.edges.values(), types, edges);
    for (const edge of upserts) {
      for (const id of [edge.a, edge.b]) {
        if (!data.memories.has(id)) {
          throw new GraphmemixError(
            'INVALID_INPUT',
            `edge endpoint "${id}" is not a memory of "${contextId}"`,
          );
        }
      }
    }
    applyEdgeWrites(data, upserts, deletes);
  }

  async changeEdges(contextId: string, changes: readonly EdgeChange[]): Promise<void> {
    this.assertOpen();
    if (changes.length === 0) return;
    const data = this.context(contextId, true);
    // The whole diff (validation included) comes first, then the writes: all-or-nothing like a transaction.
    const { upserts, deletes } = diffEdgeChanges(
      contextId,
      changes,
      (id) => data.memories.has(id),
      (a, b) => data.edges.get(pairKey(a, b)),
    );
    applyEdgeWrites(data, upserts, deletes);
  }

  async neighbors(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    this.assertOpen();
    const data = this.contexts.get(contextId);
    if (!data) return [];
    const keys = new Set<string>();
    for (const id of memoryIds) for (const key of data.edgesByMemory.get(id) ?? []) keys.add(key);
    return [...keys].sort().map((key) => structuredClone(data.edges.get(key)!));
  }

  async edgesAmong(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    const inSet = new Set(memoryIds);
    return (await this.neighbors(contextId, memoryIds)).filter(
      (edge) => inSet.has(edge.a) && inSet.has(edge.b),
    );
  }

  async countEdges(contextId: string): Promise<Record<RelationType, number>> {
    this.assertOpen();
    return countEdgeTypes(this.contexts.get(contextId)?.edges.values() ?? []);
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

  async putVectors(contextId: string, space: string, rows: readonly VectorRow[]): Promise<void> {
    this.assertOpen();
    const data = this.context(contextId, false);
    for (const row of rows) {
      if (!data.memories.has(row.memoryId)) {
        throw new GraphmemixError(
          'INVALID_INPUT',
          `vector of unknown memory "${row.memoryId}" in "${contextId}"`,
        );
      }
    }
    let space_ = data.vectors.get(space);
    if (!space_) {
      space_ = new Map();
      data.vectors.set(space, space_);
    }
    const dims = space_.values().next().value?.vector.length ?? rows[0]?.vector.length;
    for (const row of rows) {
      if (row.vector.length !== dims) {
        throw vectorDimensionError(space, dims ?? 0, row.vector.length);
      }
    }
    for (const row of rows) {
      space_.set(vectorKey(row), { ...row, vector: Float32Array.from(row.vector) });
    }
    data.vectorIndexes.delete(space);
  }

  async getVectors(contextId: string, space: string, memoryIds?: readonly string[]): Promise<VectorRow[]> {
    this.assertOpen();
    const rows = [...(this.contexts.get(contextId)?.vectors.get(space)?.values() ?? [])];
    const wanted = memoryIds ? new Set(memoryIds) : undefined;
    return rows
      .filter((row) => !wanted || wanted.has(row.memoryId))
      .sort(compareVectorRows)
      .map((row) => ({ ...row, vector: Float32Array.from(row.vector) }));
  }

  async searchVectors(
    contextId: string,
    space: string,
    query: Float32Array,
    options: VectorSearchOptions,
  ): Promise<ViewHit[]> {
    this.assertOpen();
    const data = this.contexts.get(contextId);
    const rows = data?.vectors.get(space);
    if (!data || !rows || rows.size === 0) return [];
    let index = data.vectorIndexes.get(space);
    if (!index) {
      index = new VectorIndex([...rows.values()].sort(compareVectorRows));
      data.vectorIndexes.set(space, index);
    }
    return index.search(query, options);
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

  async listVectorSpaces(contextId: string): Promise<string[]> {
    this.assertOpen();
    const spaces = this.contexts.get(contextId)?.vectors ?? new Map<string, Map<string, VectorRow>>();
    return [...spaces].flatMap(([space, rows]) => (rows.size > 0 ? [space] : [])).sort();
  }

  async setMeta(key: string, value: unknown): Promise<void> {
    this.assertOpen();
    if (value === undefined) this.meta.delete(key);
    else this.meta.set(key, JSON.stringify(value));
  }

  async integrityCheck(): Promise<{ ok: boolean; problems: string[] }> {
    this.assertOpen();
    const problems: string[] = [];
    for (const [contextId, data] of this.contexts) {
      for (const edge of data.edges.values()) {
        if (!(edge.a < edge.b)) problems.push(`${contextId}: edge ${edge.a}-${edge.b} not ordered`);
        for (const id of [edge.a, edge.b]) {
          if (!data.memories.has(id))
            problems.push(`${contextId}: edge ${edge.a}-${edge.b} dangles at ${id}`);
        }
      }
      for (const [space, rows] of data.vectors) {
        for (const row of rows.values()) {
          if (!data.memories.has(row.memoryId))
            problems.push(`${contextId}: vector ${space} dangles at ${row.memoryId}`);
        }
      }
    }
    return { ok: problems.length === 0, problems };
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

function vectorKey(row: VectorRow): string {
  return `${row.memoryId}\u0000${row.kind}\u0000${row.key}`;
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

function contextInfo(id: string, data: ContextData): ContextInfo {
  let maxSequence: number | undefined;
  for (const stored of data.memories.values()) {
    if (maxSequence === undefined || stored.record.sequence > maxSequence)
      maxSequence = stored.record.sequence;
  }
  return maxSequence === undefined
    ? { id, memories: data.memories.size }
    : { id, memories: data.memories.size, maxSequence };
}

function applyEdgeWrites(
  data: ContextData,
  upserts: readonly MemoryEdge[],
  deletes: readonly MemoryEdge[],
): void {
  for (const edge of deletes) {
    const key = pairKey(edge.a, edge.b);
    data.edges.delete(key);
    data.edgesByMemory.get(edge.a)?.delete(key);
    data.edgesByMemory.get(edge.b)?.delete(key);
  }
  for (const edge of upserts) {
    const key = pairKey(edge.a, edge.b);
    data.edges.set(key, structuredClone(edge));
    for (const id of [edge.a, edge.b]) {
      let keys = data.edgesByMemory.get(id);
      if (!keys) {
        keys = new Set();
        data.edgesByMemory.set(id, keys);
      }
      keys.add(key);
    }
  }
}

function journalEntry(seq: number, memoryId: string, before: MemoryRecord | undefined): RelationWork {
  return before === undefined ? { seq, memoryId } : { seq, memoryId, before: structuredClone(before) };
}
