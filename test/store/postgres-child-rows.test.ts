import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { compactSemantic } from '../../src/digest/incremental/compact-semantic.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { SHARED_WORD_TEXTS as TEXTS, write } from './store-conformance.ts';

/**
 * PostgreSQL migration 8 (docs/postgres.md, "Ingest"): lexical postings, semantic postings and semantic
 * lists carry no foreign key (a check per row was ~20% of a bulk ingest's server CPU); the rows the cascade
 * removed are removed explicitly, so forget still leaves nothing behind.
 */
afterAll(dropTestDatabases);
if (PG_SKIP) console.warn(`[postgres child rows skipped] ${PG_SKIP}`);

async function rowsOf(url: string, where: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const out: Record<string, number> = {};
    for (const table of [
      'lex_docs',
      'lex_postings',
      'semantic_docs',
      'semantic_postings',
      'semantic_neighbours',
    ]) {
      const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`);
      out[table] = Number(rows[0]!.n);
    }
    return out;
  } finally {
    await client.end();
  }
}

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL rows without a foreign key (migration 8)', () => {
  it('updates, deleteMemory and deleteContext leave no posting or list row behind', async () => {
    const url = await createTestDatabase();
    const store = await openPostgresStore({ url });
    try {
      for (const context of ['a', 'b']) {
        await store.writeMemories(
          context,
          TEXTS.map((text, i) => write(context, `m${i}`, text, i)),
        );
        await compactSemantic(store, context, { k: 2 });
      }
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      const keys = await admin.query(
        `SELECT conrelid::regclass::text AS t FROM pg_constraint WHERE contype = 'f'
         AND conrelid::regclass::text IN ('lex_postings', 'semantic_postings', 'semantic_neighbours')`,
      );
      await admin.end();
      expect(keys.rows).toEqual([]);

      const m1 = "context_id = 'a' AND memory_id = 'm1'";
      expect(Object.values(await rowsOf(url, m1)).every((n) => n > 0)).toBe(true);
      // An update replaces the lexical postings (none of the old text's terms stay).
      await store.writeMemories('a', [write('a', 'm2', 'entirely different words now', 2)]);
      const stray = new pg.Client({ connectionString: url });
      await stray.connect();
      const { rows } = await stray.query<{ n: string }>(
        `SELECT count(*) AS n FROM lex_postings p WHERE context_id = 'a' AND memory_id = 'm2'
         AND NOT EXISTS (SELECT 1 FROM lex_docs d WHERE d.id = p.doc)`,
      );
      await stray.end();
      expect(Number(rows[0]!.n)).toBe(0);

      expect(await store.deleteMemory('a', 'm1')).toBe(true);
      expect(await rowsOf(url, m1)).toEqual({
        lex_docs: 0,
        lex_postings: 0,
        semantic_docs: 0,
        semantic_postings: 0,
        semantic_neighbours: 0,
      });
      expect(await store.deleteContext('b')).toBe(true);
      expect(Object.values(await rowsOf(url, "context_id = 'b'"))).toEqual([0, 0, 0, 0, 0]);
      // Context a keeps its rows; the integrity check (stray rows included) is clean.
      expect((await rowsOf(url, "context_id = 'a'")).semantic_postings).toBeGreaterThan(0);
      expect((await store.integrityCheck()).problems).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
