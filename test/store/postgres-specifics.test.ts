import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { MemoryWrite } from '../../src/store/archive-store-spec.ts';
import { migratePostgres } from '../../src/store/postgres/postgres-migrate.ts';
import {
  PER_CONTEXT_TABLES,
  POSTGRES_MIGRATIONS,
  POSTGRES_SCHEMA_VERSION,
} from '../../src/store/postgres/postgres-schema.ts';
import { scopedBeginSql } from '../../src/store/postgres/postgres-session.ts';
import {
  FIND_BY_KEYS_SQL,
  openPostgresStore,
  type PostgresArchiveStore,
} from '../../src/store/postgres/postgres-store.ts';
import {
  asStoreError,
  QUESTION_STATEMENT_TIMEOUT_MS,
} from '../../src/store/postgres/postgres-transaction-sql.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { write } from './store-conformance.ts';

if (PG_SKIP) console.warn(`[postgres store specifics skipped] ${PG_SKIP}`);
afterAll(dropTestDatabases);

/** Every per-context table gets at least one row of `contextId` (memories, views, keys, edges, ...). */
async function fill(store: PostgresArchiveStore, contextId: string): Promise<void> {
  await store.writeMemories(contextId, [
    { ...write(contextId, 'm1', `secret words of ${contextId}`, 0), keys: ['k:one'] },
    { ...write(contextId, 'm2', `more words of ${contextId}`, 1), keys: ['k:one'] },
  ]);
  await store.writeMemories(contextId, [write(contextId, 'm2', `changed words of ${contextId}`, 1)]);
  // A scoped memory (memory_tags rows; the update above gave memory_versions a row).
  const scoped = write(contextId, 'm3', `scoped words of ${contextId}`, 2);
  await store.writeMemories(contextId, [{ ...scoped, record: { ...scoped.record, agentId: 'bot' } }]);
  await store.replaceEdges(
    contextId,
    ['same_round'],
    [{ contextId, a: 'm1', b: 'm2', types: ['same_round'], strength: 0.9 }],
  );
  await store.putVectors(contextId, 'space', [
    { memoryId: 'm1', kind: 'text', key: 'main', vector: new Float32Array([1, 0]) },
  ]);
  await store.putQuestions([{ id: 'q1', contextId, prompt: 'p', answer: { text: 'x' }, evidence: [] }]);
  await store.semantic.replaceAll(
    contextId,
    { space: 'tfidf', documents: 2, k: 8, createdAt: '2026-01-01T00:00:00Z', df: new Map([['words', 2]]) },
    [
      { memoryId: 'm1', terms: ['words'], weights: [1], neighbours: [{ memoryId: 'm2', score: 0.5 }] },
      { memoryId: 'm2', terms: ['words'], weights: [1], neighbours: [] },
    ],
  );
}

/** A store on a new database with spaces above 50 vectors on HNSW; undefined (said) without pgvector. */
async function openWithPgvector(): Promise<{ url: string; store: PostgresArchiveStore } | undefined> {
  const url = await createTestDatabase();
  const store = await openPostgresStore({ url, approximateVectorsAbove: 50 });
  if (store.vectorSupport !== 'exact') return { url, store };
  console.warn('[postgres] pgvector is not installed on the test server: HNSW path not exercised');
  await store.close();
  return undefined;
}

