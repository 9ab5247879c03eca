import type Database from 'better-sqlite3';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { ForgetOptions, MemoryWrite, UnitOfWorkOptions, WriteOutcome } from './archive-store-spec.ts';
import { eventTimeKey } from './event-time-key.ts';
import { FreshMemoryRows } from './fresh-memory-rows.ts';
import { scopeTags } from './memory-scope-tags.ts';
import type { SemanticPostingsCache } from './semantic-postings-cache.ts';
import { BULK_MEMORY_WRITE_UNCHECKED_FROM, withoutForeignKeyChecks } from './sqlite-bulk-write-pragmas.ts';
import {
  FORGET_FIRST_STEP_ROWS,
  FORGET_MIN_STEP_ROWS,
  FORGET_STEP_MS,
  FORGET_STEP_ROWS,
  SqliteContextForget,
} from './sqlite-context-forget.ts';
import type { SqliteLexicalIndex } from './sqlite-lexical-index.ts';
import type { SqliteRelationKeys } from './sqlite-relation-keys.ts';
import type { SqliteStoreStatements } from './sqlite-store-statements.ts';
import type { SqliteVectors } from './sqlite-vectors.ts';
import { StepSizer } from './step-sizer.ts';
import { assertWrite } from './store-rules.ts';
import type { UsearchVectorIndexes } from './usearch-vector-index.ts';

/**
 * Largest relation update (journal entries, the unit's own adds included) that runs as ONE SQLite transaction
 * (`unitOfWork`). An add of this size updates its relations in tens of milliseconds on this machine (an add-1
 * ~10 ms); beyond it the write lock would be held for as long as the kNN searches of every newcomer take.
 */
export const SQLITE_UNIT_MAX_PENDING = 16;

/**
 * The SQLite store's write transactions: memory writes and deletes, each one transaction that keeps the lexical
 * index, the relation journal, the history and the kept counters with the rows; and the unit of work that
 * makes a small relation update's calls one transaction.
 */
