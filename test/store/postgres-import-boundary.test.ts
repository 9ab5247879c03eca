import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', '..', 'src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('pg stays out of the SQLite path', () => {
  it('only src/store/postgres/ imports pg or pgvector statically; others reach it by dynamic import', () => {
    const offenders: string[] = [];
    for (const file of files(SRC)) {
      const rel = relative(SRC, file);
      const text = readFileSync(file, 'utf8');
      if (/from '(pg|pgvector)(\/[^']*)?'/.test(text) && !rel.startsWith('store/postgres/'))
        offenders.push(rel);
      // A static import of the adapter would load pg too (postgres-url.ts is pg-free and allowed).
      if (
        /^import [^;]*from '[^']*postgres\/postgres-(store|migrate|session|vectors)\.ts'/m.test(text) &&
        !rel.startsWith('store/postgres/')
      ) {
        offenders.push(rel);
      }
    }
    expect(offenders).toEqual([]);
  });
});
