import { createHash } from 'node:crypto';
import type pg from 'pg';
import { StatementPipeline } from './postgres-statement-pipeline.ts';

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
export function preparing(client: pg.PoolClient): void {
  const tagged = client as pg.PoolClient & { [PREPARING]?: true };
  if (tagged[PREPARING]) return;
  tagged[PREPARING] = true;
  const direct = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
  // One statement at a time on the connection, in call order (what the driver's queue does, without
  // handing it a query while one runs: deprecated in pg 8, removed in pg 9). Work issued together still
  // shares round trips through the pipeline.
  let tail: Promise<unknown> = Promise.resolve();
  const query = (...args: unknown[]): Promise<unknown> => {
    if (args.some((arg) => typeof arg === 'function')) return direct(...args);
    const run = tail.then(() => direct(...args));
    tail = run.catch(() => {});
    return run;
  };
  rawQueries.set(client, query);
  // Names this connection has prepared (a named statement is prepared by its first successful run).
  const prepared = new Set<string>();
  joinTests.set(client, (config, values, explicit) => {
    const name = explicit ?? statementNames.get(config);
    return name !== undefined && prepared.has(name) && StatementPipeline.joins(values);
  });
  (client as { query: unknown }).query = (config: unknown, values?: unknown, ...rest: unknown[]) => {
    const pipeline = pipelines.get(client);
    const named = values === undefined && rest.length === 0 ? namedStatement(config) : undefined;
    if (named) {
      // A statement the store names itself (the lexical search's): joins like the hashed names.
      if (pipeline && prepared.has(named.name) && StatementPipeline.joins(named.values)) {
        return pipeline.add(named.name, named.text, named.values);
      }
      pipeline?.flush();
      return query(config).then((result) => {
        prepared.add(named.name);
        return result;
      });
    }
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0 && rest.length === 0) {
      let name = statementNames.get(config);
      if (name === undefined && statementNames.size < MAX_PREPARED) {
        name = `gmx_${createHash('sha256').update(config).digest('hex').slice(0, 24)}`;
        statementNames.set(config, name);
      }
      if (name !== undefined) {
        if (pipeline && prepared.has(name) && StatementPipeline.joins(values)) {
          return pipeline.add(name, config, values);
        }
        pipeline?.flush();
        const known = name;
        return query({ name, text: config, values }).then((result) => {
          prepared.add(known);
          return result;
        });
      }
    }
    pipeline?.flush();
    return query(config, values, ...rest);
  };
}

/** The pipeline of each connection while it runs a transaction's work (StatementPipeline). */
const pipelines = new WeakMap<pg.PoolClient, StatementPipeline>();
/** Each prepared connection's own query, below the wrappers (what a pipeline sends with). */
const rawQueries = new WeakMap<pg.PoolClient, (config: unknown) => Promise<unknown>>();

/** Starts the pipeline of a prepared connection for one transaction's work (StatementPipeline). */
export function startPipeline(client: pg.PoolClient): void {
  const raw = rawQueries.get(client);
  if (raw) pipelines.set(client, new StatementPipeline(raw));
}

/** Sends what the connection's pipeline holds and ends it (the work is done). */
export function endPipeline(client: pg.PoolClient): void {
  pipelines.get(client)?.flush();
  pipelines.delete(client);
}

/** Per prepared connection: whether a parameterised statement would join its pipeline now. */
const joinTests = new WeakMap<
  pg.PoolClient,
  (config: string, values: readonly unknown[], name?: string) => boolean
>();

/**
 * The connection's pipeline when a `client.query(...args)` call would join it (a parameterised statement
 * already prepared on the connection, with literal values), else undefined.
 */
export function joiningPipeline(
  client: pg.PoolClient,
  args: readonly unknown[],
): StatementPipeline | undefined {
  const named = args.length === 1 ? namedStatement(args[0]) : undefined;
  const [config, values, ...rest] = named ? [named.text, named.values] : args;
  if (typeof config !== 'string' || !Array.isArray(values) || values.length === 0 || rest.length > 0) {
    return undefined;
  }
  const pipeline = pipelines.get(client);
  return pipeline && joinTests.get(client)?.(config, values, named?.name) ? pipeline : undefined;
}

/** A `{ name, text, values }` query config with nothing else (no row mode, no own type parsers). */
function namedStatement(config: unknown): { name: string; text: string; values: unknown[] } | undefined {
  if (typeof config !== 'object' || config === null) return undefined;
  const { name, text, values, ...rest } = config as Record<string, unknown>;
  if (typeof name !== 'string' || typeof text !== 'string' || !Array.isArray(values) || values.length === 0) {
    return undefined;
  }
  return Object.keys(rest).length === 0 ? { name, text, values } : undefined;
}
