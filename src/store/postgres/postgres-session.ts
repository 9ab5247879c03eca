import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { pendingLiteralPlans } from './postgres-literal-plans.ts';
import { endPipeline, joiningPipeline, preparing, startPipeline } from './postgres-prepared-client.ts';
import {
  asStoreError,
  assertContextId,
  escapeLiteral,
  QUESTION_STATEMENT_TIMEOUT_SQL,
  scopedBeginSql,
  settingsSql,
} from './postgres-transaction-sql.ts';
import { UnitEdges } from './postgres-unit-edges.ts';
import { UnitOfWork } from './postgres-unit-of-work.ts';
import {
  LearnedMetaKeys,
  parsePrefetch,
  parseReadAhead,
  prefetchSql,
  readAheadSql,
  type UnitPrefetch,
} from './postgres-unit-prefetch.ts';

export {
  asStoreError,
  createPool,
  escapeLiteral,
  redactUrl,
  scopedBeginSql,
} from './postgres-transaction-sql.ts';

/** A client inside one of our transactions (the only way store code reaches the database). */
export type Sql = pg.PoolClient;

/**
 * Transactions of the PostgreSQL store. Every operation is ONE transaction that first sets
 * `graphmemix.context_id` with SET LOCAL semantics (set_config(..., true)); the row-level security policies
 * (postgres-schema.ts) then admit that context's rows only. When the login role would bypass RLS (a
 * superuser or BYPASSRLS role), the transaction also does SET LOCAL ROLE graphmemix_rls, a role without
 * that privilege, so the policies bind whoever connects. Writes take a transaction-scoped advisory lock per
 * context: concurrent writers of one context (any number of processes) are serialised, counters and the
 * relation journal stay exact, and two writers of different contexts never wait on each other.
 */
export class PostgresSession {
  private closed = false;
  /** Meta keys units of each context read (the unit's read-ahead fetches them with its BEGIN). */
  readonly learnedMeta = new LearnedMetaKeys();

  constructor(
    readonly pool: pg.Pool,
    /** SET LOCAL ROLE ... needed (login role bypasses RLS). */
    private readonly switchRole: boolean,
    private readonly where: string,
  ) {}

  /**
   * A transaction that sees the rows of `contextId` only; `write` also takes the context's write lock. Inside
   * a unit of work of the same context (`unitOfWork`) it is that unit's transaction instead.
   */
  async scoped<T>(
    contextId: string,
    mode: 'read' | 'write',
    work: (sql: Sql, tx: ScopedTransaction) => Promise<T>,
    options?: {
      /** A write inside a unit that changes none of what the unit read ahead (UnitPrefetch): edges only. */
      keepsPrefetch?: boolean;
      /** A write inside a unit that keeps the unit's edge knowledge current itself (UnitEdges): edge changes. */
      keepsEdges?: boolean;
      /**
       * The transaction's first statement (no parameters: literals escaped by the caller), sent with its
       * BEGIN in one round trip; its result is `tx.first`. Not prepared: keep it to primary-key reads.
       */
      first?: string;
    },
  ): Promise<T> {
    assertContextId(contextId);
    const held = this.unitFor(contextId, mode);
    if (held) {
      if (mode === 'write' && !options?.keepsPrefetch) held.invalidatePrefetch();
      if (mode === 'write' && !options?.keepsEdges) held.edges = undefined;
      // With what the unit holds back (its queued writes, a lazy unit's BEGIN): one round trip.
      const first = options?.first === undefined ? undefined : await held.send(options.first);
      return work(held.client, { first, defer: (text) => held.defer(text) });
    }
    const deferred: string[] = [];
    const begin = scopedBeginSql(contextId, mode, this.switchRole);
    return this.transaction(
      options?.first === undefined ? begin : `${begin} ${options.first};`,
      (sql, began) =>
        work(sql, {
          first: options?.first === undefined ? undefined : began?.at(-1),
          defer: (text) => deferred.push(text),
        }),
      { commit: () => ({ text: [...deferred, 'COMMIT'].join('; ') }) },
    );
  }

