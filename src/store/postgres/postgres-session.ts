import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { pendingLiteralPlans } from './postgres-literal-plans.ts';
import { endPipeline, preparing, startPipeline } from './postgres-prepared-client.ts';
import {
  asStoreError,
  assertContextId,
  escapeLiteral,
  scopedBeginSql,
  settingsSql,
} from './postgres-transaction-sql.ts';
import { UnitEdges } from './postgres-unit-edges.ts';
import { LearnedMetaKeys, parsePrefetch, prefetchSql, type UnitPrefetch } from './postgres-unit-prefetch.ts';

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
    const held = this.unitFor(contextId);
    if (held) {
      if (mode === 'write' && !options?.keepsPrefetch) held.prefetch?.invalidateContext();
      if (mode === 'write' && !options?.keepsEdges) held.edges = undefined;
      const first = options?.first === undefined ? undefined : await held.client.query(options.first);
      return work(held.client, { first, defer: (text) => held.deferred.push(text) });
    }
    const deferred: string[] = [];
    const begin = scopedBeginSql(contextId, mode, this.switchRole);
    return this.transaction(
      options?.first === undefined ? begin : `${begin} ${options.first};`,
      (sql, began) =>
        work(sql, {
          first: options?.first === undefined ? undefined : began.at(-1),
          defer: (text) => deferred.push(text),
        }),
      { commit: () => [...deferred, 'COMMIT'].join('; ') },
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
    const held = this.unitFor(contextId);
    if (held) return (await held.client.query<R>(text)).rows;
    const results = await this.transaction(
      `${scopedBeginSql(contextId, 'read', this.switchRole)} ${text}; COMMIT;`,
      async (_sql, began) => began,
      { committed: true },
    );
    // The simple query's results: the begin's statements, the read, then COMMIT.
    return (results.at(-2) as pg.QueryResult<R>).rows;
  }

  /** What the unit of work of `contextId` the caller runs in read ahead (undefined outside one). */
  prefetchFor(contextId: string): UnitPrefetch | undefined {
    return this.unitFor(contextId)?.prefetch;
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

  /** The unit of work the caller runs in, whatever its context (global meta calls join it). */
  currentUnit(): { contextId: string; prefetch?: UnitPrefetch } | undefined {
    return this.unitFor(undefined);
  }

  /**
   * Runs `work` as ONE write transaction of `contextId`: every scoped call of that context and every global
   * call made inside it (through this session, in work's async context) joins it instead of opening its
   * own. An incremental relation update is some forty store calls; as forty transactions each paid a BEGIN
   * and a COMMIT round trip and re-took the context lock. The unit holds the lock throughout, so no other
   * writer of the context interleaves; a failure rolls all of it back (the relation journal stays, and the
   * next update redoes it). Calls for other contexts and cross-context reads keep their own transactions.
   */
  async unitOfWork<T>(contextId: string, work: () => Promise<T>): Promise<T> {
    if (this.unitFor(contextId)) return work();
    assertContextId(contextId);
    const metaKeys = this.learnedMeta.of(contextId);
    // The unit's first round trip also reads ahead what its work reads first (UnitPrefetch).
    const begin = `${scopedBeginSql(contextId, 'write', this.switchRole)} ${prefetchSql(escapeLiteral(contextId), metaKeys, escapeLiteral)};`;
    let unit: Unit | undefined;
    return this.transaction(
      begin,
      async (client, began) => {
        const row = began.at(-1)?.rows[0];
        const held: Unit = {
          session: this,
          contextId,
          client,
          open: true,
          deferred: [],
          deferredMeta: new Map(),
        };
        unit = held;
        if (row) held.prefetch = parsePrefetch(row, metaKeys);
        // Deferred writes (deferInUnit) go out, in order, before the unit's next statement.
        const query = client.query;
        (client as { query: unknown }).query = (...args: unknown[]) => {
          const call = () => (query as (...a: unknown[]) => unknown).apply(client, args);
          if (held.deferred.length === 0) return call();
          return (query as (text: string) => Promise<unknown>)
            .call(client, held.deferred.splice(0).join('; '))
            .then(call);
        };
        try {
          return await units.run(held, work);
        } finally {
          // Work scheduled inside but finishing later (a stray promise) must not reach a released client.
          held.open = false;
          client.query = query;
        }
      },
      // Writes still deferred at the end ride with COMMIT: the unit's last statements cost no round trip.
      {
        commit: () => {
          const meta = [...(unit?.deferredMeta.values() ?? [])];
          return [...(unit?.deferred.splice(0) ?? []), ...meta, 'COMMIT'].join('; ');
        },
      },
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
    unit.deferred.push(text);
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
    return this.unitFor(contextId);
  }

  private unitFor(contextId: string | undefined): Unit | undefined {
    const unit = units.getStore();
    if (!unit?.open || unit.session !== this) return undefined;
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

  /** Global tables without a context (meta): a plain transaction, still under the RLS role. */
  async global<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    const held = this.unitFor(undefined);
    if (held) {
      // Queued meta writes go out before this meta statement (with the other queued writes, in order).
      held.deferred.push(...held.deferredMeta.values());
      held.deferredMeta.clear();
      return work(held.client);
    }
    return this.transaction(`BEGIN;${settingsSql(this.switchRole)}`, work);
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
    work: (sql: Sql, began: pg.QueryResult[]) => Promise<T>,
    /** The begin text ends with its own COMMIT (scopedOne); or the text that commits (default COMMIT). */
    options?: { committed?: boolean; commit?: () => string },
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
      let began: pg.QueryResult | pg.QueryResult[];
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
        result = await work(client, Array.isArray(began) ? began : [began]);
      } finally {
        endPipeline(client);
      }
      if (!options?.committed) await client.query(options?.commit?.() ?? 'COMMIT');
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

/** A unit of work in progress (PostgresSession.unitOfWork). */
interface Unit {
  session: PostgresSession;
  contextId: string;
  client: pg.PoolClient;
  open: boolean;
  prefetch?: UnitPrefetch;
  /** Stored edges read in the unit (changeEdges skips its read for pairs that touch them). */
  edges?: UnitEdges | undefined;
  /** Writes queued by deferInUnit, not yet sent. */
  deferred: string[];
  /** Meta writes queued by deferMetaInUnit, by key (the last write of a key wins). */
  deferredMeta: Map<string, string>;
}

const units = new AsyncLocalStorage<Unit>();
