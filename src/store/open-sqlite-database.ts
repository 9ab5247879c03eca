import Database from 'better-sqlite3';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import { migrate } from './migrations.ts';

/** The writer's own checkpoint threshold (WAL pages) while no background checkpointer runs. */
export const WRITER_CHECKPOINT_PAGES = 8192;

/** Opens (and migrates, when writable) the SQLite store's file: WAL, foreign keys, secure delete. */
export function openSqliteDatabase(file: string, options: { readonly?: boolean }): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(file, {
      readonly: options.readonly ?? false,
      fileMustExist: options.readonly ?? false,
    });
    db.pragma('busy_timeout = 5000');
    if (!options.readonly) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      // Checkpoint every 8,192 WAL pages (32 MiB), not SQLite's 1,000: an add writes ~115 pages, so the
      // default checkpointed every ~9 adds, copying the same hot pages (counters, index roots) to the file
      // again each time; the commit of an add took ~40% less wall with this (docs/living-archive.md).
      // Deletes still truncate the WAL themselves (forget means forget).
      db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
    }
    db.pragma('foreign_keys = ON');
    // Deleted rows are overwritten with zeros, so a forgotten memory's text does not linger in free pages.
    if (!options.readonly) db.pragma('secure_delete = ON');
    assertGraphmemixFile(db, file);
    if (!options.readonly) migrate(db, file);
  } catch (error) {
    if (error instanceof GraphmemixError) throw error;
    throw new GraphmemixError('STORE', `cannot open store: ${(error as Error).message}`, {
      location: { file },
      cause: error,
    });
  }
  return db;
}

/** A non-empty database without our schema_version table is someone else's file: refuse to touch it. */
function assertGraphmemixFile(db: Database.Database, file: string): void {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
    name: string;
  }[];
  if (tables.length > 0 && !tables.some((table) => table.name === 'schema_version')) {
    throw new GraphmemixError('STORE', 'not a graphmemix store (no schema_version table)', {
      location: { file },
    });
  }
}