  /**
   * A read of ONE statement, outside a unit of work, as ONE round trip: the transaction's begin, the statement
   * and COMMIT in one simple query (the scoped path is three: BEGIN, the statement, COMMIT). `statement` gets
   * the escaped context literal; it must take no parameters (it is not prepared: keep it to primary-key reads,
   * which plan the same with the value). Inside a unit of the context it runs in the unit.
   */
  async scopedOne<R extends pg.QueryResultRow>(
    contextId: string,
    statement: (literal: string) => string,
  ): Promise<R[]> {
    assertContextId(contextId);
    const text = statement(escapeLiteral(contextId));
    const held = this.unitFor(contextId, 'read');
    if (held) return (await held.send(text)).rows as R[];
    const results = await this.transaction(
      `${scopedBeginSql(contextId, 'read', this.switchRole)} ${text}; COMMIT;`,
      async (_sql, began) => began,
      { committed: true },
    );
    // The simple query's results: the begin's statements, the read, then COMMIT.
    return (results!.at(-2) as pg.QueryResult<R>).rows;
  }

  /**
   * Inside a unit of work of `contextId`, a read of ONE statement (like scopedOne) whose result the caller
   * collects later: it is sent with the unit's next statement or its COMMIT (UnitOfWork.queueRead), so it
   * costs no round trip of its own. undefined outside such a unit (the caller reads as usual).
   */
  readLater<R extends pg.QueryResultRow>(
    contextId: string,
    statement: (literal: string) => string,
  ): Promise<R[]> | undefined {
    assertContextId(contextId);
    const held = this.unitFor(contextId, 'read');
    if (!held) return undefined;
    return held.queueRead(statement(escapeLiteral(contextId))).then((result) => result.rows as R[]);
  }

  /**
   * What the unit of work of `contextId` the caller runs in read ahead (undefined outside one). Synchronous:
   * for the unit's own writes that keep it current; readers use `readAhead`.
   */
  prefetchFor(contextId: string): UnitPrefetch | undefined {
    return this.unitFor(contextId)?.prefetch;
  }

  /**
   * prefetchFor for a reader: a unit begun before its records' write (`unitOfWork(..., { lazy })`) reads
   * ahead here, at its first read, with the statements it holds back (the write's counters): one round trip,
   * after the write, so the read-ahead includes it.
   */
  async readAhead(contextId: string): Promise<UnitPrefetch | undefined> {
    const unit = this.unitFor(contextId);
    if (!unit) return undefined;
    if (unit.prefetchDue === 'due') {
      const keys = this.learnedMeta.of(contextId);
      // The read-ahead reads meta: meta writes queued so far go first.
      unit.releaseMeta();
      const changes = unit.changes;
      unit.prefetchDue = unit
        .send(prefetchSql(escapeLiteral(contextId), keys, escapeLiteral))
        .then((result) => {
          const read = parsePrefetch(result.rows[0]!, keys);
          // A write of the unit issued while it was in flight: the read-ahead may miss it (readers read then).
          if (unit.changes === changes) unit.prefetch = read;
          return read;
        });
    }
    if (unit.prefetchDue !== undefined) await unit.prefetchDue;
    return unit.prefetch;
  }

  /**
   * The stored edges the unit of work of `contextId` the caller runs in has read (undefined outside one);
   * scoped writes other than edge changes drop it.
   */
  unitEdges(contextId: string): UnitEdges | undefined {
    const unit = this.unitFor(contextId);
    if (!unit) return undefined;
    unit.edges ??= new UnitEdges();
    return unit.edges;
  }

  /**
   * Runs `write`, an edge write of `contextId`, after the edge writes its unit of work issued before it have
   * finished (outside a unit: at once, its own transaction under the context's lock). A unit's calls may run
   * concurrently (updateRelations runs its two updaters together) and an edge write computes whole rows from
   * the stored ones (UnitEdges, or a read): two at once could each miss the other's change.
   */
  serialEdgeWrite<T>(contextId: string, write: () => Promise<T>): Promise<T> {
    const unit = this.unitFor(contextId);
    if (!unit) return write();
    // None running: at once, so its statements keep their place among the caller's (a read issued after it
    // sees it).
    const run = unit.edgeWritesRunning > 0 ? unit.edgeWrites.then(write) : write();
    unit.edgeWritesRunning++;
    unit.edgeWrites = run
      .catch(() => {})
      .then(() => {
        unit.edgeWritesRunning--;
      });
    return run;
  }

