import { isPostgresUrl } from './postgres/postgres-url.ts';

export { isPostgresUrl };

/**
 * What a `--db` / `openGraphmemix({ db })` string names, decided by its form alone (no I/O):
 * - `postgres://…` / `postgresql://…` (any letter case) -> a Postgres server (src/store/postgres/);
 * - `memory:` -> the in-memory backend; `:memory:` -> SQLite on a private in-memory database;
 * - anything else -> a SQLite file path.
 * `label` is the string safe to print in logs, errors and traces: a URL's password (and user) never appear.
 */
export type StoreLocation =
  | { kind: 'postgres'; url: string; label: string }
  | { kind: 'memory'; label: string }
  | { kind: 'sqlite'; path: string; label: string };

/** True for the two in-memory forms, which cannot be shared with another thread or process. */
export function isInMemoryDb(db: string): boolean {
  return db === ':memory:' || db.startsWith('memory:');
}

export function parseStoreLocation(db: string): StoreLocation {
  if (isPostgresUrl(db)) return { kind: 'postgres', url: db, label: redactDbUrl(db) };
  if (db === 'memory:') return { kind: 'memory', label: db };
  return { kind: 'sqlite', path: db, label: db };
}

/**
 * A database URL without its credentials: `postgres://user:secret@host:5432/db?password=x&sslmode=require`
 * -> `postgres://[redacted]@host:5432/db?password=[redacted]&sslmode=require`. Other strings pass unchanged.
 * Written without URL parsing so that a malformed URL is still redacted.
 */
export function redactDbUrl(db: string): string {
  if (!isPostgresUrl(db)) return db;
  const scheme = db.slice(0, db.indexOf('://') + 3);
  let rest = db.slice(scheme.length);
  // userinfo ends at the LAST '@' before the path: a password may itself hold '@' (unencoded, as users type it).
  const pathStart = rest.search(/[/?#]/);
  const authority = pathStart === -1 ? rest : rest.slice(0, pathStart);
  const at = authority.lastIndexOf('@');
  if (at !== -1) rest = `[redacted]@${rest.slice(at + 1)}`;
  rest = rest.replace(/([?&](?:password|passwd|user|sslpassword|sslkey)=)[^&#]*/gi, '$1[redacted]');
  return `${scheme}${rest}`;
}

/** A short name safe for a folder (the media folder of a Postgres archive): host, port and database only. */
export function dbFolderName(db: string): string {
  const label = redactDbUrl(db).replace(/^[a-z]+:\/\/(?:\[redacted\]@)?/i, '');
  const hostAndDb = label.replace(/[?#].*$/, '');
  const name = hostAndDb.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '');
  return name.slice(0, 120) || 'postgres';
}
