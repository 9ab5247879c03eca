/**
 * Whether a --db value names a PostgreSQL database (postgres:// or postgresql://) rather than a SQLite file.
 * Kept apart from the adapter so callers decide without loading `pg` (SQLite users never import it).
 */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(value);
}
