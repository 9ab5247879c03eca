import pg from 'pg';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { RLS_ROLE } from './postgres-schema.ts';

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
 * No parallel workers and no JIT: a generic plan estimates a `LIMIT $n` as a tenth of the rows and the average
 * context's rows for a parameter, so it chose parallel plans for pages of 50 (a scope tag's first page at 200k
 * memories: 14 ms, of which ~7 ms starting two workers, against 2 ms without) and compiled a page's filter
 * with JIT (15 ms of a 111 ms statement); the store's statements are small reads and writes, and on a server
 * shared by many clients workers only take cores from other requests.
 * Doubles leave the server in their shortest exact form whatever the database's extra_float_digits: the
 * question path parses postings' impacts and edge strengths from text and JSON, and a rounded impact would
 * break a posting keyset.
 */
export function settingsSql(switchRole: boolean): string {
  return `${switchRole ? ` SET LOCAL ROLE ${RLS_ROLE};` : ''} SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL max_parallel_workers_per_gather = 0; SET LOCAL jit = off; SET LOCAL extra_float_digits = 1;`;
}

/**
 * Backstop of every statement in a question's read unit (PostgresSession.readUnit: retrieve's reads, one
 * snapshot). The statements of a question are bounded by design (lexical work bounds, filtered page work,
 * batched lookups: milliseconds at 1M memories), so this only catches a plan gone wrong (statistics far off,
 * a missing index) before it holds a pooled connection for minutes. Maintenance and writes keep no limit: a
 * compaction or an import at 1M may run single statements longer than this.
 */
export const QUESTION_STATEMENT_TIMEOUT_MS = 30_000;

/** The SET LOCAL of that backstop, for a read unit's first round trip. */
export const QUESTION_STATEMENT_TIMEOUT_SQL = ` SET LOCAL statement_timeout = ${QUESTION_STATEMENT_TIMEOUT_MS};`;

/** Key of a context's write lock: 64-bit hash of a namespaced id (a collision only serialises two contexts). */
function contextLockKey(literal: string): string {
  return `hashtextextended('graphmemix:context:' || ${literal}, 0)`;
}

/**
 * A literal safe under any standard_conforming_strings setting (pg's escaping: E'...' when it holds \\). A
 * NUL is refused (INVALID_INPUT, as the server refuses it in a parameter): the protocol ends a query text
 * at a NUL, so it could never reach the server as data.
 */
export function escapeLiteral(value: string): string {
  if (value.includes('\u0000')) {
    throw new GraphmemixError('INVALID_INPUT', 'a memory id or meta key holds a NUL character');
  }
  return quoteLiteral(value);
}

/**
 * pg.escapeLiteral's text (quotes doubled; ` E'...'` with backslashes doubled when the value holds one) by
 * native replaces: the driver's version appends one character at a time, which for an add's statements
 * (records, vectors and lists as JSON, several KB) cost ~0.5 ms of CPU and ~270 KB of garbage per add.
 */
export function quoteLiteral(value: string): string {
  if (!value.includes('\\')) return `'${value.replaceAll("'", "''")}'`;
  return ` E'${value.replaceAll("'", "''").replaceAll('\\', '\\\\')}'`;
}

export function assertContextId(contextId: string): void {
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
  // query_canceled: the read unit's statement_timeout (or an administrator's pg_cancel_backend).
  if (code === '57014') {
    return new GraphmemixError('STORE', `a store statement was cancelled: ${message}`, {
      location: { file: where },
      details: { reason: 'statement_cancelled', statementTimeoutMs: QUESTION_STATEMENT_TIMEOUT_MS },
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
