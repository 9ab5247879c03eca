import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { RLS_ROLE } from './postgres-schema.ts';

/** A client inside one of our transactions (the only way store code reaches the database). */
export type Sql = pg.PoolClient;

/**
 * int8 and numeric as JS numbers (counts, sequences and journal seqs stay far below 2^53); everything else
 * keeps pg's defaults. Per pool (not pg.types.setTypeParser), so no other pg user in the process is affected.
 */
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === 20 || oid === 1700) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  }) as typeof pg.types.getTypeParser,
};

export function createPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, types: TYPES });
  // An idle client losing its server (a restart, a failover) must not crash the process: the pool drops it.
  pool.on('error', () => {});
  return pool;
}

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
  async scoped<T>(contextId: string, mode: 'read' | 'write', work: (sql: Sql) => Promise<T>): Promise<T> {
    assertContextId(contextId);
    const held = this.unitFor(contextId);
    if (held) return work(held.client);
    return this.transaction(scopedBeginSql(contextId, mode, this.switchRole), work);
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
    return this.scoped(contextId, 'write', async (client) => {
      const unit: Unit = { session: this, contextId, client, open: true };
      try {
        return await units.run(unit, work);
      } finally {
        // Work scheduled inside but finishing later (a stray promise) must not reach a released client.
        unit.open = false;
      }
    });
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
    if (held) return work(held.client);
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

  private async transaction<T>(begin: string, work: (sql: Sql) => Promise<T>): Promise<T> {
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
      await client.query(begin);
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch {
        broken = true; // the connection is gone: do not return it to the pool
      }
      throw asStoreError(error, this.where);
    } finally {
      client.release(broken);
    }
  }
}

/** Statement texts prepared per connection at most (dynamic texts beyond it run unnamed). */
const MAX_PREPARED = 400;
const statementNames = new Map<string, string>();
const PREPARING = Symbol('graphmemix.preparing');

/**
 * Makes a pooled client run every parameterised statement as a named prepared statement (once per
 * connection, by a hash of its text): with generic plans (settingsSql) the plan is made once per connection
 * instead of at every call. Planning was a large part of a small statement's time (a few ms for the
 * policy-expanded semantic reads, against well under 1 ms of execution). Texts are the store's own; the few
 * built at run time (filters, table names) are bounded, and MAX_PREPARED caps them regardless.
 */
function preparing(client: pg.PoolClient): void {
  const tagged = client as pg.PoolClient & { [PREPARING]?: true };
  if (tagged[PREPARING]) return;
  tagged[PREPARING] = true;
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (config: unknown, values?: unknown, ...rest: unknown[]) => {
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0 && rest.length === 0) {
      let name = statementNames.get(config);
      if (name === undefined && statementNames.size < MAX_PREPARED) {
        name = `gmx_${createHash('sha256').update(config).digest('hex').slice(0, 24)}`;
        statementNames.set(config, name);
      }
      if (name !== undefined) return query({ name, text: config, values });
    }
    return query(config, values, ...rest);
  };
}

/** A unit of work in progress (PostgresSession.unitOfWork). */
interface Unit {
  session: PostgresSession;
  contextId: string;
  client: pg.PoolClient;
  open: boolean;
}

const units = new AsyncLocalStorage<Unit>();

/**
 * The first round trip of a scoped transaction: isolation, settings, the context (SET LOCAL semantics) and,
 * for a write, the context's write lock. Exported for tests that plan statements exactly as the store does.
 */
export function scopedBeginSql(contextId: string, mode: 'read' | 'write', switchRole: boolean): string {
  const literal = escapeLiteral(contextId);
  const begin =
    mode === 'read'
      ? // Room for a search's hash aggregate over a common term's postings (the 4 MB default spills to disk).
        "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL work_mem = '32MB';"
      : 'BEGIN ISOLATION LEVEL READ COMMITTED;';
  const lock = mode === 'write' ? `, pg_advisory_xact_lock(${contextLockKey(literal)})` : '';
  return `${begin}${settingsSql(switchRole)} SELECT set_config('graphmemix.context_id', ${literal}, true)${lock};`;
}

/**
 * The role switch when needed, and generic plans for every statement. Per-context statistics mean little in
 * a shared table: a context written since the last ANALYZE is estimated at one row, and a custom plan then
 * walks the whole context where an index on (context, key) finds a few rows (findByKeys took ~1 s per call at
 * 1,000 memories, stalling a bulk ingest at ~16 memories/s: issue #11). A generic plan does not see the
 * context value and costs it at the average context size, so every context gets the same, indexed plan.
 */
function settingsSql(switchRole: boolean): string {
  return `${switchRole ? ` SET LOCAL ROLE ${RLS_ROLE};` : ''} SET LOCAL plan_cache_mode = force_generic_plan;`;
}

/** Key of a context's write lock: 64-bit hash of a namespaced id (a collision only serialises two contexts). */
function contextLockKey(literal: string): string {
  return `hashtextextended('graphmemix:context:' || ${literal}, 0)`;
}

/** A literal safe under any standard_conforming_strings setting (pg's escaping: E'...' when it holds \\). */
export function escapeLiteral(value: string): string {
  return pg.escapeLiteral(value);
}

function assertContextId(contextId: string): void {
  if (typeof contextId !== 'string' || contextId.length === 0 || contextId.includes('\u0000')) {
    throw new GraphmemixError('INVALID_INPUT', 'contextId must be a non-empty string without NUL', {
      location: { field: 'contextId' },
    });
  }
}

/** Maps driver failures: constraint and data errors are the caller's input, everything else is STORE. */
export function asStoreError(error: unknown, where: string): unknown {
  if (error instanceof GraphmemixError) return error;
  const code = (error as { code?: unknown }).code;
  const message = (error as Error).message ?? String(error);
  if (typeof code === 'string' && (code.startsWith('23') || code.startsWith('22'))) {
    return new GraphmemixError('INVALID_INPUT', `store constraint failed: ${message}`, {
      location: { file: where },
      cause: error,
    });
  }
  return new GraphmemixError('STORE', `store failure: ${message}`, {
    location: { file: where },
    cause: error,
  });
}

/** A URL without its password, for errors and traces. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable url)';
  }
}
