import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { compactSemantic } from '../../src/digest/incremental/compact-semantic.ts';
import { finishRelationUpgrades, UPGRADE_META_PREFIX } from '../../src/digest/update-relations.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { copyArchive } from '../../src/store/copy-archive.ts';
import { dictionaryKey } from '../../src/store/lexical-dictionary-key.ts';
import { migrateArchive } from '../../src/store/migrate-archive.ts';
import { SCHEMA_VERSION } from '../../src/store/migrations.ts';
import { openStore } from '../../src/store/open-store.ts';
import { POSTGRES_SCHEMA_VERSION } from '../../src/store/postgres/postgres-schema.ts';
import { TOKENIZER_VERSION_META } from '../../src/store/store-rules.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';

/**
 * An archive indexed by TOKENIZER_VERSION 1 (Harman's S stemmer: "buses" -> "buse") is brought to the current
 * terms by the store migration (SQLite 7, Postgres 4) plus `graphmemix migrate`'s relation upgrade, and then
 * answers exactly like an archive built fresh with the current tokenizer.
 *
 * The old archive is made by the real write path with the tokenizer module switched to the version-1 rule
 * (every importer of tokenize sees the mock), then marked as the schema before the migration (SQLite 6,
 * Postgres 3): migrations after those run again on it, so they must be re-runnable (IF NOT EXISTS).
 */
const legacy = vi.hoisted(() => ({ on: false }));
vi.mock('../../src/retrieval/tokenize.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/retrieval/tokenize.ts')>();
  return {
    ...actual,
    tokenize: (text: string) => (legacy.on ? actual.tokenizeWith(text, stemVersion1) : actual.tokenize(text)),
  };
});

/** The stem rule of TOKENIZER_VERSION 1, verbatim. */
function stemVersion1(token: string): string {
  if (token.length < 4 || !/^\p{L}+$/u.test(token)) return token;
  if (token.endsWith('ies') && !token.endsWith('eies') && !token.endsWith('aies')) {
    return `${token.slice(0, -3)}y`;
  }
  if (token.endsWith('es') && !/[aeo]es$/.test(token)) return token.slice(0, -1);
  if (token.endsWith('s') && !token.endsWith('us') && !token.endsWith('ss')) return token.slice(0, -1);
  return token;
}

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-tokmig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterAll(dropTestDatabases);

const CONTEXT = 'alice';
const TEXTS = [
  'The buses were late again this morning',
  'I waited at the bus stop for twenty minutes',
  'We packed the boxes for the move',
  'One box is still in the hallway',
  'Visited two old churches in Porto',
  'The church near the river has blue tiles',
  'Washed all the dishes after dinner',
  'My favourite dish is grilled sardines',
  'Broke two glasses at the party',
  'A glass of wine on the terrace',
  'Cities in the north are cheaper',
  'The city was quiet on Sunday',
  'Watched two movies with Bob',
  'That movie made me cry',
];
const RECORDS = TEXTS.map((text, i) => ({
  id: `m${String(i).padStart(2, '0')}`,
  text,
  timestamp: `2024-05-${String(1 + i).padStart(2, '0')}`,
}));
const IDS = RECORDS.map((record) => record.id);
const QUERIES = ['bus', 'buses', 'boxes', 'church', 'dish glasses', 'city', 'movies', 'wine terrace'];

/** Writes the fixture through the real ingest path (views, relation keys, journal -> relations). */
async function build(store: ArchiveStore, version: 1 | 'current'): Promise<void> {
  legacy.on = version === 1;
  try {
    const gm = await openGraphmemix({ db: 'fixture', store });
    await gm.addMemories(CONTEXT, RECORDS);
    await gm.close();
  } finally {
    legacy.on = false;
  }
}

/** Everything that depends on stored terms: lexical search, the semantic snapshot, lists and edges. */
async function termState(store: ArchiveStore) {
  const lexical: unknown[] = [];
  for (const query of QUERIES) {
    for (const limit of [2, 30]) lexical.push(await store.searchLexical(CONTEXT, query, { limit }));
  }
  const snapshot = await store.semantic.getSnapshot(CONTEXT);
  const df = await store.semantic.documentFrequencies(CONTEXT, ['bus', 'buse', 'box', 'boxe', 'church']);
  const docs = (await store.semantic.getDocs(CONTEXT, IDS)).sort((x, y) =>
    x.memoryId < y.memoryId ? -1 : 1,
  );
  const edges = (await store.neighbors(CONTEXT, IDS))
    .map((edge) => `${edge.a}-${edge.b}:${[...edge.types].sort().join(',')}:${edge.strength.toFixed(9)}`)
    .sort();
  return {
    lexical,
    snapshot: { space: snapshot?.space, documents: snapshot?.documents, k: snapshot?.k },
    df: [...df].sort(),
    docs,
    edges: [...new Set(edges)],
  };
}

