import type { Command } from 'commander';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import { loadModelConfig } from '../index.ts';

/** Help text of every `--db` flag: one form for every command. */
export const DB_FLAG = '--db <file|url>';
export const DB_FLAG_HELP =
  'archive: a SQLite file or a postgres:// URL (default: $GRAPHMEMIX_DB, else the config file "db")';

/** Commands whose --db stays unset unless given (eval makes a temporary archive). */
const DB_OPTIONAL = new Set(['eval']);

/**
 * A `preAction` hook for the program: a command with a --db flag that was not given takes $GRAPHMEMIX_DB, else
 * the `db` of the config file (its --config, $GRAPHMEMIX_CONFIG or ./graphmemix.config.json), so the archive
 * (a file or a Postgres URL with its credentials) can live in the environment or the config instead of the
 * shell history. Nothing found for a command that needs it: CONFIG naming the field `db`.
 */
export function resolveDbOption(_program: Command, command: Command): void {
  if (!command.options.some((option) => option.long === '--db')) return;
  const flags = command.opts<{ db?: string; config?: string }>();
  if (flags.db !== undefined && flags.db !== '') return;
  // eval without --db works in a temporary archive: it must never fall back to a configured (real) one.
  if (DB_OPTIONAL.has(command.name())) return;
  const db = loadModelConfig(flags.config === undefined ? {} : { path: flags.config }).db;
  if (db !== undefined) {
    command.setOptionValue('db', db);
    return;
  }
  throw new GraphmemixError(
    'CONFIG',
    `${command.name()} needs an archive: --db <file|postgres://url>, $GRAPHMEMIX_DB or "db" in the config file`,
    { location: { field: 'db' } },
  );
}
