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

  /** A transaction that sees the rows of `contextId` only; `write` also takes the context's write lock. */
  async scoped<T>(contextId: string, mode: 'read' | 'write', work: (sql: Sql) => Promise<T>): Promise<T> {
    assertContextId(contextId);
    const literal = escapeLiteral(contextId);
    const begin =
      mode === 'read'
        ? // Room for a search's hash aggregate over a common term's postings (the 4 MB default spills to disk).
          "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL work_mem = '32MB';"
        : 'BEGIN ISOLATION LEVEL READ COMMITTED;';
    const lock = mode === 'write' ? `, pg_advisory_xact_lock(${contextLockKey(literal)})` : '';
    return this.transaction(
      `${begin}${this.roleSql()} SELECT set_config('graphmemix.context_id', ${literal}, true)${lock};`,
      work,
    );
  }

  /**
   * The explicit cross-context path (listContexts, listQuestions() without a context, integrityCheck): a
   * read-only transaction with `graphmemix.all_contexts` on. Nothing else in the store uses it.
   */
  async allContexts<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    return this.transaction(
      `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;${this.roleSql()} SELECT set_config('graphmemix.all_contexts', 'on', true);`,
      work,
    );
  }

  /** Global tables without a context (meta): a plain transaction, still under the RLS role. */
  async global<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    return this.transaction(`BEGIN;${this.roleSql()}`, work);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private roleSql(): string {
    return this.switchRole ? ` SET LOCAL ROLE ${RLS_ROLE};` : '';
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
