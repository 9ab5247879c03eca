import type Database from 'better-sqlite3';

/**
 * A statement prepared on first use. A read-only store of an older schema (not migrated) lacks the tables of
 * later migrations; preparing everything at open would refuse it, while lazily it still answers whatever its
 * schema has.
 */
export function lazyStatement(db: Database.Database, sql: string, raw = false): Database.Statement {
  let statement: Database.Statement | undefined;
  const get = () => {
    // raw: rows as arrays (the driver builds no object per row: a third less CPU on wide row reads).
    statement ??= raw ? db.prepare(sql).raw() : db.prepare(sql);
    return statement;
  };
  return {
    get: (...args: unknown[]) => get().get(...args),
    all: (...args: unknown[]) => get().all(...args),
    run: (...args: unknown[]) => get().run(...args),
    iterate: (...args: unknown[]) => get().iterate(...args),
  } as unknown as Database.Statement;
}
