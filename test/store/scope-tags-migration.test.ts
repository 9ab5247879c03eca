import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { ArchiveStore, MemoryWrite } from '../../src/store/archive-store-spec.ts';
import { migrateArchive } from '../../src/store/migrate-archive.ts';
import { SCHEMA_VERSION } from '../../src/store/migrations.ts';
import { openStore } from '../../src/store/open-store.ts';
import { POSTGRES_SCHEMA_VERSION } from '../../src/store/postgres/postgres-schema.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { write } from './store-conformance.ts';

/**
 * SQLite migration 13 / PostgreSQL 11: scope tags written before carried no sequence. A store from before
 * gets every tag row's sequence from its memory, its key in (name, value, sequence, memory) order, and pages
 * the same as a fresh build's.
 */
const dir = mkdtempSync(join(tmpdir(), 'gmx-tags-mig-'));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropTestDatabases();
});

/** 30 memories, every third of agent `bot`, sequences out of id order; one update moves a sequence. */
async function build(store: ArchiveStore): Promise<void> {
  const writes: MemoryWrite[] = Array.from({ length: 30 }, (_, i) => {
    const base = write('ctx', `m${String(i).padStart(2, '0')}`, `note ${i}`, 30 - i);
    return { ...base, record: { ...base.record, ...(i % 3 === 0 ? { agentId: 'bot' } : {}) } };
  });
  await store.writeMemories('ctx', writes);
  const moved = write('ctx', 'm27', 'note 27 moved', 100);
  await store.writeMemories('ctx', [{ ...moved, record: { ...moved.record, agentId: 'bot' } }]);
}

/** `bot`'s memories in (sequence, id) order: m27 moved to the end. */
const EXPECTED = ['m24', 'm21', 'm18', 'm15', 'm12', 'm09', 'm06', 'm03', 'm00', 'm27'];

async function pages(store: ArchiveStore): Promise<string[]> {
  const first = (await store.listFiltered('ctx', { agentId: 'bot' }, { limit: 4 })).items;
  const last = first[first.length - 1]!;
  const rest = await store.listFiltered(
    'ctx',
    { agentId: 'bot' },
    { afterSequence: last.sequence, afterId: last.id },
  );
  return [...first, ...rest.items].map((r) => r.id);
}

describe('scope tags in (sequence, id) order: migration of older stores', () => {
  it('SQLite: a file of version 12 gets its tags rebuilt with their sequences', async () => {
    const file = join(dir, 'older.db');
    const store = await openStore(file);
    await build(store);
    await store.close();
    const raw = new Database(file);
    raw.exec(`
      CREATE TABLE old_tags (
        context_id TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, memory_id TEXT NOT NULL,
        PRIMARY KEY (context_id, name, value, memory_id),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      ) WITHOUT ROWID;
      INSERT INTO old_tags SELECT context_id, name, value, memory_id FROM memory_tags;
      DROP TABLE memory_tags;
      ALTER TABLE old_tags RENAME TO memory_tags;
      CREATE INDEX memory_tags_by_memory ON memory_tags (context_id, memory_id);
      UPDATE schema_version SET version = 12;
    `);
    raw.close();
    expect(await migrateArchive(file)).toMatchObject({ backend: 'sqlite', schemaVersion: SCHEMA_VERSION });
    const check = new Database(file, { readonly: true });
    const key = (
      check.prepare('PRAGMA index_info(sqlite_autoindex_memory_tags_1)').all() as { name: string }[]
    ).map((column) => column.name);
    const moved = check.prepare("SELECT sequence FROM memory_tags WHERE memory_id = 'm27'").pluck().get();
    check.close();
    expect(key).toEqual(['context_id', 'name', 'value', 'sequence', 'memory_id']);
    expect(moved).toBe(100);
    const migrated = await openStore(file);
    expect(await pages(migrated)).toEqual(EXPECTED);
    expect((await migrated.integrityCheck()).ok).toBe(true);
    await migrated.close();
  });

  it.skipIf(PG_SKIP !== undefined)(
    'PostgreSQL: a database of version 10 gets its tags their sequences',
    async () => {
      const url = await createTestDatabase();
      const store = await openStore(url);
      await build(store);
      await store.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`
        ALTER TABLE memory_tags DROP CONSTRAINT memory_tags_pkey;
        ALTER TABLE memory_tags DROP COLUMN sequence;
        ALTER TABLE memory_tags ADD CONSTRAINT memory_tags_pkey PRIMARY KEY (context_id, name, value, memory_id);
        DELETE FROM schema_migrations WHERE version >= 11;
      `);
        expect(await migrateArchive(url)).toMatchObject({ from: 10, schemaVersion: POSTGRES_SCHEMA_VERSION });
        const key = await client.query<{ name: string }>(
          `SELECT a.attname AS name FROM pg_index i
         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
         WHERE i.indexrelid = 'memory_tags_pkey'::regclass ORDER BY array_position(i.indkey, a.attnum)`,
        );
        expect(key.rows.map((row) => row.name)).toEqual([
          'context_id',
          'name',
          'value',
          'sequence',
          'memory_id',
        ]);
      } finally {
        await client.end();
      }
      const migrated = await openStore(url);
      expect(await pages(migrated)).toEqual(EXPECTED);
      await migrated.close();
    },
  );
});