  /** The unit of work the caller runs in, whatever its context (global meta calls join it). */
  currentUnit(): { contextId: string; prefetch?: UnitPrefetch } | undefined {
    return this.unitFor(undefined);
  }

  /** readAhead for the unit the caller runs in, whatever its context (global meta reads). */
  async currentReadAhead(): Promise<UnitPrefetch | undefined> {
    const unit = this.unitFor(undefined);
    return unit ? this.readAhead(unit.contextId) : undefined;
  }

  /**
   * Runs `work` as ONE write transaction of `contextId`: every scoped call of that context and every global
   * call made inside it (through this session, in work's async context) joins it instead of opening its
   * own. An incremental relation update is some forty store calls; as forty transactions each paid a BEGIN
   * and a COMMIT round trip and re-took the context lock. The unit holds the lock throughout, so no other
   * writer of the context interleaves; a failure rolls all of it back (the relation journal stays, and the
   * next update redoes it). Calls for other contexts and cross-context reads keep their own transactions.
   */
  async unitOfWork<T>(
    contextId: string,
    work: () => Promise<T>,
    options?: {
      /**
       * `work` starts with a write (an add's records): BEGIN waits for the unit's first statement (one round
       * trip for both) and the read-ahead for its first read (readAhead: after the write, so it includes it).
       */
      lazy?: boolean;
    },
  ): Promise<T> {
    if (this.unitFor(contextId)) return work();
    assertContextId(contextId);
    const lazy = options?.lazy === true;
    const metaKeys = this.learnedMeta.of(contextId);
    // The unit's first round trip also reads ahead what its work reads first (UnitPrefetch).
    const beginSql = scopedBeginSql(contextId, 'write', this.switchRole);
    const begin = lazy
      ? beginSql
      : `${beginSql} ${prefetchSql(escapeLiteral(contextId), metaKeys, escapeLiteral)};`;
    return this.runUnit(contextId, begin, { lazy, readOnly: false }, work, (held, began) => {
      if (lazy) held.prefetchDue = 'due';
      else {
        const row = began?.at(-1)?.rows[0];
        if (row) held.prefetch = parsePrefetch(row, metaKeys);
      }
    });
  }

  /**
   * Runs `work`'s reads of `contextId` (and global meta reads) in ONE read-only REPEATABLE READ transaction:
   * one snapshot and one BEGIN/COMMIT for a question's reads instead of a transaction each (each paid the
   * begin's settings and two round trips). Writes inside it, and other contexts, keep their own transactions;
   * inside a unit of work of the context it joins that unit (its reads see the unit's writes).
   */
  async readUnit<T>(contextId: string, work: () => Promise<T>): Promise<T> {
    if (this.unitFor(contextId, 'read')) return work();
    assertContextId(contextId);
    // The read-ahead (generation, meta keys) rides with the BEGIN: no round trip of its own.
    const metaKeys = this.learnedMeta.of(contextId);
    const begin = `${scopedBeginSql(contextId, 'read', this.switchRole)}${QUESTION_STATEMENT_TIMEOUT_SQL} ${readAheadSql(escapeLiteral(contextId), metaKeys, escapeLiteral)};`;
    return this.runUnit(contextId, begin, { lazy: true, readOnly: true }, work, (held, began) => {
      const take = (results: pg.QueryResult[]) => {
        const row = results.at(-1)?.rows?.[0];
        if (row) held.prefetch = parseReadAhead(row, metaKeys);
      };
      if (began) take(began);
      else held.onBegin = take;
    });
  }

  /**
   * The read generation of `contextId` in the read unit the caller runs in (undefined outside one, before
   * its BEGIN went out, or when the context does not exist): ArchiveStore.readGeneration.
   */
  readGeneration(contextId: string): string | undefined {
    const unit = this.unitFor(contextId, 'read');
    return unit?.readOnly ? unit.prefetch?.generation : undefined;
  }

  /** The read unit the caller runs in (any context), or undefined. */
  currentReadUnit(): { contextId: string; prefetch?: UnitPrefetch } | undefined {
    const unit = this.unitFor(undefined, 'read');
    return unit?.readOnly ? unit : undefined;
  }

