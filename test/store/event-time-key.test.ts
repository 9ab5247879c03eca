import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { eventTimeKey } from '../../src/store/event-time-key.ts';
import { SCHEMA_VERSION } from '../../src/store/migrations.ts';
import { openStore } from '../../src/store/open-store.ts';
import { POSTGRES_SCHEMA_VERSION } from '../../src/store/postgres/postgres-schema.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { write } from './store-conformance.ts';

describe('eventTimeKey: the indexed form of an event time', () => {
  it('rewrites a numeric offset to the same instant in UTC, in the precision given', () => {
    expect(eventTimeKey('2024-05-01T23:00:00-05:00')).toBe('2024-05-02T04:00:00Z');
    expect(eventTimeKey('2024-05-01T08:00:00+09:00')).toBe('2024-04-30T23:00:00Z');
    expect(eventTimeKey('2024-05-01T08:00+0930')).toBe('2024-04-30T22:30Z');
    expect(eventTimeKey('2024-05-01 08:00:00.123456+01:00')).toBe('2024-05-01T07:00:00.123456Z');
    expect(eventTimeKey('2024-12-31T23:30:59-01:00')).toBe('2025-01-01T00:30:59Z');
    expect(eventTimeKey('2024-02-29T00:10:00+00:30')).toBe('2024-02-28T23:40:00Z');
    expect(eventTimeKey('2016-12-31T23:59:60+00:00')).toBe('2016-12-31T23:59:60Z');
    expect(eventTimeKey('0050-01-01T00:00:00+01:00')).toBe('0049-12-31T23:00:00Z');
  });

  it('leaves Z times, dates, local times and what it cannot shift as given; a key is its own key', () => {
    for (const value of ['2024-05-01T23:00:00Z', '2024-05-01', '2024-05-01T10:00', '2024-05-01T10:00:00.5']) {
      expect(eventTimeKey(value)).toBe(value);
    }
    expect(eventTimeKey('0000-01-01T00:30:00+01:00')).toBe('0000-01-01T00:30:00+01:00');
    const key = eventTimeKey('2024-05-01T23:00:00-05:00');
    expect(eventTimeKey(key)).toBe(key);
  });
});

describe('the migration to UTC event-time keys', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gmx-event-time-'));
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await dropTestDatabases();
  });
  const records = [
    write('ctx', 'east', 'mail from chicago', 0),
    write('ctx', 'zulu', 'plain note', 1),
    write('ctx', 'none', 'no time', 2),
  ];
  records[0]!.record.timestamp = '2024-05-01T23:00:00-05:00';
  records[1]!.record.timestamp = '2024-05-01T12:00:00Z';

  it('SQLite (16): an archive written before gets the UTC key of each offset time, and windows follow', async () => {
    const file = join(dir, 'before.db');
    const store = await openStore(file);
    await store.writeMemories('ctx', records);
    await store.close();
    // As version 15 wrote it: the time as given in the index column.
    const raw = new Database(file);
    raw.prepare("UPDATE memories SET timestamp = ? WHERE id = 'east'").run('2024-05-01T23:00:00-05:00');
    raw.prepare('UPDATE schema_version SET version = 15').run();
    raw.close();
    const migrated = await openStore(file);
    const check = new Database(file, { readonly: true });
    expect(check.prepare('SELECT id, timestamp FROM memories ORDER BY id').all()).toEqual([
      { id: 'east', timestamp: '2024-05-02T04:00:00Z' },
      { id: 'none', timestamp: null },
      { id: 'zulu', timestamp: '2024-05-01T12:00:00Z' },
    ]);
    expect(check.prepare('SELECT version FROM schema_version').get()).toEqual({ version: SCHEMA_VERSION });
    check.close();
    expect((await migrated.listFiltered('ctx', { from: '2024-05-02' })).items.map((r) => r.id)).toEqual([
      'east',
    ]);
    expect((await migrated.getMemory('ctx', 'east'))?.timestamp).toBe('2024-05-01T23:00:00-05:00');
    expect((await migrated.integrityCheck()).ok).toBe(true);
    await migrated.close();
  });

  it.skipIf(PG_SKIP !== undefined)('PostgreSQL (12): the same', async () => {
    const url = await createTestDatabase();
    const store = await openPostgresStore({ url });
    await store.writeMemories('ctx', records);
    await store.close();
    const raw = new pg.Client({ connectionString: url });
    await raw.connect();
    try {
      await raw.query(`SELECT set_config('graphmemix.all_contexts', 'on', false)`);
      await raw.query('ALTER TABLE memories NO FORCE ROW LEVEL SECURITY');
      await raw.query(`UPDATE memories SET "timestamp" = '2024-05-01T23:00:00-05:00' WHERE id = 'east'`);
      await raw.query('DELETE FROM schema_migrations WHERE version >= 12');
    } finally {
      await raw.end();
    }
    const migrated = await openPostgresStore({ url });
    try {
      expect((await migrated.listFiltered('ctx', { from: '2024-05-02' })).items.map((r) => r.id)).toEqual([
        'east',
      ]);
      expect((await migrated.getMemory('ctx', 'east'))?.timestamp).toBe('2024-05-01T23:00:00-05:00');
      expect((await migrated.integrityCheck()).ok).toBe(true);
    } finally {
      await migrated.close();
    }
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    try {
      const row = await check.query(
        `SELECT (SELECT max(version) FROM schema_migrations) AS version,
           (SELECT relforcerowsecurity FROM pg_class WHERE relname = 'memories') AS forced`,
      );
      expect(row.rows[0]).toEqual({ version: POSTGRES_SCHEMA_VERSION, forced: true });
    } finally {
      await check.end();
    }
  });
});
