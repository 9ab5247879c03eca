import Database from 'better-sqlite3';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { OptionalPackage } from '../importers/optional-package.ts';
import { Bm25Index } from '../retrieval/bm25-index.ts';
import { TOKENIZER_VERSION } from '../retrieval/tokenize.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { EvalQuestion } from '../types/question.ts';
import type { MemoryEdge, RelationType } from '../types/relation.ts';
import type { MemoryView, ViewHit, ViewKind } from '../types/view.ts';
import type {
  ArchiveStore,
  ContextInfo,
  ContextStats,
  EdgeChange,
  KeyedRecord,
  LexicalSearchOptions,
  MemoryFilter,
  MemoryVersion,
  MemoryWrite,
  PendingMediaRef,
  RelationWork,
  UnitOfWorkOptions,
  VectorRow,
  VectorSearchOptions,
  WriteOutcome,
} from './archive-store-spec.ts';
import {
  diffEdgeChanges,
  diffEdgeReplacement,
  emptyEdgeCounts,
  pairKey,
  streamEdgeReplacement,
} from './edge-merge.ts';
import { FreshMemoryRows } from './fresh-memory-rows.ts';
import { lazyStatement } from './lazy-statement.ts';
import { scopeTags } from './memory-scope-tags.ts';
import { migrate } from './migrations.ts';
import type { SemanticIndexStore } from './semantic-index-spec.ts';
import { SemanticPostingsCache } from './semantic-postings-cache.ts';
import {
  type CheckpointerOptions,
  SqliteCheckpointer,
  WRITER_CHECKPOINT_FRAMES,
} from './sqlite-checkpointer.ts';
import { SqliteLexicalIndex } from './sqlite-lexical-index.ts';
import { SqliteMemoryFilter } from './sqlite-memory-filter.ts';
import { type EdgeRow, memoryKey, SqliteReadCache, sqliteReadWork } from './sqlite-read-cache.ts';
import { SqliteRelationKeys } from './sqlite-relation-keys.ts';
import { createSqliteSemanticIndex } from './sqlite-semantic-index.ts';
import { assertWrite, TOKENIZER_VERSION_META, vectorDimensionError } from './store-rules.ts';
import { UsearchVectorIndexes } from './usearch-vector-index.ts';
import { VectorIndex } from './vector-index.ts';

/** How many contexts keep a cached vector index per open store (least recently used is dropped). */
const CACHED_CONTEXTS = 32;
/**
 * Largest relation update (journal entries, the unit's own adds included) that runs as ONE SQLite transaction
 * (`unitOfWork`). An add of this size updates its relations in tens of milliseconds on this machine (an add-1
 * ~10 ms); beyond it the write lock would be held for as long as the kNN searches of every newcomer take.
 */
export const SQLITE_UNIT_MAX_PENDING = 16;

/**
 * The embedded default backend: one SQLite file (better-sqlite3, WAL, foreign keys on).
 *
 * Durability: every write method is one transaction; WAL with synchronous=NORMAL keeps every committed
 * transaction across a killed process (an OS crash may lose the last few, never corrupt the file).
 * Lexical search: a persistent BM25 index in the same file (src/store/sqlite-lexical-index.ts), updated in the
 * transaction of every memory write/delete, searched top-k with pruning; nothing is rebuilt on open or write.
 * Vector search: an index per context built lazily and cached; `contexts.vector_version` is bumped by every
 * vector write/delete, so a cache built before a write (by this process or another one sharing the file) is
 * rebuilt on the next search (src/store/vector-index.ts: exact, IVF above 20k vectors).
 */
/** The writer's own checkpoint threshold (WAL pages) while no background checkpointer runs. */
const WRITER_CHECKPOINT_PAGES = 8192;

/**
 * A file below the checkpointer's size has its size looked at again every this many committed writes (one
 * `stat`): a server opened on a small archive gets its checkpointer once the archive has grown, not only
 * when reopened.
 */
export const CHECKPOINTER_SIZE_CHECK_COMMITS = 64;

export function createSqliteStore(
  file: string,
  options: {
    readonly?: boolean;
    /** The persistent approximate vector index (tests: a lower threshold, a missing package). */
    ann?: { threshold?: number; load?: () => Promise<OptionalPackage<'usearch'>> };
    /**
     * The background WAL checkpointer (sqlite-checkpointer.ts) of a writable file from `fromBytes`
     * (default BACKGROUND_CHECKPOINT_FROM_BYTES); false: none (the writer checkpoints in its commits).
     */
    checkpointer?: CheckpointerOptions | false;
  } = {},
): ArchiveStore {
  let db: Database.Database;
  try {
    db = new Database(file, {
      readonly: options.readonly ?? false,
      fileMustExist: options.readonly ?? false,
    });
    db.pragma('busy_timeout = 5000');
    if (!options.readonly) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      // Checkpoint every 8,192 WAL pages (32 MiB), not SQLite's 1,000: an add writes ~115 pages, so the
      // default checkpointed every ~9 adds, copying the same hot pages (counters, index roots) to the file
      // again each time; the commit of an add took ~40% less wall with this (docs/living-archive.md).
      // Deletes still truncate the WAL themselves (forget means forget).
      db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
    }
    db.pragma('foreign_keys = ON');
    // Deleted rows are overwritten with zeros, so a forgotten memory's text does not linger in free pages.
    if (!options.readonly) db.pragma('secure_delete = ON');
    assertGraphmemixFile(db, file);
    if (!options.readonly) migrate(db, file);
  } catch (error) {
    if (error instanceof GraphmemixError) throw error;
    throw new GraphmemixError('STORE', `cannot open store: ${(error as Error).message}`, {
      location: { file },
      cause: error,
    });
  }
  return new SqliteStore(db, file, options);
}

interface Cached<T> {
  version: number;
  value: T;
}

class SqliteStore implements ArchiveStore {
  readonly specificationVersion = 'v1' as const;
  readonly backend = 'sqlite';
  /** Absent only for a read-only store of schema 1 (not migrated): then BM25 is built per search. */
  private readonly lexical: SqliteLexicalIndex | undefined;
  private readonly vectorCache = new Map<string, Cached<VectorIndex>>();
  private readonly statements: ReturnType<typeof prepareStatements>;
  private readonly keys: SqliteRelationKeys;
  private readonly filtered: SqliteMemoryFilter;
  readonly semantic: SemanticIndexStore;
  /** The semantic index's kept top-n posting reads (semantic-postings-cache.ts). */
  private readonly semanticCache = new SemanticPostingsCache();
  /** Edge lists of memories questions read (sqlite-read-cache.ts). */
  private readonly readCache = new SqliteReadCache();
  /** A deferred transaction around a read (withReadCache). */
  private readonly readTransaction: <T>(work: () => T) => T;

