import type pg from 'pg';

/**
 * Statements the store sends as text inside a simple query (with a transaction's BEGIN or COMMIT, or queued
 * in a unit of work) cannot take protocol parameters, so the server planned each at every call: ~1.2 ms of
 * planning per add-1 in all, half of it the unit's read-ahead (pg_stat_statements, issue #11). Each one
 * here is PREPAREd once per pooled connection, right after the BEGIN of its first transaction, and called
 * with `EXECUTE name(literals)`: planned once per connection (a generic plan, like the named statements of
 * the parameterised queries), with the same results as the literal text.
 *
 * A prepared statement is not transactional (a rollback keeps it); a connection whose first transaction
 * failed in the round trip that prepared them is dropped from the pool, since which PREPAREs ran is not
 * known then (PostgresSession). Row-level security is re-applied by the server when a statement prepared
 * under one role executes under another (the transactions switch to the RLS role after the PREPAREs).
 */
export class LiteralPlan {
  constructor(
    readonly name: string,
    /** SQL types of $1..$n. */
    readonly types: readonly string[],
    readonly text: string,
  ) {}

  /** The call, with its arguments as SQL expressions (escaped literals, ARRAY[...] constructors). */
  call(...args: string[]): string {
    if (args.length !== this.types.length) throw new Error(`${this.name}: ${args.length} arguments`);
    return `EXECUTE ${this.name}(${args.join(', ')})`;
  }
}

const registry: LiteralPlan[] = [];
/** How many of the registry's plans each connection has prepared. */
const preparedOn = new WeakMap<pg.ClientBase, number>();

/** Registers a plan (at module load: every connection prepares every plan registered by then). */
export function literalPlan(name: string, types: readonly string[], text: string): LiteralPlan {
  if (registry.some((plan) => plan.name === name)) throw new Error(`literal plan ${name} registered twice`);
  const plan = new LiteralPlan(name, types, text);
  registry.push(plan);
  return plan;
}

/**
 * The PREPAREs `client` still needs ('' when none), to send in front of its next transaction, and the mark
 * to set once that round trip succeeded.
 */
export function pendingLiteralPlans(client: pg.ClientBase): { sql: string; done: () => void } {
  const from = preparedOn.get(client) ?? 0;
  const to = registry.length;
  if (from === to) return { sql: '', done: () => {} };
  const sql = registry
    .slice(from)
    .map((plan) => `PREPARE ${plan.name}(${plan.types.join(', ')}) AS ${plan.text};`)
    .join(' ');
  return { sql, done: () => preparedOn.set(client, to) };
}

/** writeMemories' first statement (with BEGIN): the context row ensured, the stored hashes of the ids. */
export const STORED_HASHES = literalPlan(
  'gmx_l_stored_hashes',
  ['text', 'text[]'],
  `WITH ensure AS (INSERT INTO contexts (id) VALUES ($1) ON CONFLICT (id) DO NOTHING)
   SELECT id, content_hash, record FROM memories WHERE context_id = $1 AND id = ANY($2)`,
);

/** writeMemories' counters (with COMMIT): inserted count, vector version bump, write time. */
export const WRITE_COUNTERS = literalPlan(
  'gmx_l_write_counters',
  ['text', 'bigint', 'bigint', 'text'],
  'UPDATE contexts SET memories = memories + $2, vector_version = vector_version + $3, last_write = $4 WHERE id = $1',
);

/** clearRelationWork queued in a unit. */
export const CLEAR_JOURNAL = literalPlan(
  'gmx_l_clear_journal',
  ['text', 'bigint[]'],
  'DELETE FROM relation_journal WHERE context_id = $1 AND seq = ANY($2)',
);

/** setMeta queued in a unit. */
export const META_PUT = literalPlan(
  'gmx_l_meta_put',
  ['text', 'text'],
  'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
);
export const META_DELETE = literalPlan('gmx_l_meta_delete', ['text'], 'DELETE FROM meta WHERE key = $1');

/** countEdges (BEGIN, the read and COMMIT in one round trip). */
export const EDGE_COUNTS = literalPlan(
  'gmx_l_edge_counts',
  ['text'],
  'SELECT type, n FROM edge_counts WHERE context_id = $1',
);
