import { existsSync } from 'node:fs';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { Graphmemix } from '../graphmemix-api.ts';
import { redactDbUrl } from '../index.ts';

/** In-memory databases exist by definition; a server URL (postgres://) is the server's to refuse. */
function isMemoryDb(db: string): boolean {
  return db === ':memory:' || db.startsWith('memory:') || /^[a-z][a-z0-9+.-]*:\/\//i.test(db);
}

/**
 * Commands that read an archive refuse a database file that does not exist: a mistyped --db would
 * otherwise create an empty archive and answer nothing, exit 0.
 */
export function requireArchive(db: string): void {
  if (isMemoryDb(db) || existsSync(db)) return;
  throw new GraphmemixError(
    'NOT_FOUND_PATH',
    `no archive at ${db} (check --db; \`graphmemix ingest\` creates one)`,
    { location: { file: db, field: 'db' } },
  );
}

/**
 * Commands that create archives (ingest, serve, mcp) say so when the file is new, on stderr so --json
 * output stays one object. Returns whether it was new.
 */
export function announceNewArchive(db: string): boolean {
  if (isMemoryDb(db) || existsSync(db)) return false;
  process.stderr.write(`graphmemix: creating a new archive at ${db}\n`);
  return true;
}

/** An unknown context is an error naming the contexts there are (a few), never an empty answer. */
export async function requireContext(gm: Graphmemix, contextId: string, db: string): Promise<void> {
  if ((await gm.store.contextStats(contextId)) !== undefined) return;
  const contexts = (await gm.store.listContexts()).map((context) => context.id);
  const known = contexts.length === 0 ? 'it has none' : `it has ${preview(contexts)}`;
  throw new GraphmemixError('NOT_FOUND', `no context "${contextId}" in ${redactDbUrl(db)}; ${known}`, {
    location: { field: 'context' },
  });
}

function preview(ids: readonly string[]): string {
  const shown = ids.slice(0, 10).join(', ');
  return ids.length > 10 ? `${shown} and ${ids.length - 10} more` : shown;
}