  /** One transaction for the calls of `work` (unitOfWork, readUnit): the unit joined through `units`. */
  private async runUnit<T>(
    contextId: string,
    begin: string,
    options: { lazy: boolean; readOnly: boolean },
    work: () => Promise<T>,
    setup: (held: UnitOfWork, began: pg.QueryResult[] | undefined) => void,
  ): Promise<T> {
    let unit: UnitOfWork | undefined;
    return this.transaction(
      begin,
      async (client, began) => {
        // Deferred statements go out, in order, with or before the unit's next statement.
        const query = client.query;
        const raw = (text: string) => (query as (text: string) => Promise<unknown>).call(client, text);
        const held = new UnitOfWork(this, contextId, client, raw, began === undefined ? begin : undefined);
        held.readOnly = options.readOnly;
        unit = held;
        setup(held, began);
        (client as { query: unknown }).query = (...args: unknown[]) => {
          const call = () => (query as (...a: unknown[]) => unknown).apply(client, args);
          if (!held.waiting()) return call();
          // A statement that joins the pipeline takes what waits in front of its batch: no round trip of its own.
          const pipeline = joiningPipeline(client, args);
          const lead = pipeline ? held.take() : undefined;
          if (pipeline && lead) {
            pipeline.prefix(lead);
            return call();
          }
          return held.send().then(call);
        };
        try {
          return await units.run(held, work);
        } catch (error) {
          held.abandon(error);
          throw error;
        } finally {
          // Work scheduled inside but finishing later (a stray promise) must not reach a released client.
          held.open = false;
          client.query = query;
        }
      },
      // What the unit still holds back rides with COMMIT: the unit's last statements cost no round trip.
      { lazy: options.lazy, commit: () => unit?.commitText() ?? { text: 'COMMIT' } },
    );
  }

  /**
   * Inside a unit of work of `contextId` (undefined: any unit, for global meta rows), queues a write whose
   * result nobody reads: it is sent before the unit's next statement, or with its COMMIT (an add-1's update
   * ends with the journal entries' and the in-flight mark's deletes). `text` takes no parameters (literals
   * escaped by the caller). Returns false outside a unit: the caller writes as usual.
   */
  deferInUnit(contextId: string | undefined, text: string): boolean {
    const unit = this.unitFor(contextId);
    if (!unit) return false;
    unit.defer(text);
    return true;
  }

  /**
   * deferInUnit for a write of one global `meta` row: no context statement reads meta, so it waits for the
   * unit's next meta statement (`global`) or its COMMIT, and a later write of the same key replaces it (an
   * update's in-flight mark, set at its start and removed at its end, is then one statement at COMMIT).
   */
  deferMetaInUnit(key: string, text: string): boolean {
    const unit = this.unitFor(undefined);
    if (!unit) return false;
    unit.changes++;
    unit.deferredMeta.delete(key);
    unit.deferredMeta.set(key, text);
    return true;
  }

  /** Whether the caller runs inside a unit of work of `contextId` (its reads see uncommitted writes). */
  inUnitOfWork(contextId: string): boolean {
    return this.unitFor(contextId) !== undefined;
  }

  /**
   * The unit of work of `contextId` the caller runs in, as an opaque token (undefined outside one): reads
   * coalesced into one statement must come from the same transaction.
   */
  unitToken(contextId: string): object | undefined {
    return this.unitFor(contextId, 'read');
  }

  /** `access` 'write' (default): not a read unit (readUnit), whose transaction is read-only. */
  private unitFor(contextId: string | undefined, access: 'read' | 'write' = 'write'): UnitOfWork | undefined {
    const unit = units.getStore();
    if (!unit?.open || unit.session !== this || (access === 'write' && unit.readOnly)) return undefined;
    return contextId === undefined || unit.contextId === contextId ? unit : undefined;
  }