export class SqliteMemoryWrites {
  /** writeMemories' queued rows of new memories (prepared on the first write: a read-only store never). */
  private freshRows: FreshMemoryRows | undefined;
  /** deleteContext's steps, prepared on the first forget. */
  private forget: SqliteContextForget | undefined;
  /** Whether the file has the forgetting table (migration 15; a read-only older file may not). */
  private hasForgetting: boolean | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly statements: SqliteStoreStatements,
    private readonly run: <T>(work: () => T) => T,
    /** Absent only for a read-only store of schema 1 (not migrated). */
    private readonly lexical: SqliteLexicalIndex | undefined,
    private readonly keys: SqliteRelationKeys,
    private readonly semanticCache: SemanticPostingsCache,
    private readonly ann: UsearchVectorIndexes,
    private readonly vectors: SqliteVectors,
    /** After a write transaction (or a unit) committed (the store's checkpointer watch). */
    private readonly committed: () => void,
    /** At the end of a forget: the WAL copied into the file and truncated (a delete's: SqliteStore.eraseDeleted). */
    private readonly truncateWal: () => Promise<true>,
    /** Rows per forget step, fixed (tests take small steps); absent: sized to FORGET_STEP_MS. */
    private readonly forgetStepRows?: number,
  ) {}

  async writeMemories(contextId: string, writes: MemoryWrite[]): Promise<WriteOutcome> {
    for (const write of writes) assertWrite(contextId, write);
    const s = this.statements;
    const lexical = this.lexical;
    this.freshRows ??= new FreshMemoryRows(this.db);
    const fresh = this.freshRows;
    // A bulk batch skips SQLite's parent lookups (~6 a memory): every child row it writes (views, keys, tags,
    // journal, history) is made in this transaction for a memory row it wrote just before, its context ensured
    // first, and it deletes no parent row, so no cascade is missed. Inside a unit of work the checks stay on.
    const unchecked = writes.length >= BULK_MEMORY_WRITE_UNCHECKED_FROM;
    return this.run(() => {
      const transaction = this.db.transaction(() => {
        lexical?.begin();
        fresh.clear();
        const outcome: WriteOutcome = { inserted: [], updated: [], unchanged: [] };
        // A context being forgotten takes no new rows (checked in the transaction, so no write slips in
        // between two forget steps, whichever process writes).
        if (s.forgettingMark.get(contextId) !== undefined) {
          throw new GraphmemixError(
            'CONFLICT',
            `context ${contextId} is being forgotten; nothing was written`,
            {
              details: { contextId, reason: 'context_being_forgotten' },
            },
          );
        }
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
            record.timestamp === undefined ? null : eventTimeKey(record.timestamp),
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
          // A word only the replaced version held (df 1 in the frozen snapshot) goes too, as in a delete:
          // otherwise it outlived a later delete of the memory (round 53). df 1 is also what the snapshot
          // assumes for a word it never saw, so no score changes.
          s.dropUniqueSemanticTerms.run(contextId, contextId, record.id);
          s.deleteTags.run(contextId, record.id);
          s.updateMemory.run(...columns, contextId, record.id);
          s.deleteViews.run(contextId, record.id);
          s.deleteMemoryVectors.run(contextId, record.id);
          lexical?.removeMemory(contextId, record.id);
          outcome.updated.push(record.id);
          this.keys.replace(contextId, record.id, record.sequence, keys ?? []);
          for (const tag of scopeTags(record)) {
            s.insertTag.run(contextId, tag.name, tag.value, record.sequence, record.id);
          }
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
      });
      const result = unchecked
        ? withoutForeignKeyChecks(this.db, () => transaction.immediate())
        : transaction.immediate();
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
    // No WAL truncation here: the journal row just written holds the record until the relation update
    // consumes it, and a truncation now copied that row into the file, where it stayed after the delete
    // returned. The facade erases once the update is done (SqliteStore.eraseDeleted).
    return removed;
  }

  /**
   * Forgets a context in steps (SqliteContextForget): a mark, then transactions of rows sized to take about
   * FORGET_STEP_MS (at most FORGET_STEP_ROWS), each run through `options.schedule` (the library's write queue,
   * so other users' writes go between steps) with a turn of the event loop between them; the last step
   * removes the context row and the mark.
   * Resumes a forget a killed process left. The WAL is checkpointed and truncated at the end (forget means
   * forget: no page of the context stays in it).
   */
  async deleteContext(contextId: string, options: ForgetOptions = {}): Promise<boolean> {
    const schedule = options.schedule ?? (<T>(work: () => Promise<T>) => work());
    this.forget ??= new SqliteContextForget(this.db, this.lexical);
    const forget = this.forget;
    const rows =
      this.forgetStepRows === undefined
        ? new StepSizer(FORGET_STEP_MS, FORGET_MIN_STEP_ROWS, FORGET_STEP_ROWS, FORGET_FIRST_STEP_ROWS)
        : new StepSizer(FORGET_STEP_MS, this.forgetStepRows, this.forgetStepRows);
    let annFiles: string[] = [];
    const started = await schedule(async () => {
      if (!this.run(() => forget.begin(contextId, new Date().toISOString()))) return false;
      annFiles = this.run(() => this.ann.filesOf(contextId));
      return true;
    });
    if (!started) return false;
    // Outside the schedule: what it reads (the context's media, in pages) may take a while, and nothing of the
    // context changes meanwhile (its writes are refused, no step has run).
    await options.started?.();
    for (;;) {
      const done = await schedule(async () => {
        const at = performance.now();
        const budget = rows.next;
        this.lexical?.begin();
        const finished = this.run(() => forget.step(contextId, budget));
        // Cached search pages and postings of this connection describe rows that are gone.
        this.lexical?.commit();
        this.semanticCache.clearContext(contextId);
        this.vectors.forgetContext(contextId);
        this.committed();
        rows.took(budget, performance.now() - at);
        return finished;
      });
      if (done) break;
      // No maintenance pause here (the compaction's steps take one): a forget's deletes fill the WAL several
      // times faster, and waiting for each copy made a 100k forget ~45% longer ("Round 27").
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.ann.forgetFiles(annFiles);
    // Scheduled like a step: a TRUNCATE checkpoint that waits for readers while another write of this process
    // waits for it would hang both (seen with adds between the steps of a 100k forget).
    return schedule(() => this.truncateWal());
  }

  /** True while the context is marked as being forgotten (false on a file from before migration 15). */
  isForgetting(contextId: string): boolean {
    return (
      this.forgettingTable() && this.run(() => this.statements.forgettingMark.get(contextId)) !== undefined
    );
  }

  /** The contexts marked as being forgotten, oldest mark first (none on a file from before migration 15). */
  forgettingContexts(): string[] {
    if (!this.forgettingTable()) return [];
    return this.run(() =>
      (this.statements.forgettingContexts.all() as Array<{ context_id: string }>).map(
        (row) => row.context_id,
      ),
    );
  }

  private forgettingTable(): boolean {
    this.hasForgetting ??=
      this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'forgetting'").get() !==
      undefined;
    return this.hasForgetting;
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
      // A vector index caught up inside the unit holds its rows (and its version may be reused).
      this.vectors.clear();
      throw error;
    }
    return out;
  }
}

function recordedAtOf(record: string): string | null {
  const value = (JSON.parse(record) as MemoryRecord).recordedAt;
  return typeof value === 'string' ? value : null;
}