/** A SQLite archive as schema 6 with TOKENIZER_VERSION 1 wrote it: same tables, no tokenizer version. */
async function oldSqliteArchive(name: string): Promise<string> {
  const file = join(dir, name);
  const old = await openStore(file);
  await build(old, 1);
  await old.close();
  const raw = new Database(file);
  raw.prepare('UPDATE schema_version SET version = 6').run();
  raw.prepare('DELETE FROM meta WHERE key = ?').run(TOKENIZER_VERSION_META);
  raw.close();
  return file;
}

async function freshState(name: string) {
  const fresh = await openStore(join(dir, name));
  await build(fresh, 'current');
  const state = await termState(fresh);
  await fresh.close();
  return state;
}

describe('tokenizer migration (TOKENIZER_VERSION 1 -> 2)', () => {
  it('SQLite: migration 7 reindexes postings, `migrate` rebuilds the semantic state; equal to a fresh build', async () => {
    const fresh = await openStore(join(dir, 'fresh.db'));
    await build(fresh, 'current');
    const expected = await termState(fresh);
    expect(await fresh.getMeta(TOKENIZER_VERSION_META)).toBe(
      (await import('../../src/retrieval/tokenize.ts')).TOKENIZER_VERSION,
    );
    await fresh.close();
    // "bus" now finds both the bus stop and the buses.
    expect((expected.lexical[0] as { memoryId: string }[]).map((hit) => hit.memoryId).sort()).toEqual([
      'm00',
      'm01',
    ]);

    const file = join(dir, 'old.db');
    const old = await openStore(file);
    await build(old, 1);
    const before = await termState(old);
    await old.close();
    // The fixture really holds version-1 terms: "buse" in the IDF snapshot, its hash in the dictionary.
    expect(before.df).toContainEqual(['buse', 1]);
    expect(before).not.toEqual(expected);
    const raw = new Database(file);
    expect(raw.prepare('SELECT 1 AS x FROM lex_terms WHERE term = ?').get(dictionaryKey('buse'))).toEqual({
      x: 1,
    });
    // What a schema-6 archive looks like: same tables, no tokenizer version.
    raw.prepare('UPDATE schema_version SET version = 6').run();
    raw.prepare('DELETE FROM meta WHERE key = ?').run(TOKENIZER_VERSION_META);
    raw.close();

    // Read-only before its migration: answered from the views, never from the old postings.
    const readonly = await openStore(file, { readonly: true });
    for (const query of QUERIES) {
      expect(await readonly.searchLexical(CONTEXT, query, { limit: 30 })).toEqual(
        expected.lexical[QUERIES.indexOf(query) * 2 + 1],
      );
    }
    await readonly.close();

    // `graphmemix migrate`: the store migration on open, then the relation upgrade it marked.
    const result = await migrateArchive(file);
    expect(result.schemaVersion).toBe(SCHEMA_VERSION);
    const migrated = await openStore(file);
    expect(await migrated.getMeta(`${UPGRADE_META_PREFIX}${CONTEXT}`)).toBe(true);
    expect(await finishRelationUpgrades(migrated)).toEqual({ rebuilt: [CONTEXT], deferred: [] });
    expect(await migrated.getMeta(`${UPGRADE_META_PREFIX}${CONTEXT}`)).toBeUndefined();
    const after = await termState(migrated);
    await migrated.close();
    expect(after).toEqual(expected);

    // Opening a migrated archive does no reindexing: the indexed documents keep their ids.
    const docs = () => {
      const db = new Database(file, { readonly: true });
      const row = db.prepare('SELECT count(*) AS n, max(id) AS last FROM lex_docs').get();
      db.close();
      return row;
    };
    const settled = docs();
    const reopened = await openStore(file);
    expect(await finishRelationUpgrades(reopened)).toEqual({ rebuilt: [], deferred: [] });
    await reopened.close();
    expect(docs()).toEqual(settled);
  });

  it('SQLite: `graphmemix migrate` (the CLI, current tokenizer) does both steps', async () => {
    const expected = await freshState('fresh-cli.db');
    const file = await oldSqliteArchive('old-cli.db');

    const bin = join(import.meta.dirname, '..', '..', 'bin', 'graphmemix.js');
    const run = spawnSync(process.execPath, [bin, 'migrate', '--db', file, '--json'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      schemaVersion: SCHEMA_VERSION,
      relations: { rebuilt: [CONTEXT] },
    });
    const migrated = await openStore(file);
    expect(await termState(migrated)).toEqual(expected);
    await migrated.close();
  });

  it('copying from a read-only, not yet migrated archive marks the target instead of copying stale terms', async () => {
    const expected = await freshState('fresh-copy.db');
    const source = await openStore(await oldSqliteArchive('old-copy.db'), { readonly: true });
    const target = await openStore(join(dir, 'copy-target.db'));
    const report = await copyArchive(source, target);
    await source.close();
    expect(report.contexts[0]!.semantic).toBe(false);
    expect(report.warnings.join(' ')).toMatch(/tokenizer version 1/);
    expect(await target.getMeta(`${UPGRADE_META_PREFIX}${CONTEXT}`)).toBe(true);
    expect(await finishRelationUpgrades(target)).toEqual({ rebuilt: [CONTEXT], deferred: [] });
    expect(await termState(target)).toEqual(expected);
    await target.close();
  });

  it("the relation upgrade keeps a context's k, defers an embedding context, drops a deleted context's mark", async () => {
    const store = await openStore(join(dir, 'marks.db'));
    await build(store, 'current');
    await compactSemantic(store, CONTEXT, { k: 3 });
    await store.writeMemories('dense', [
      {
        record: { id: 'd1', contextId: 'dense', kind: 'message', sequence: 1, text: 'x', assets: [] },
        views: [],
        contentHash: 'd1',
      },
    ]);
    await store.semantic.replaceAll(
      'dense',
      { space: 'embedding:test', documents: 1, k: 8, createdAt: '2024-01-01', df: new Map() },
      [],
    );
    for (const context of [CONTEXT, 'dense', 'gone']) {
      await store.setMeta(`${UPGRADE_META_PREFIX}${context}`, true);
    }
    expect(await finishRelationUpgrades(store)).toEqual({ rebuilt: [CONTEXT], deferred: ['dense'] });
    expect((await store.semantic.getSnapshot(CONTEXT))?.k).toBe(3);
    expect(await store.getMeta(`${UPGRADE_META_PREFIX}dense`)).toBe(true);
    expect(await store.getMeta(`${UPGRADE_META_PREFIX}gone`)).toBeUndefined();
    await store.close();
  });

  it.skipIf(PG_SKIP !== undefined)(
    'PostgreSQL: migration 4 reindexes postings, `migrate` rebuilds the semantic state; equal to a fresh build and to SQLite',
    async () => {
      const freshUrl = await createTestDatabase();
      const fresh = await openStore(freshUrl);
      await build(fresh, 'current');
      const expected = await termState(fresh);
      await fresh.close();

      const url = await createTestDatabase();
      const old = await openStore(url);
      await build(old, 1);
      expect((await termState(old)).df).toContainEqual(['buse', 1]);
      await old.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('DELETE FROM schema_migrations WHERE version >= 4');
        await client.query('DELETE FROM meta WHERE key = $1', [TOKENIZER_VERSION_META]);
      } finally {
        await client.end();
      }

      const result = await migrateArchive(url);
      expect(result).toMatchObject({ from: 3, schemaVersion: POSTGRES_SCHEMA_VERSION });
      const migrated = await openStore(url);
      try {
        expect(await migrated.getMeta(TOKENIZER_VERSION_META)).toBe(2);
        expect(await finishRelationUpgrades(migrated)).toEqual({ rebuilt: [CONTEXT], deferred: [] });
        const after = await termState(migrated);
        expect(after).toEqual(expected);
      } finally {
        await migrated.close();
      }

      // Same ids and scores as the SQLite backend (BM25 conformance, 1e-6).
      const sqlite = await openStore(join(dir, 'conformance.db'));
      await build(sqlite, 'current');
      const reference = await termState(sqlite);
      await sqlite.close();
      expected.lexical.forEach((hits, n) => {
        const other = reference.lexical[n] as { memoryId: string; rawScore: number }[];
        const mine = hits as { memoryId: string; rawScore: number }[];
        expect(mine.map((hit) => hit.memoryId)).toEqual(other.map((hit) => hit.memoryId));
        mine.forEach((hit, i) => {
          expect(Math.abs(hit.rawScore - other[i]!.rawScore)).toBeLessThan(1e-6);
        });
      });
    },
    120_000,
  );
});