  private readonly ann: UsearchVectorIndexes;
  /** Copies the WAL into the file off this thread (large writable files only). */
  private checkpointer: SqliteCheckpointer | undefined;
  /**
   * Commits left before the file's size is looked at again, while it may still need a checkpointer (a
   * writable file below the size, e.g. a server started on a new archive that grows for months); undefined
   * once one runs or when none may.
   */
  private checkpointerWatch: number | undefined;
  private readonly checkpointerOptions: CheckpointerOptions | undefined;
  /** writeMemories' queued rows of new memories (prepared on the first write: a read-only store never). */
  private freshRows: FreshMemoryRows | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly file: string,
    options: Parameters<typeof createSqliteStore>[1] = {},
  ) {
    this.statements = prepareStatements(db);
    const transaction = db.transaction((work: () => unknown) => work());
    this.readTransaction = <T>(work: () => T) => transaction(work) as T;
    // An in-memory database has no folder to keep index files in: exact search only.
    this.ann = new UsearchVectorIndexes(db, file === ':memory:' || file === '' ? undefined : file, {
      ...options.ann,
      ...(options.readonly === undefined ? {} : { readonly: options.readonly }),
    });
    this.keys = new SqliteRelationKeys(db);
    this.filtered = new SqliteMemoryFilter(db);
    this.semantic = createSqliteSemanticIndex(db, (work) => this.run(work), this.semanticCache);
    const indexed = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'lex_fts'").get();
    // Postings made by another tokenizer (a read-only store opened before its migration 7) cannot answer
    // queries tokenized by this one: such a store is searched from its views, like a schema-1 store.
    this.lexical = indexed && termsAreCurrent(db) ? new SqliteLexicalIndex(db) : undefined;
    this.checkpointerOptions = options.checkpointer === false ? undefined : options.checkpointer;
    const mayCheckpoint =
      !options.readonly && options.checkpointer !== false && file !== ':memory:' && file !== '';
    if (mayCheckpoint) this.startCheckpointer();
  }

  /** Starts the background checkpointer when the file has reached its size; otherwise watches commits. */
  private startCheckpointer(): void {
    const db = this.db;
    this.checkpointer = SqliteCheckpointer.start(this.file, this.checkpointerOptions, () => {
      if (db.open) db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
    });
    this.checkpointerWatch = this.checkpointer ? undefined : CHECKPOINTER_SIZE_CHECK_COMMITS;
    // The checkpointer copies the WAL from here on; this connection's own checkpoint is the net.
    if (this.checkpointer) db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_FRAMES}`);
  }

  /** After a write transaction committed: a file that has grown past the size gets its checkpointer. */
  private committed(): void {
    if (this.checkpointerWatch === undefined || --this.checkpointerWatch > 0 || !this.db.open) return;
    this.startCheckpointer();
  }

  get vectorSupport(): string {
    return this.ann.describe();
  }

  async listContexts(options: { afterId?: string; limit?: number } = {}): Promise<ContextInfo[]> {
    const paged = options.afterId !== undefined || options.limit !== undefined;
    const rows = this.run(() =>
      paged
        ? this.statements.listContextPage.all(
            options.afterId ?? null,
            options.afterId ?? null,
            options.limit ?? -1,
          )
        : this.statements.listContexts.all(),
    ) as {
      id: string;
      memories: number;
      maxSequence: number | null;
    }[];
    return rows.map((row) =>
      row.maxSequence === null
        ? { id: row.id, memories: row.memories }
        : { id: row.id, memories: row.memories, maxSequence: row.maxSequence },
    );
  }

  async writeMemories(contextId: string, writes: MemoryWrite[]): Promise<WriteOutcome> {
    for (const write of writes) assertWrite(contextId, write);
    const s = this.statements;
    const lexical = this.lexical;
    this.freshRows ??= new FreshMemoryRows(this.db);
    const fresh = this.freshRows;
    return this.run(() => {
      const result = this.db
        .transaction(() => {
          lexical?.begin();
          fresh.clear();
          const outcome: WriteOutcome = { inserted: [], updated: [], unchanged: [] };
          s.ensureContext.run(contextId);
          // Stored hashes of the whole batch in one read; a write of this call updates its entry, so a repeated
          // id sees what the earlier one wrote, as a probe per record would.
          const hashes = this.storedHashes(contextId, writes);
          for (const { record, views, contentHash, keys } of writes) {
            const previousHash = hashes.get(record.id);
            if (previousHash === contentHash) {
              if (keys) {
                fresh.flush();
                this.keys.replace(contextId, record.id, record.sequence, keys);
              }
              outcome.unchanged.push(record.id);
              continue;
            }
            hashes.set(record.id, contentHash);
            const columns = [
              record.sequence,
              record.kind,
              record.sessionId ?? null,
              record.roundId ?? null,
              record.timestamp ?? null,
              contentHash,
              JSON.stringify(record),
            ];
            if (previousHash === undefined) {
              // A new memory: its rows are queued and written several memories to a statement.
              fresh.add({
                contextId,
                id: record.id,
                columns,
                sequence: record.sequence,
                keys: keys ?? [],
                tags: scopeTags(record),
                views,
              });
              outcome.inserted.push(record.id);
              lexical?.addViews(contextId, record.id, views);
              continue;
            }
            fresh.flush();
            const replaced = s.getRecord.get(contextId, record.id) as { record: string };
            s.journal.run(contextId, record.id, replaced.record);
            // History: the replaced record becomes the memory's newest old version.
            s.insertVersion.run(
              contextId,
              record.id,
              recordedAtOf(replaced.record),
              replaced.record,
              contextId,
              record.id,
            );
            s.deleteTags.run(contextId, record.id);
            s.updateMemory.run(...columns, contextId, record.id);
            s.deleteViews.run(contextId, record.id);
            s.deleteMemoryVectors.run(contextId, record.id);
            lexical?.removeMemory(contextId, record.id);
            outcome.updated.push(record.id);
            this.keys.replace(contextId, record.id, record.sequence, keys ?? []);
            for (const tag of scopeTags(record)) s.insertTag.run(contextId, tag.name, tag.value, record.id);
            views.forEach((view, position) => {
              s.insertView.run(
                contextId,
                record.id,
                position,
                view.kind,
                view.key,
                view.text,
                view.uri ?? null,
              );
            });
            lexical?.addViews(contextId, record.id, views);
          }
          fresh.flush();
          lexical?.flush();
          if (outcome.inserted.length > 0 || outcome.updated.length > 0) {
            s.touchContext.run(new Date().toISOString(), contextId);
            if (outcome.inserted.length > 0) s.addCount.run(outcome.inserted.length, contextId);
            if (outcome.updated.length > 0) s.bumpVectorVersion.run(contextId);
          }
          return outcome;
        })
        .immediate();
      lexical?.commit();
      this.committed();
      return result;
    });
  }

  /** Stored content hashes of the batch's ids (one statement per 500 ids). */
  private storedHashes(contextId: string, writes: readonly MemoryWrite[]): Map<string, string> {
    const hashes = new Map<string, string>();
    for (let first = 0; first < writes.length; first += 500) {
      const ids = writes.slice(first, first + 500).map((write) => write.record.id);
      const rows = this.statements.getHashes.all(contextId, JSON.stringify(ids)) as {
        id: string;
        content_hash: string;
      }[];
      for (const row of rows) hashes.set(row.id, row.content_hash);
    }
    return hashes;
  }

  async getMemory(contextId: string, id: string): Promise<MemoryRecord | undefined> {
    const row = this.run(() => this.statements.getRecord.get(contextId, id)) as
      | { record: string }
      | undefined;
    return row ? (JSON.parse(row.record) as MemoryRecord) : undefined;
  }

  async getMemories(contextId: string, ids: readonly string[]): Promise<MemoryRecord[]> {
    const rows = this.run(() =>
      ids.length === 0 ? [] : this.statements.getRecords.all(contextId, JSON.stringify(ids)),
    ) as {
      id: string;
      record: string;
    }[];
    const byId = new Map(rows.map((row) => [row.id, row.record]));
    return ids.flatMap((id) => {
      const record = byId.get(id);
      return record === undefined ? [] : [JSON.parse(record) as MemoryRecord];
    });
  }

  async listMemories(
    contextId: string,
    options: { afterSequence?: number; afterId?: string; limit?: number; filter?: MemoryFilter } = {},
  ): Promise<MemoryRecord[]> {
    if (options.filter !== undefined) {
      const { filter, ...page } = options;
      const rows = this.run(() => this.filtered.list(contextId, filter, page));
      return rows.map((row) => JSON.parse(row) as MemoryRecord);
    }
    const rows = this.run(() =>
      this.statements.listRecords.all({
        contextId,
        after: options.afterSequence ?? null,
        afterId: options.afterSequence === undefined ? null : (options.afterId ?? null),
        limit: options.limit ?? -1,
      }),
    ) as { record: string }[];
    return rows.map((row) => JSON.parse(row.record) as MemoryRecord);
  }

  async matchMemories(
    contextId: string,
    filter: MemoryFilter,
    options: { ids?: readonly string[]; limit?: number },
  ): Promise<string[]> {
    return this.run(() => this.filtered.match(contextId, filter, options));
  }

  async memoryVersions(contextId: string, id: string): Promise<MemoryVersion[]> {
    const rows = this.run(() => this.statements.listVersions.all(contextId, id)) as {
      version: number;
      record: string;
    }[];
    return rows.map((row) => ({ version: row.version, record: JSON.parse(row.record) as MemoryRecord }));
  }

  async maxSequence(contextId: string): Promise<number | undefined> {
    const row = this.run(() => this.statements.maxSequence.get(contextId)) as { n: number | null };
    return row.n ?? undefined;
  }

  async countMemories(contextId: string): Promise<number> {
    const row = this.run(() => this.statements.countMemories.get(contextId)) as { n: number } | undefined;
    return row?.n ?? 0;
  }

  async contextStats(contextId: string): Promise<ContextStats | undefined> {
    return this.run(() => {
      const context = this.statements.contextRow.get(contextId) as
        | { memories: number; last_write: string | null }
        | undefined;
      if (!context) return undefined;
      const byKind: Record<string, number> = {};
      for (const row of this.statements.kindCounts.all(contextId) as { kind: string; n: number }[]) {
        if (row.n > 0) byKind[row.kind] = row.n;
      }
      return {
        memories: context.memories,
        byKind,
        ...(context.last_write === null ? {} : { lastWrite: context.last_write }),
      };
    });
  }

  async getContentHashes(contextId: string, ids: readonly string[]): Promise<Map<string, string>> {
    const hashes = new Map<string, string>();
    const rows = this.run(() =>
      ids.length === 0 ? [] : this.statements.getHashes.all(contextId, JSON.stringify(ids)),
    ) as {
      id: string;
      content_hash: string;
    }[];
    const byId = new Map(rows.map((row) => [row.id, row.content_hash]));
    for (const id of ids) {
      const hash = byId.get(id);
      if (hash !== undefined) hashes.set(id, hash);
    }
    return hashes;
  }

  async deleteMemory(contextId: string, id: string): Promise<boolean> {
    const s = this.statements;
    const lexical = this.lexical;
    const removed = this.run(() => {
      const deleted = this.db
        .transaction(() => {
          const removed = s.getRecord.get(contextId, id) as { record: string } | undefined;
          if (!removed) return false;
          lexical?.begin();
          // The frozen IDF snapshot counts a word seen in this memory alone as df 1, which is also what it
          // assumes for a word it never saw: dropping those rows changes no score and keeps no forgotten word.
          s.dropUniqueSemanticTerms.run(contextId, contextId, id);
          // Views, vectors and edges go with it (ON DELETE CASCADE); the lexical index is ours to update.
          const deleted = s.deleteMemory.run(contextId, id).changes > 0;
          if (deleted) {
            lexical?.removeMemory(contextId, id);
            lexical?.flush();
            s.journal.run(contextId, id, removed.record);
            s.addCount.run(-1, contextId);
            s.touchContext.run(new Date().toISOString(), contextId);
            s.bumpVectorVersion.run(contextId);
          }
          return deleted;
        })
        .immediate();
      lexical?.commit();
      // Its postings went by cascade, unseen by the semantic index's cache.
      this.semanticCache.clearContext(contextId);
      return deleted;
    });
    // The forgotten memory's vectors must leave the approximate index files too (a rebuild of its spaces).
    if (removed) await this.ann.afterDelete(contextId);
    return removed && this.truncateWal();
  }

  async deleteContext(contextId: string): Promise<boolean> {
    const s = this.statements;
    const annFiles = this.run(() => this.ann.filesOf(contextId));
    const deleted = this.run(() =>
      this.db
        .transaction(() => {
          // What a context owns, and how each goes (extend this list with every new per-context table):
          // - memories: ON DELETE CASCADE from contexts; views, vectors, edges cascade from memories;
          // - questions: no foreign key (questions may name a context before its memories arrive): explicit;
          // - memory_keys, memory_versions, memory_tags: cascade from memories;
          // - relation_journal: no foreign key (entries outlive deleted memories) and holds replaced
          //   records' text: explicit;
          // - tables added later (lexical index, semantic index) must either reference memories/contexts
          //   with ON DELETE CASCADE or get an explicit DELETE here;
          // - meta keys are global (calibration) and stay.
          // - vector_ann rows cascade from contexts; their index files are removed after the commit;
          // - the lexical index (FTS5 postings, per-document term lists, field statistics): removed memory
          //   by memory through the index, which owns its bookkeeping;
          if (this.lexical) {
            this.lexical.begin();
            for (const row of s.contextMemoryIds.all(contextId) as { id: string }[]) {
              this.lexical.removeMemory(contextId, row.id);
            }
            this.lexical.flush();
          }
          s.deleteContextJournal.run(contextId);
          s.deleteContextEdgeCounts.run(contextId);
          s.deleteContextKindCounts.run(contextId);
          // semantic_df holds the context's vocabulary (no foreign key); snapshots cascade from contexts,
          // docs, postings and lists from memories.
          s.deleteContextSemanticDf.run(contextId);
          const questions = s.deleteContextQuestions.run(contextId).changes;
          const contexts = s.deleteContext.run(contextId).changes;
          return questions + contexts > 0;
        })
        .immediate(),
    );
    this.lexical?.commit();
    this.semanticCache.clearContext(contextId);
    this.ann.forgetFiles(annFiles);
    for (const key of [...this.vectorCache.keys()]) {
      if (key.startsWith(pairKey(contextId, ''))) this.vectorCache.delete(key);
    }
    return deleted && this.truncateWal();
  }

  /**
   * After a delete: copies the WAL into the (secure-deleted) main file and truncates it, so the WAL does not
   * keep the forgotten text in old frames. Best effort: another process reading the file can hold frames
   * back, and then the next delete or the next automatic checkpoint finishes the job. A checkpoint running
   * on the background checkpointer makes this one busy at once: that thread truncates after it instead.
   */
  private async truncateWal(): Promise<true> {
    if (!this.db.readonly && this.file !== ':memory:') {
      const [row] = this.run(() => this.db.pragma('wal_checkpoint(TRUNCATE)')) as Array<{ busy: number }>;
      if (row?.busy && this.checkpointer) await this.checkpointer.truncate();
    }
    return true;
  }

  async findByKeys(
    contextId: string,
    keys: readonly string[],
    options: { limit?: number } = {},
  ): Promise<MemoryRecord[]> {
    return this.run(() => this.keys.find(contextId, keys, options.limit));
  }

  async listPendingMedia(options: { limit: number; after?: PendingMediaRef }): Promise<PendingMediaRef[]> {
    return this.run(() => this.keys.pending(options.limit, options.after));
  }

  async adjacentByKey(
    contextId: string,
    key: string,
    position: { sequence: number; id: string },
    direction: 'before' | 'after',
  ): Promise<MemoryRecord | undefined> {
    return this.run(() => this.keys.adjacent(contextId, key, position, direction));
  }

  async findKeyRange(
    contextId: string,
    from: string,
    to: string,
    options: { limit?: number } = {},
  ): Promise<KeyedRecord[]> {
    return this.run(() => this.keys.range(contextId, from, to, options.limit));
  }

  async getViews(contextId: string, memoryIds: readonly string[]): Promise<MemoryView[]> {
    const rows = this.run(() =>
      memoryIds.length === 0 ? [] : this.statements.getViews.all(contextId, JSON.stringify(memoryIds)),
    ) as (ViewRow & {
      memory_id: string;
    })[];
    const byMemory = new Map<string, MemoryView[]>();
    for (const row of rows) {
      const views = byMemory.get(row.memory_id) ?? [];
      views.push(toView(row.memory_id, row));
      byMemory.set(row.memory_id, views);
    }
    // Fresh objects per occurrence: a repeated id must not alias the same view object twice.
    return memoryIds.flatMap((id) => (byMemory.get(id) ?? []).map((view) => ({ ...view })));
  }

  async pendingRelationWork(contextId: string, limit: number): Promise<RelationWork[]> {
    const rows = this.run(() => this.statements.pendingWork.all(contextId, limit)) as {
      seq: number;
      memory_id: string;
      before: string | null;
    }[];
    return rows.map((row) =>
      row.before === null
        ? { seq: row.seq, memoryId: row.memory_id }
        : { seq: row.seq, memoryId: row.memory_id, before: JSON.parse(row.before) as MemoryRecord },
    );
  }

  async clearRelationWork(contextId: string, seqs: readonly number[] | { through: number }): Promise<void> {
    if (!Array.isArray(seqs)) {
      this.run(() => this.statements.clearWorkThrough.run(contextId, (seqs as { through: number }).through));
      return;
    }
    if (seqs.length === 0) return;
    this.run(() => this.statements.clearWork.run(contextId, JSON.stringify(seqs)));
  }

  async relationWorkStatus(contextId: string): Promise<{ pending: number; lastSeq?: number }> {
    const row = this.run(() => this.statements.workStatus.get(contextId)) as {
      n: number;
      last: number | null;
    };
    return row.last === null ? { pending: row.n } : { pending: row.n, lastSeq: row.last };
  }

  async replaceEdges(
    contextId: string,
    types: readonly RelationType[],
    edges: readonly MemoryEdge[],
  ): Promise<void> {
    const s = this.statements;
    this.run(() =>
      this.db
        .transaction(() => {
          // No stored edge has a replaced type (the kept per-type counts say so): a bulk import's rebuild
          // streams its edges, each merged with its pair's stored edge (none in a context without edges).
          const counts = s.countEdgeTypes.all(contextId) as { type: string; n: number }[];
          if (!counts.some((row) => row.n > 0 && (types as readonly string[]).includes(row.type))) {
            const empty = s.anyEdge.get(contextId) === undefined;
            const upserts = streamEdgeReplacement(contextId, types, edges, (a, b) => {
              if (empty) return undefined;
              const row = s.getEdge.get(contextId, a, b) as EdgeRow | undefined;
              return row ? toEdge(contextId, row) : undefined;
            });
            if (upserts !== undefined) {
              this.writeEdgeDiff(contextId, { upserts, deletes: [] });
              return;
            }
          }
          const existing = (s.listEdges.all(contextId) as EdgeRow[]).map((row) => toEdge(contextId, row));
          this.writeEdgeDiff(contextId, diffEdgeReplacement(contextId, existing, types, edges));
        })
        .immediate(),
    );
  }

  async changeEdges(contextId: string, changes: readonly EdgeChange[]): Promise<void> {
    if (changes.length === 0) return;
    const s = this.statements;
    this.run(() =>
      this.db
        .transaction(() => {
          const diff = diffEdgeChanges(
            contextId,
            changes,
            (id) => s.getHash.get(contextId, id) !== undefined,
            (a, b) => {
              const row = s.getEdge.get(contextId, a, b) as EdgeRow | undefined;
              return row ? toEdge(contextId, row) : undefined;
            },
          );
          this.writeEdgeDiff(contextId, diff);
        })
        .immediate(),
    );
  }

  /** Inside a write transaction: the edge rows a diff removes and upserts. */
  private writeEdgeDiff(
    contextId: string,
    diff: { upserts: Iterable<MemoryEdge>; deletes: readonly MemoryEdge[] },
  ): void {
    const s = this.statements;
    for (const edge of diff.deletes) s.deleteEdge.run(contextId, edge.a, edge.b);
    for (const edge of diff.upserts) {
      s.upsertEdge.run(
        contextId,
        edge.a,
        edge.b,
        JSON.stringify(edge.types),
        edge.strength,
        edge.similarity ?? null,
      );
    }
  }

  async neighbors(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    const found = new Map<string, MemoryEdge>();
    // An edge between two of the ids is in both lists: one MemoryEdge for it (the rows are equal).
    const take = (row: EdgeRow) => {
      if (!found.has(row.key)) found.set(row.key, toEdge(contextId, row));
    };
    if (memoryIds.length === 0) return this.run(() => []);
    this.withReadCache((cache) => {
      const unique = [...new Set(memoryIds)];
      const missing: string[] = [];
      for (const id of unique) {
        const rows = cache?.edges.get(memoryKey(contextId, id));
        if (rows === undefined) missing.push(id);
        else for (const row of rows) take(row);
      }
      if (missing.length === 0) return;
      const ids = JSON.stringify(missing);
      sqliteReadWork.edgeStatements++;
      const rows = edgeRows(this.statements.edgesOf.all(contextId, ids, contextId, ids));
      for (const row of rows) take(row);
      // Each missing id's complete list (empty ones too: a memory without edges is a fact worth keeping).
      if (!cache) return;
      for (const [id, list] of edgeListsOf(missing, rows)) cache.edges.set(memoryKey(contextId, id), list);
    });
    return [...found.keys()].sort().map((key) => found.get(key)!);
  }

  async edgesAmong(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    if (memoryIds.length < 2) return [];
    const unique = [...new Set(memoryIds)];
    const byPair = this.withReadCache((cache) => {
      if (!cache) {
        const ids = JSON.stringify(unique);
        sqliteReadWork.edgeStatements++;
        const rows = edgeRows(this.statements.edgesAmong.all(contextId, ids, ids));
        return new Map(rows.map((row) => [row.key, row]));
      }
      // An edge with a cached end is in that end's complete list; only edges between two uncached ends
      // need the statement, which reads the uncached ends' complete lists (and keeps them): selecting only
      // the edges among them cost as much (measured: ~18 rows against ~144 for 24 ids, same CPU: the plan
      // walks every edge of each id either way), and a later question meeting these memories reads nothing.
      const inSet = new Set(unique);
      const byPair = new Map<string, EdgeRow>();
      const uncached: string[] = [];
      for (const id of unique) {
        const list = cache.edges.get(memoryKey(contextId, id));
        if (list === undefined) {
          uncached.push(id);
          continue;
        }
        for (const row of list) {
          if (inSet.has(row.a) && inSet.has(row.b)) byPair.set(row.key, row);
        }
      }
      if (uncached.length >= 2) {
        const ids = JSON.stringify(uncached);
        sqliteReadWork.edgeStatements++;
        const lists = edgeListsOf(
          uncached,
          edgeRows(this.statements.edgesOf.all(contextId, ids, contextId, ids)),
        );
        for (const [id, list] of lists) {
          for (const row of list) {
            if (inSet.has(row.a) && inSet.has(row.b)) byPair.set(row.key, row);
          }
          cache.edges.set(memoryKey(contextId, id), list);
        }
      }
      return byPair;
    });
    // Sorted like neighbors (pairKey order; each key built once, not in every comparison).
    return [...byPair.keys()].sort(compareKeys).map((key) => toEdge(contextId, byPair.get(key)!));
  }

  async countEdges(contextId: string): Promise<Record<RelationType, number>> {
    const rows = this.run(() => this.statements.countEdgeTypes.all(contextId)) as {
      type: RelationType;
      n: number;
    }[];
    const counts = emptyEdgeCounts();
    for (const row of rows) if (row.type in counts) counts[row.type] = row.n;
    return counts;
  }

  async putQuestions(questions: readonly EvalQuestion[]): Promise<number> {
    this.run(() =>
      this.db
        .transaction(() => {
          for (const question of questions) {
            this.statements.upsertQuestion.run(question.contextId, question.id, JSON.stringify(question));
          }
        })
        .immediate(),
    );
    return questions.length;
  }

  async listQuestions(contextId?: string): Promise<EvalQuestion[]> {
    const rows = this.run(() =>
      contextId === undefined
        ? this.statements.listAllQuestions.all()
        : this.statements.listQuestions.all(contextId),
    ) as { question: string }[];
    return rows.map((row) => JSON.parse(row.question) as EvalQuestion);
  }

  async searchLexical(contextId: string, query: string, options: LexicalSearchOptions): Promise<ViewHit[]> {
    return this.run(() => {
      if (this.lexical) return this.lexical.search(contextId, query, options);
      const documents = this.statements.lexicalDocuments.all(contextId) as LexicalRow[];
      return Bm25Index.build(documents).search(query, options);
    });
  }

  async optimizeLexicalIndex(contextId: string): Promise<boolean> {
    // A read-only handle (a read worker) leaves the file as it is.
    return this.run(() => (this.db.readonly ? false : (this.lexical?.mergeSegments(contextId) ?? false)));
  }

  async putVectors(contextId: string, space: string, rows: readonly VectorRow[]): Promise<void> {
    if (rows.length === 0) return;
    const s = this.statements;
    this.run(() =>
      this.db
        .transaction(() => {
          const existing = s.spaceDims.get(contextId, space) as { dims: number } | undefined;
          const dims = existing?.dims ?? rows[0]!.vector.length;
          // Rows carry the version that wrote them (the approximate index reads what is newer than its file).
          s.bumpVectorVersion.run(contextId);
          const version = (s.vectorVersion.get(contextId) as { vector_version: number } | undefined)
            ?.vector_version;
          for (const row of rows) {
            if (row.vector.length !== dims) throw vectorDimensionError(space, dims, row.vector.length);
            if (!s.getHash.get(contextId, row.memoryId)) {
              throw new GraphmemixError(
                'INVALID_INPUT',
                `vector of unknown memory "${row.memoryId}" in "${contextId}"`,
              );
            }
            const blob = Buffer.from(row.vector.buffer, row.vector.byteOffset, row.vector.byteLength);
            s.upsertVector.run(contextId, space, row.memoryId, row.kind, row.key, dims, blob, version ?? 0);
          }
        })
        .immediate(),
    );
    await this.ann.afterWrite(contextId, space);
  }

  async getVectors(contextId: string, space: string, memoryIds?: readonly string[]): Promise<VectorRow[]> {
    const wanted = memoryIds ? new Set(memoryIds) : undefined;
    const rows = this.run(() => this.statements.listVectors.all(contextId, space)) as VectorDbRow[];
    return rows.filter((row) => !wanted || wanted.has(row.memory_id)).map(toVectorRow);
  }

  async searchVectors(
    contextId: string,
    space: string,
    query: Float32Array,
    options: VectorSearchOptions,
  ): Promise<ViewHit[]> {
    const version = this.run(() => this.vectorVersion(contextId));
    if (version === undefined) return [];
    const approximate = await this.ann.search(contextId, space, version, query, options);
    if (approximate) return approximate;
    const index = this.run(() => {
      return cached(this.vectorCache, pairKey(contextId, space), version, () => {
        const rows = (this.statements.listVectors.all(contextId, space) as VectorDbRow[]).map(toVectorRow);
        return new VectorIndex(rows);
      });
    });
    return index ? index.search(query, options) : [];
  }

  async getMeta<T = unknown>(key: string): Promise<T | undefined> {
    const row = this.run(() => this.statements.getMeta.get(key)) as { value: string } | undefined;
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  async listMetaKeys(prefix = ''): Promise<string[]> {
    // A range scan on the primary key: every key >= prefix and < prefix + U+FFFF.
    const rows = this.run(() => this.statements.listMetaKeys.all(prefix, `${prefix}\uffff`)) as {
      key: string;
    }[];
    return rows.map((row) => row.key);
  }

  async listVectorSpaces(contextId: string): Promise<string[]> {
    const rows = this.run(() => this.statements.listVectorSpaces.all(contextId)) as { space: string }[];
    return rows.map((row) => row.space);
  }

  async setMeta(key: string, value: unknown): Promise<void> {
    this.run(() => {
      if (value === undefined) this.statements.deleteMeta.run(key);
      else this.statements.setMeta.run(key, JSON.stringify(value));
    });
  }

  async integrityCheck(): Promise<{ ok: boolean; problems: string[] }> {
    return this.run(() => {
      const problems: string[] = [];
      for (const row of this.db.pragma('integrity_check') as { integrity_check: string }[]) {
        if (row.integrity_check !== 'ok') problems.push(`sqlite: ${row.integrity_check}`);
      }
      for (const row of this.db.pragma('foreign_key_check') as {
        table: string;
        rowid: number;
        parent: string;
      }[]) {
        problems.push(`dangling ${row.table} row ${row.rowid} (missing ${row.parent})`);
      }
      const unparsable = (
        this.db.prepare('SELECT context_id, id FROM memories WHERE json_valid(record) = 0').all() as {
          context_id: string;
          id: string;
        }[]
      ).map((row) => `memory ${row.context_id}/${row.id}: record is not valid JSON`);
      problems.push(...unparsable);
      // Kept counters must agree with the rows they count (integrityCheck is maintenance: it may walk).
      const drift = this.db
        .prepare(
          `SELECT c.context_id AS contextId, c.type AS type, c.n AS kept, COALESCE(x.n, 0) AS actual
           FROM edge_counts c LEFT JOIN (SELECT e.context_id, t.value AS type, COUNT(*) AS n
             FROM edges e, json_each(e.types) t GROUP BY e.context_id, t.value) x
           ON x.context_id = c.context_id AND x.type = c.type WHERE c.n != COALESCE(x.n, 0)`,
        )
        .all() as { contextId: string; type: string; kept: number; actual: number }[];
      for (const row of drift) {
        problems.push(`edge count ${row.contextId}/${row.type}: kept ${row.kept}, actual ${row.actual}`);
      }
      const counts = this.db
        .prepare(
          `SELECT c.id AS contextId, c.memories AS kept, (SELECT COUNT(*) FROM memories m
           WHERE m.context_id = c.id) AS actual FROM contexts c`,
        )
        .all() as { contextId: string; kept: number; actual: number }[];
      for (const row of counts) {
        if (row.kept !== row.actual)
          problems.push(`memory count ${row.contextId}: kept ${row.kept}, actual ${row.actual}`);
      }
      return { ok: problems.length === 0, problems };
    });
  }

  /**
   * One write transaction (BEGIN IMMEDIATE) for every call of `work`: each store call's own transaction
   * becomes a savepoint of it (better-sqlite3 nests them), so an incremental relation update commits once
   * instead of ~7 times (every commit appends the pages it touched to the WAL again: meta, journal, counters).
   * All or nothing: a throw or a killed process leaves the state before the unit (the journal entries stay
   * and the next update redoes them). SQLite has one connection per store, so the unit covers every call made
   * while it is open; callers keep it free of waits on anything but this store (`remote` runs `work` as it is:
   * a transaction held across a model call would block other processes' writers, and calls from other tasks
   * of this thread could join it). Inside a transaction already, `work` joins it.
   */
  async unitOfWork<T>(contextId: string, work: () => Promise<T>, options?: UnitOfWorkOptions): Promise<T> {
    // A read-only handle cannot BEGIN IMMEDIATE: its calls run as they are (a write among them fails alone).
    if (options?.read || options?.remote || this.db.inTransaction || this.db.readonly) return work();
    // SQLite has ONE writer lock for the whole file, and a unit holds it while the relation update computes
    // (kNN searches included). Other processes waiting on it poll (busy_timeout) and cannot queue: a writer
    // that runs long units back to back starves them into "database is locked" (test/api/concurrent-writers).
    // So only a small update takes the unit; a larger one keeps per-call transactions, whose gaps let others in.
    const pending = (this.run(() => this.statements.workStatus.get(contextId)) as { n: number }).n;
    if (pending + (options?.adds ?? 0) > SQLITE_UNIT_MAX_PENDING) return work();
    this.run(() => this.statements.begin.run());
    let out: T;
    try {
      out = await work();
      this.run(() => this.statements.commit.run());
      this.committed();
    } catch (error) {
      if (this.db.open && this.db.inTransaction) this.statements.rollback.run();
      // Caches filled from the unit's savepoints describe rows that are gone.
      this.lexical?.rolledBack();
      this.semanticCache.clear();
      throw error;
    }
    return out;
  }

  async close(): Promise<void> {
    // The checkpointer's connection first: this one stays the last, so closing it still checkpoints and
    // removes the WAL as before.
    await this.checkpointer?.close();
    if (this.db.open) this.db.close();
    this.vectorCache.clear();
    this.ann.close();
  }

  /**
   * Runs `read` with the read cache validated for it, both in ONE read transaction: the generation and the
   * rows read on a miss come from one snapshot, and the WAL read lock (most of a small statement's cost) is
   * taken once. Inside a caller's transaction `read` gets no cache (a unit of work may see rows its rollback
   * removes).
   */
  private withReadCache<T>(read: (cache: SqliteReadCache | undefined) => T): T {
    return this.run(() => {
      if (this.db.inTransaction) return read(undefined);
      return this.readTransaction(() => {
        this.readCache.validate(this.generationNow());
        return read(this.readCache);
      });
    });
  }

  readGeneration(): string | undefined {
    if (!this.db.open || this.db.inTransaction) return undefined;
    return this.generationNow();
  }

  private generationNow(): string {
    const { changes, version } = this.statements.writeGeneration.get() as {
      changes: number;
      version: number;
    };
    return `${changes}:${version}`;
  }

  private vectorVersion(contextId: string): number | undefined {
    const row = this.statements.vectorVersion.get(contextId) as { vector_version: number } | undefined;
    return row?.vector_version;
  }

  /** Runs a database call, mapping a closed handle and SQLite failures to STORE / INVALID_INPUT errors. */
  private run<T>(work: () => T): T {
    if (!this.db.open)
      throw new GraphmemixError('STORE', 'the store is closed', { location: { file: this.file } });
    try {
      return work();
    } catch (error) {
      throw asStoreError(error, this.file);
    }
  }
}

interface ViewRow {
  kind: ViewKind;
  key: string;
  text: string;
  uri: string | null;
}

interface LexicalRow {
  memoryId: string;
  kind: ViewKind;
  key: string;
  text: string;
}

interface VectorDbRow {
  memory_id: string;
  kind: ViewKind;
  key: string;
  vector: Buffer;
}

function prepareStatements(db: Database.Database) {
  const p = (sql: string) => lazyStatement(db, sql);
  // Rows as arrays, for the question path's edge reads (edgeRows turns them into EdgeRow).
  const raw = (sql: string) => lazyStatement(db, sql, true);
  // A read-only store of an older schema (not migrated) has no kept count: count the rows then.
  const kept = (db.pragma('table_info(contexts)') as { name: string }[]).some((c) => c.name === 'memories');
  const memoryCount = kept ? 'c.memories' : '(SELECT COUNT(*) FROM memories m WHERE m.context_id = c.id)';
  return {
    // Counts are kept on the context row and MAX(sequence) is one index probe: listing stays cheap at any size.
    listContexts: p(`SELECT c.id AS id, ${memoryCount} AS memories,
      (SELECT MAX(m.sequence) FROM memories m WHERE m.context_id = c.id) AS maxSequence
      FROM contexts c ORDER BY c.id`),
    // Keyset page over the contexts primary key (LIMIT -1: no limit).
    listContextPage: p(`SELECT c.id AS id, ${memoryCount} AS memories,
      (SELECT MAX(m.sequence) FROM memories m WHERE m.context_id = c.id) AS maxSequence
      FROM contexts c WHERE (? IS NULL OR c.id > ?) ORDER BY c.id LIMIT ?`),
    addCount: p('UPDATE contexts SET memories = memories + ? WHERE id = ?'),
    maxSequence: p('SELECT MAX(sequence) AS n FROM memories WHERE context_id = ?'),
    ensureContext: p('INSERT OR IGNORE INTO contexts (id) VALUES (?)'),
    vectorVersion: p('SELECT vector_version FROM contexts WHERE id = ?'),
    bumpVectorVersion: p('UPDATE contexts SET vector_version = vector_version + 1 WHERE id = ?'),
    getHash: p('SELECT content_hash FROM memories WHERE context_id = ? AND id = ?'),
    insertMemory: p(`INSERT INTO memories (context_id, id, sequence, kind, session_id, round_id, timestamp,
      content_hash, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    updateMemory: p(`UPDATE memories SET sequence = ?, kind = ?, session_id = ?, round_id = ?, timestamp = ?,
      content_hash = ?, record = ? WHERE context_id = ? AND id = ?`),
    deleteMemory: p('DELETE FROM memories WHERE context_id = ? AND id = ?'),
    insertVersion: p(`INSERT INTO memory_versions (context_id, memory_id, version, recorded_at, record)
      SELECT ?, ?, COALESCE(MAX(version), 0) + 1, ?, ? FROM memory_versions WHERE context_id = ? AND memory_id = ?`),
    listVersions: p(`SELECT version, record FROM memory_versions WHERE context_id = ? AND memory_id = ?
      ORDER BY version`),
    insertTag: p(
      'INSERT OR IGNORE INTO memory_tags (context_id, name, value, memory_id) VALUES (?, ?, ?, ?)',
    ),
    touchContext: p('UPDATE contexts SET last_write = ? WHERE id = ?'),
    contextRow: p('SELECT memories, last_write FROM contexts WHERE id = ?'),
    kindCounts: p('SELECT kind, n FROM kind_counts WHERE context_id = ? ORDER BY kind'),
    deleteContextKindCounts: p('DELETE FROM kind_counts WHERE context_id = ?'),
    deleteTags: p('DELETE FROM memory_tags WHERE context_id = ? AND memory_id = ?'),
    deleteContext: p('DELETE FROM contexts WHERE id = ?'),
    deleteContextQuestions: p('DELETE FROM questions WHERE context_id = ?'),
    getRecord: p('SELECT record FROM memories WHERE context_id = ? AND id = ?'),
    // This connection's row changes (committed or not) and other connections' commits: the read cache's key.
    writeGeneration: p('SELECT total_changes() AS changes, data_version AS version FROM pragma_data_version'),
    getRecords: p(
      'SELECT id, record FROM memories WHERE context_id = ? AND id IN (SELECT value FROM json_each(?))',
    ),
    getHashes: p(
      'SELECT id, content_hash FROM memories WHERE context_id = ? AND id IN (SELECT value FROM json_each(?))',
    ),
    listRecords: p(`SELECT record FROM memories WHERE context_id = @contextId
      AND (@after IS NULL OR sequence > @after OR (sequence = @after AND @afterId IS NOT NULL AND id > @afterId))
      ORDER BY sequence, id LIMIT @limit`),
    countMemories: p(`SELECT ${memoryCount} AS n FROM contexts c WHERE c.id = ?`),
    insertView: p(
      'INSERT INTO views (context_id, memory_id, position, kind, key, text, uri) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    deleteViews: p('DELETE FROM views WHERE context_id = ? AND memory_id = ?'),
    getViews: p(`SELECT memory_id, kind, key, text, uri FROM views
      WHERE context_id = ? AND memory_id IN (SELECT value FROM json_each(?)) ORDER BY memory_id, position`),
    lexicalDocuments: p(`SELECT memory_id AS memoryId, kind, key, text FROM views
      WHERE context_id = ? AND text != '' ORDER BY memory_id, position`),
    listEdges: p('SELECT a, b, types, strength, similarity FROM edges WHERE context_id = ?'),
    anyEdge: p('SELECT 1 FROM edges WHERE context_id = ? LIMIT 1'),
    deleteEdge: p('DELETE FROM edges WHERE context_id = ? AND a = ? AND b = ?'),
    getEdge: p(
      'SELECT a, b, types, strength, similarity FROM edges WHERE context_id = ? AND a = ? AND b = ?',
    ),
    upsertEdge: p(`INSERT INTO edges (context_id, a, b, types, strength, similarity) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (context_id, a, b) DO UPDATE SET types = excluded.types, strength = excluded.strength,
      similarity = excluded.similarity`),
    edgesOf: raw(`SELECT a, b, types, strength, similarity FROM edges
      WHERE context_id = ? AND a IN (SELECT value FROM json_each(?))
      UNION ALL SELECT a, b, types, strength, similarity FROM edges
      WHERE context_id = ? AND b IN (SELECT value FROM json_each(?))`),
    // a IN ids probes the primary key (context_id, a, b) once per id; b is checked against the same list.
    edgesAmong: raw(`SELECT a, b, types, strength, similarity FROM edges
      WHERE context_id = ? AND a IN (SELECT value FROM json_each(?)) AND b IN (SELECT value FROM json_each(?))`),
    countEdgeTypes: p('SELECT type, n FROM edge_counts WHERE context_id = ?'),
    deleteContextEdgeCounts: p('DELETE FROM edge_counts WHERE context_id = ?'),
    deleteContextSemanticDf: p('DELETE FROM semantic_df WHERE context_id = ?'),
    begin: p('BEGIN IMMEDIATE'),
    commit: p('COMMIT'),
    rollback: p('ROLLBACK'),
    dropUniqueSemanticTerms: p(`DELETE FROM semantic_df WHERE context_id = ? AND df <= 1 AND term IN
      (SELECT term FROM semantic_postings WHERE context_id = ? AND memory_id = ?)`),
    upsertQuestion: p(`INSERT INTO questions (context_id, id, question) VALUES (?, ?, ?)
      ON CONFLICT (context_id, id) DO UPDATE SET question = excluded.question`),
    listQuestions: p('SELECT question FROM questions WHERE context_id = ? ORDER BY rowid'),
    listAllQuestions: p('SELECT question FROM questions ORDER BY rowid'),
    spaceDims: p('SELECT dims FROM vectors WHERE context_id = ? AND space = ? LIMIT 1'),
    upsertVector: p(`INSERT INTO vectors (context_id, space, memory_id, kind, key, dims, vector, changed)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (context_id, space, memory_id, kind, key)
      DO UPDATE SET dims = excluded.dims, vector = excluded.vector, changed = excluded.changed`),
    deleteMemoryVectors: p('DELETE FROM vectors WHERE context_id = ? AND memory_id = ?'),
    listVectors: p(`SELECT memory_id, kind, key, vector FROM vectors WHERE context_id = ? AND space = ?
      ORDER BY memory_id, kind, key`),
    journal: p('INSERT INTO relation_journal (context_id, memory_id, before) VALUES (?, ?, ?)'),
    pendingWork: p(
      'SELECT seq, memory_id, before FROM relation_journal WHERE context_id = ? ORDER BY seq LIMIT ?',
    ),
    clearWork: p(
      'DELETE FROM relation_journal WHERE context_id = ? AND seq IN (SELECT value FROM json_each(?))',
    ),
    workStatus: p('SELECT COUNT(*) AS n, MAX(seq) AS last FROM relation_journal WHERE context_id = ?'),
    clearWorkThrough: p('DELETE FROM relation_journal WHERE context_id = ? AND seq <= ?'),
    deleteContextJournal: p('DELETE FROM relation_journal WHERE context_id = ?'),
    contextMemoryIds: p('SELECT id FROM memories WHERE context_id = ?'),
    getMeta: p('SELECT value FROM meta WHERE key = ?'),
    setMeta: p(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    deleteMeta: p('DELETE FROM meta WHERE key = ?'),
    listMetaKeys: p('SELECT key FROM meta WHERE key >= ? AND key < ? ORDER BY key'),
    listVectorSpaces: p('SELECT DISTINCT space FROM vectors WHERE context_id = ? ORDER BY space'),
  };
}

/** Whether the stored terms were made by this tokenizer (one meta row, read once per connection). */
function termsAreCurrent(db: Database.Database): boolean {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(TOKENIZER_VERSION_META) as
    | { value: string }
    | undefined;
  return row !== undefined && Number(JSON.parse(row.value)) === TOKENIZER_VERSION;
}

function recordedAtOf(record: string): string | null {
  const value = (JSON.parse(record) as MemoryRecord).recordedAt;
  return typeof value === 'string' ? value : null;
}

function cached<T>(cache: Map<string, Cached<T>>, key: string, version: number, build: () => T): T {
  const hit = cache.get(key);
  cache.delete(key);
  const entry = hit && hit.version === version ? hit : { version, value: build() };
  cache.set(key, entry);
  if (cache.size > CACHED_CONTEXTS) cache.delete(cache.keys().next().value!);
  return entry.value;
}

function toView(memoryId: string, row: ViewRow): MemoryView {
  const view: MemoryView = { memoryId, kind: row.kind, key: row.key, text: row.text };
  if (row.uri !== null) view.uri = row.uri;
  return view;
}

/**
 * Parsed `types` columns by their JSON text: a context has a handful of distinct type lists, and a question
 * reads hundreds of edges. Each edge gets its own copy (callers may mutate what they receive).
 */
const parsedTypes = new Map<string, readonly RelationType[]>();

function edgeTypes(json: string): RelationType[] {
  let types = parsedTypes.get(json);
  if (types === undefined) {
    types = JSON.parse(json) as RelationType[];
    // Bounded: a pathological store cannot grow it past a few hundred lists.
    if (parsedTypes.size < 512) parsedTypes.set(json, types);
  }
  return [...types];
}

function compareKeys(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Raw edge rows (a, b, types, strength, similarity) as EdgeRow objects. */
function edgeRows(rows: unknown[]): EdgeRow[] {
  return (rows as [string, string, string, number, number | null][]).map((row) => ({
    a: row[0],
    b: row[1],
    key: pairKey(row[0], row[1]),
    types: row[2],
    strength: row[3],
    similarity: row[4],
  }));
}

/** Each id's edges among `rows` (every edge touching one of `ids`), empty lists included. */
function edgeListsOf(ids: readonly string[], rows: readonly EdgeRow[]): Map<string, EdgeRow[]> {
  const lists = new Map(ids.map((id) => [id, [] as EdgeRow[]]));
  const seen = new Set<string>();
  for (const row of rows) {
    // UNION ALL yields an edge between two of the ids twice.
    if (seen.has(row.key)) continue;
    seen.add(row.key);
    lists.get(row.a)?.push(row);
    if (row.b !== row.a) lists.get(row.b)?.push(row);
  }
  return lists;
}

function toEdge(contextId: string, row: EdgeRow): MemoryEdge {
  const edge: MemoryEdge = {
    contextId,
    a: row.a,
    b: row.b,
    types: edgeTypes(row.types),
    strength: row.strength,
  };
  if (row.similarity !== null) edge.similarity = row.similarity;
  return edge;
}

function toVectorRow(row: VectorDbRow): VectorRow {
  // Copy: the blob's buffer may not be 4-byte aligned, and callers must not share memory with the driver.
  const bytes = new Uint8Array(row.vector.byteLength);
  bytes.set(row.vector);
  return { memoryId: row.memory_id, kind: row.kind, key: row.key, vector: new Float32Array(bytes.buffer) };
}

/** A non-empty database without our schema_version table is someone else's file: refuse to touch it. */
function assertGraphmemixFile(db: Database.Database, file: string): void {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
    name: string;
  }[];
  if (tables.length > 0 && !tables.some((table) => table.name === 'schema_version')) {
    throw new GraphmemixError('STORE', 'not a graphmemix store (no schema_version table)', {
      location: { file },
    });
  }
}

function asStoreError(error: unknown, file: string): unknown {
  if (error instanceof GraphmemixError) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT')) {
    return new GraphmemixError('INVALID_INPUT', `store constraint failed: ${(error as Error).message}`, {
      location: { file },
      cause: error,
    });
  }
  if (typeof code === 'string' && code.startsWith('SQLITE_')) {
    return new GraphmemixError('STORE', `store failure: ${(error as Error).message}`, {
      location: { file },
      cause: error,
    });
  }
  return error;
}