  /**
   * The explicit cross-context path (listContexts, listQuestions() without a context, integrityCheck): a
   * read-only transaction with `graphmemix.all_contexts` on. Nothing else in the store uses it.
   */
  async allContexts<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    return this.transaction(
      `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;${settingsSql(this.switchRole)} SELECT set_config('graphmemix.all_contexts', 'on', true);`,
      work,
    );
  }

  /** A read of global tables (meta): inside any unit of work (a read unit too) it runs in the unit. */
  async globalRead<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    const held = this.unitFor(undefined, 'read');
    return held?.readOnly ? work(held.client) : this.global(work);
  }

  /** Global tables without a context (meta): a plain transaction, still under the RLS role. */
  async global<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    const held = this.unitFor(undefined);
    if (held) {
      // Queued meta writes go out before this meta statement (with the other queued writes, in order).
      held.releaseMeta();
      return work(held.client);
    }
    return this.transaction(`BEGIN;${settingsSql(this.switchRole)}`, work);
  }

  /**
   * ANALYZE of the tables whose rows changed since their last analyze by more than autovacuum's own rule
   * (50 + 10% of the live rows), now rather than when autovacuum gets to them (the store's
   * optimizeLexicalIndex, after a bulk import or a compaction). Runs as the login role, outside any
   * transaction and RLS: ANALYZE needs the tables' owner (another role gets a warning, nothing changes).
   */
  async analyzeChanged(): Promise<boolean> {
    try {
      const stale = await this.pool.query<{ name: string }>(
        `SELECT quote_ident(relname) AS name FROM pg_stat_user_tables
         WHERE schemaname = current_schema() AND n_mod_since_analyze > 50 + 0.1 * n_live_tup ORDER BY relname`,
      );
      if (stale.rows.length === 0) return false;
      await this.pool.query(`ANALYZE ${stale.rows.map((row) => row.name).join(', ')}`);
      return true;
    } catch (error) {
      throw asStoreError(error, this.where);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private async transaction<T>(
    begin: string,
    /** `began` is undefined when the begin was left to the work (`lazy`). */
    work: (sql: Sql, began: pg.QueryResult[] | undefined) => Promise<T>,
    options?: {
      /** The begin text ends with its own COMMIT (scopedOne). */
      committed?: boolean;
      /** The text that commits (default COMMIT), told how its simple query ended. */
      commit?: () => { text: string; settle?: (out: unknown) => void; fail?: (error: unknown) => void };
      /** The work sends the begin with its first statement (a connection with PREPAREs to send excepted). */
      lazy?: boolean;
    },
  ): Promise<T> {
    if (this.closed) {
      throw new GraphmemixError('STORE', 'the store is closed', { location: { file: this.where } });
    }
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw asStoreError(error, this.where);
    }
    let broken = false;
    try {
      preparing(client);
      // A fresh connection prepares the literal statements in its first transaction's first round trip (none
      // of their own); if that round trip fails, which PREPAREs ran is unknown: the connection is dropped.
      const plans = pendingLiteralPlans(client);
      let began: pg.QueryResult | pg.QueryResult[] | undefined;
      if (options?.lazy && plans.sql === '') began = undefined;
      else
        try {
          // After the BEGIN statement (which sets the isolation level: nothing may run before it).
          const at = begin.indexOf(';') + 1;
          const text = plans.sql === '' ? begin : `${begin.slice(0, at)} ${plans.sql}${begin.slice(at)}`;
          began = (await client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
        } catch (error) {
          if (plans.sql !== '') broken = true;
          throw error;
        }
      plans.done();
      // Statements the work issues together share a round trip (StatementPipeline).
      startPipeline(client);
      let result: T;
      try {
        result = await work(client, began === undefined || Array.isArray(began) ? began : [began]);
      } finally {
        endPipeline(client);
      }
      if (!options?.committed) {
        const commit = options?.commit?.() ?? { text: 'COMMIT' };
        let out: unknown;
        try {
          out = await client.query(commit.text);
        } catch (error) {
          commit.fail?.(error);
          throw error;
        }
        commit.settle?.(out);
      }
      return result;
    } catch (error) {
      try {
        if (!broken) await client.query('ROLLBACK');
      } catch {
        broken = true; // the connection is gone: do not return it to the pool
      }
      throw asStoreError(error, this.where);
    } finally {
      client.release(broken);
    }
  }
}

/** What a scoped transaction's work gets beside its client (PostgresSession.scoped). */
export interface ScopedTransaction {
  /** The result of `options.first`, when given. */
  first: pg.QueryResult | undefined;
  /**
   * Queues a write whose result nobody reads (no parameters: literals escaped by the caller); it is sent
   * with the COMMIT (or before the unit's next statement, inside a unit of work): no round trip of its own.
   * Statements of the work that follow do not see it: only for the work's last writes.
   */
  defer(text: string): void;
}

const units = new AsyncLocalStorage<UnitOfWork>();
