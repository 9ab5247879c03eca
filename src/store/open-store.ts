import { GraphmemixError, isGraphmemixError } from '../errors/graphmemix-error.ts';
import type { ArchiveStore } from './archive-store-spec.ts';
import { createMemoryStore } from './memory-store.ts';
import { createSqliteStore } from './sqlite-store.ts';
import { parseStoreLocation, redactDbUrl } from './store-location.ts';

export interface OpenStoreOptions {
  /** Open an existing archive read-only (SQLite: no migrations, writes fail with STORE). */
  readonly?: boolean;
}

/**
 * Opens an archive store; the one place that turns a `--db` string into a backend (src/store/store-location.ts):
 * - 'postgres://…' / 'postgresql://…' -> the Postgres backend (src/store/postgres/), loaded only here and only
 *   for a URL, so SQLite users never load the `pg` client;
 * - 'memory:' -> the in-memory backend (plain maps, src/store/memory-store.ts);
 * - ':memory:' -> the SQLite backend on a private in-memory database (same code path as a file);
 * - anything else -> the SQLite file at that path (created and migrated when absent).
 * Throws GraphmemixError STORE for a file that is not a graphmemix store or is newer than this code, and for a
 * server that cannot be reached; a URL's credentials never appear in the error.
 */
export async function openStore(db: string, options: OpenStoreOptions = {}): Promise<ArchiveStore> {
  const location = parseStoreLocation(db);
  if (location.kind === 'memory') return createMemoryStore();
  if (location.kind === 'sqlite') return createSqliteStore(location.path, options);
  try {
    const { openPostgresStore } = await import('./postgres/postgres-store.ts');
    // Read-only openers (read workers, --version) come after a writer migrated: they only check the schema.
    return await openPostgresStore({ url: location.url, ...(options.readonly ? { migrate: false } : {}) });
  } catch (error) {
    throw redactedStoreError(error, location.url);
  }
}

/**
 * A failure to open a Postgres store, as a STORE error whose message and cause carry no credentials: the
 * driver's messages may quote the connection string (or its password, e.g. in an auth failure).
 */
function redactedStoreError(error: unknown, url: string): GraphmemixError {
  const secrets = credentialsOf(url);
  const clean = (text: string) => {
    let out = text.split(url).join(redactDbUrl(url));
    for (const secret of secrets) out = out.split(secret).join('[redacted]');
    return out;
  };
  if (isGraphmemixError(error)) {
    if (clean(error.message) === error.message) return error;
    return new GraphmemixError(error.code, clean(error.message));
  }
  const message = error instanceof Error ? error.message : String(error);
  return new GraphmemixError('STORE', `cannot open ${redactDbUrl(url)}: ${clean(message)}`);
}

/** The password (raw and percent-decoded) of a URL, to blank it wherever a driver message repeats it. */
function credentialsOf(url: string): string[] {
  try {
    const password = new URL(url).password;
    if (password === '') return [];
    const decoded = decodeURIComponent(password);
    return [...new Set([password, decoded])].filter((secret) => secret.length >= 3);
  } catch {
    return [];
  }
}