describe.skipIf(PG_SKIP !== undefined)('postgres store specifics', () => {
  it('isolation is enforced by the database: unscoped queries through the pool see one context only', async () => {
    const store = await openPostgresStore({ url: await createTestDatabase(), maxConnections: 2 });
    await fill(store, 'alice');
    await fill(store, 'bob');
    const seen: Record<string, number> = {};
    for (const table of PER_CONTEXT_TABLES) {
      const column = table === 'contexts' ? 'id' : 'context_id';
      // Deliberately no WHERE: only row-level security stands between alice and bob's rows.
      const rows = await store.queryInContext('alice', `SELECT ${column} AS owner FROM ${table}`);
      expect(
        rows.filter((row) => row.owner !== 'alice'),
        table,
      ).toEqual([]);
      seen[table] = rows.length;
      expect(await store.queryInContext('nobody', `SELECT * FROM ${table}`), table).toEqual([]);
    }
    // The fill reached every table, so the zero above is not vacuous.
    for (const table of PER_CONTEXT_TABLES) expect(seen[table], table).toBeGreaterThan(0);
    const texts = await store.queryInContext('alice', 'SELECT text FROM views');
    expect(texts.some((row) => String(row.text).includes('bob'))).toBe(false);
    // The connecting role is a superuser here; the transaction runs as the non-bypassing role.
    const [who] = await store.queryInContext('alice', 'SELECT current_user AS name');
    expect(who!.name).toBe('graphmemix_rls');
    // Cross-context reads go through the explicit path only.
    expect((await store.listContexts()).map((c) => c.id)).toEqual(['alice', 'bob']);
    expect((await store.listQuestions()).map((q) => q.contextId)).toEqual(['alice', 'bob']);
    expect(await store.integrityCheck()).toEqual({ ok: true, problems: [] });
    await store.close();
  });

  it('a context written after the last ANALYZE is searched by key through the index, not walked', async () => {
    // Issue #11: statistics that never saw a context estimate it at one row; a custom plan then walked the
    // whole context per findByKeys call (~1 s at 1,000 memories). Transactions plan generically instead.
    const url = await createTestDatabase();
    const store = await openPostgresStore({ url, maxConnections: 2 });
    const keyedWrite = (contextId: string, i: number): MemoryWrite => ({
      ...write(contextId, `m${i}`, `memory ${i}`, i),
      keys: [`round:${Math.floor(i / 2)}`, `session:${i % 7}`],
    });
    await store.writeMemories(
      'early',
      Array.from({ length: 200 }, (_, i) => keyedWrite('early', i)),
    );
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('ANALYZE');
    const late = Array.from({ length: 1500 }, (_, i) => keyedWrite('late', i));
    for (let i = 0; i < late.length; i += 500) await store.writeMemories('late', late.slice(i, i + 500));
    expect((await store.findByKeys('late', ['round:7'])).map((record) => record.id)).toEqual(['m14', 'm15']);

    // The store's own statement, planned as the store plans it (same transaction settings, parameters).
    await admin.query(scopedBeginSql('late', 'read', true));
    await admin.query(`PREPARE find_by_keys(text, text[], bigint) AS ${FIND_BY_KEYS_SQL}`);
    const explained = await admin.query(
      `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE find_by_keys('late', ARRAY['round:7'], NULL)`,
    );
    await admin.query('ROLLBACK');
    await admin.end();
    type PlanNode = Record<string, unknown> & { Plans?: PlanNode[] };
    let rowsVisited = 0;
    const visit = (node: PlanNode): void => {
      if (node['Relation Name'] === 'memories' || node['Relation Name'] === 'memory_keys') {
        const loops = Number(node['Actual Loops'] ?? 1);
        rowsVisited +=
          (Number(node['Actual Rows'] ?? 0) + Number(node['Rows Removed by Filter'] ?? 0)) * loops;
      }
      for (const child of node.Plans ?? []) visit(child);
    };
    const [{ Plan: plan }] = explained.rows[0]['QUERY PLAN'] as [{ Plan: PlanNode }];
    visit(plan);
    // Two key rows and two records; a walk of the context visits 1,500 rows or more.
    expect(rowsVisited).toBeGreaterThan(0);
    expect(rowsVisited).toBeLessThanOrEqual(8);
    await store.close();
  });

  it('hostile context ids are data, never SQL; a NUL is INVALID_INPUT', async () => {
    const store = await openPostgresStore({ url: await createTestDatabase(), maxConnections: 2 });
    const hostile = ["o'brien\\", "x', true); DROP TABLE memories; --", 'ünï 😀 \\\\'];
    for (const id of hostile) await fill(store, id);
    await fill(store, 'plain');
    for (const id of hostile) {
      expect((await store.listMemories(id)).map((record) => record.contextId)).toEqual([id, id, id]);
      const rows = await store.queryInContext(id, 'SELECT DISTINCT context_id FROM memories');
      expect(rows).toEqual([{ context_id: id }]);
    }
    expect((await store.listContexts()).length).toBe(4);
    await expect(store.countMemories('a\u0000b')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await store.close();
  });

  it('a transaction that set no context sees no rows at all', async () => {
    const url = await createTestDatabase();
    const store = await openPostgresStore({ url });
    await fill(store, 'alice');
    await store.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('BEGIN; SET LOCAL ROLE graphmemix_rls');
    for (const table of PER_CONTEXT_TABLES) {
      expect((await client.query(`SELECT * FROM ${table}`)).rows, table).toEqual([]);
    }
    // Writing another context's row is refused by the policy's WITH CHECK.
    await client.query("SELECT set_config('graphmemix.context_id', 'alice', true)");
    await expect(client.query("INSERT INTO contexts (id) VALUES ('mallory')")).rejects.toThrow(
      /row-level security/,
    );
    await client.query('ROLLBACK');
    await client.end();
  });

  it('concurrent writers on several pools lose no write and keep counters exact', async () => {
    const url = await createTestDatabase();
    const writers = await Promise.all([0, 1, 2, 3].map(() => openPostgresStore({ url, maxConnections: 3 })));
    const perWriter = 40;
    await Promise.all(
      writers.map(async (store, w) => {
        for (let i = 0; i < perWriter; i += 4) {
          const batch: MemoryWrite[] = [];
          for (let j = i; j < i + 4; j++)
            batch.push(write('shared', `w${w}-${j}`, `writer ${w} item ${j} common`, j));
          // Half the batches go through concurrent calls of the same store (its pool), half in sequence.
          await Promise.all([
            store.writeMemories('shared', batch.slice(0, 2)),
            store.writeMemories('shared', batch.slice(2)),
          ]);
        }
        // Each writer also updates one shared memory and deletes one of its own.
        await store.writeMemories('shared', [write('shared', 'contested', `version from ${w}`, 999)]);
        await store.deleteMemory('shared', `w${w}-0`);
      }),
    );
    const store = writers[0]!;
    const total = writers.length * perWriter - writers.length + 1;
    expect(await store.countMemories('shared')).toBe(total);
    expect((await store.listMemories('shared')).length).toBe(total);
    // Journal: one entry per insert, per contested update and per delete, in commit order.
    const status = await store.relationWorkStatus('shared');
    expect(status.pending).toBe(writers.length * perWriter + writers.length + writers.length);
    const work = await store.pendingRelationWork('shared', 10_000);
    expect(work.map((entry) => entry.seq)).toEqual([...work.map((entry) => entry.seq)].sort((x, y) => x - y));
    const hits = await store.searchLexical('shared', 'common', { limit: 1000, kinds: ['text'] });
    expect(hits.length).toBe(total - 1); // the contested memory's text has no "common"
    expect(await store.integrityCheck()).toEqual({ ok: true, problems: [] });
    await Promise.all(writers.map((writer) => writer.close()));
  });

  it('migrations are versioned, idempotent and safe when several processes open at once', async () => {
    const url = await createTestDatabase();
    const opened = await Promise.all([0, 1, 2].map(() => openPostgresStore({ url, maxConnections: 1 })));
    await Promise.all(opened.map((store) => store.close()));
    const report = await migratePostgres(url);
    expect(report).toMatchObject({ from: POSTGRES_SCHEMA_VERSION, to: POSTGRES_SCHEMA_VERSION });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const versions = await client.query('SELECT version FROM schema_migrations ORDER BY version');
    expect(versions.rows.map((row) => row.version)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
    await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [POSTGRES_SCHEMA_VERSION + 1]);
    await client.end();
    await expect(openPostgresStore({ url })).rejects.toMatchObject({ code: 'STORE' });
  });

  it('refuses a database that holds a foreign memories table, and an unreachable server, with STORE', async () => {
    const url = await createTestDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('CREATE TABLE memories (x integer)');
    await client.end();
    await expect(openPostgresStore({ url })).rejects.toMatchObject({ code: 'STORE' });
    await expect(openPostgresStore({ url: 'postgres://nobody@127.0.0.1:1/none' })).rejects.toMatchObject({
      code: 'STORE',
    });
  });

  it('detects pgvector and serves large spaces from the HNSW index', async () => {
    const opened = await openWithPgvector();
    if (!opened) return;
    const { url, store } = opened;
    expect(store.vectorSupport).toBe('pgvector');
    const writes = Array.from({ length: 120 }, (_, i) => write('ctx', `m${i}`, `memory ${i}`, i));
    await store.writeMemories('ctx', writes);
    await store.writeMemories('other', [write('other', 'x', 'foreign', 0)]);
    const vectorOf = (i: number) => new Float32Array([Math.cos(i / 20), Math.sin(i / 20), (i % 7) / 7]);
    await store.putVectors(
      'ctx',
      'emb',
      writes.map((_, i) => ({ memoryId: `m${i}`, kind: 'text' as const, key: 'main', vector: vectorOf(i) })),
    );
    await store.putVectors('other', 'emb', [
      { memoryId: 'x', kind: 'text', key: 'main', vector: vectorOf(42) },
    ]);
    const hits = await store.searchVectors('ctx', 'emb', vectorOf(42), { limit: 5 });
    expect(hits.length).toBe(5);
    expect(hits[0]).toMatchObject({ memoryId: 'm42', kind: 'text', key: 'main' });
    expect(hits[0]!.rawScore).toBeCloseTo(1, 5);
    const indexes = await store.queryInContext(
      'ctx',
      "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'vectors_hnsw_%'",
    );
    expect(indexes.length).toBe(1);
    // The planner can use it for the search's exact expression (a 121-row table would be scanned otherwise).
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('BEGIN; SET LOCAL enable_seqscan = off');
    const plan = await client.query(`EXPLAIN SELECT memory_id FROM vectors WHERE space = 'emb' AND dims = 3
      ORDER BY (embedding::vector(3)) <=> '[1,0,0]'::vector(3) LIMIT 5`);
    expect(JSON.stringify(plan.rows)).toMatch(/vectors_hnsw_/);
    await client.query('ROLLBACK');
    await client.end();
    await store.close();
  });

  it("a process's first vector write inside a unit of work does not wait on its own HNSW index creation", async () => {
    const opened = await openWithPgvector();
    if (!opened) return;
    const { url, store: first } = opened;
    const row = (id: string, x: number) => ({
      memoryId: id,
      kind: 'text' as const,
      key: 'main',
      vector: new Float32Array([x, 1 - x]),
    });
    await first.writeMemories('ctx', [write('ctx', 'a', 'alpha', 0), write('ctx', 'b', 'beta', 1)]);
    await first.putVectors('ctx', 'emb', [row('a', 0.2)]);
    await first.close();
    // A new process on the archive: its first write of the space, and of a space never written, inside a unit
    // (the add path). Before, CREATE INDEX waited on the unit's own lock and the unit on it: forever.
    const second = await openPostgresStore({ url, approximateVectorsAbove: 50 });
    const within = <T>(work: Promise<T>) =>
      Promise.race([
        work,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('hung on its own lock')), 15_000),
        ),
      ]);
    await within(
      second.unitOfWork!('ctx', async () => {
        await second.putVectors('ctx', 'emb', [row('b', 0.7)]);
        await second.putVectors('ctx', 'fresh', [row('a', 0.5)]);
      }),
    );
    const indexes = async () =>
      (
        await second.queryInContext(
          'ctx',
          "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'vectors_hnsw_%' ORDER BY indexname",
        )
      ).length;
    expect(await indexes()).toBe(1);
    // The deferred index is made by the space's next write outside a unit.
    await second.putVectors('ctx', 'fresh', [row('b', 0.9)]);
    expect(await indexes()).toBe(2);
    expect(
      (await second.searchVectors('ctx', 'emb', new Float32Array([0.7, 0.3]), { limit: 1 }))[0],
    ).toMatchObject({
      memoryId: 'b',
    });
    await second.close();
  });

  it("a question's read unit runs under the statement backstop; a cancelled statement is a STORE error", async () => {
    const url = await createTestDatabase();
    const sent: string[] = [];
    // Patched before the store opens: its pooled clients keep the query function they were made with.
    const original = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const first = args[0];
      const text = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text;
      if (typeof text === 'string') sent.push(text);
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    const store = await openPostgresStore({ url, maxConnections: 2 });
    try {
      await fill(store, 'u');
      sent.length = 0;
      await store.unitOfWork!('u', () => store.getMemories('u', ['m1']), { read: true });
      await store.getMemories('u', ['m2']);
    } finally {
      pg.Client.prototype.query = original;
    }
    const begins = sent.filter((text) => text.startsWith('BEGIN'));
    const readUnit = begins.find((text) => text.includes('statement_timeout'));
    expect(readUnit).toContain(`SET LOCAL statement_timeout = ${QUESTION_STATEMENT_TIMEOUT_MS};`);
    expect(readUnit).toMatch(/^BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;/);
    // Only the read unit: the plain scoped read has no backstop (nor do writes and maintenance).
    expect(begins.filter((text) => text.includes('statement_timeout'))).toHaveLength(1);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    // The unit's settings as sent (its read-ahead after them names a statement prepared on the store's client).
    const setting = `statement_timeout = ${QUESTION_STATEMENT_TIMEOUT_MS};`;
    await admin.query(readUnit!.slice(0, readUnit!.indexOf(setting) + setting.length));
    expect((await admin.query('SHOW statement_timeout')).rows[0].statement_timeout).toBe('30s');
    await admin.query('ROLLBACK');
    await admin.query('BEGIN; SET LOCAL statement_timeout = 20;');
    const cancelled = await admin.query('SELECT pg_sleep(2)').then(
      () => undefined,
      (error: unknown) => error,
    );
    await admin.query('ROLLBACK');
    await admin.end();
    expect(asStoreError(cancelled, 'test')).toMatchObject({
      code: 'STORE',
      details: { reason: 'statement_cancelled' },
    });
    await store.close();
  });
});
