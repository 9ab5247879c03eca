import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/store/migrations.ts';
import { openStore } from '../../src/store/open-store.ts';
import { BULK_MEMORY_WRITE_UNCHECKED_FROM } from '../../src/store/sqlite-bulk-write-pragmas.ts';
import { createSqliteStore } from '../../src/store/sqlite-store.ts';
import { describeStoreConformance, write } from './store-conformance.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-sqlite-'));
let counter = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeStoreConformance('sqlite file', () => openStore(join(dir, `store-${counter++}.db`)));
describeStoreConformance('sqlite :memory:', () => openStore(':memory:'));
// The stored IVF from 4 vectors a space (usearch as missing): every vector path of the suite through it.
describeStoreConformance('sqlite stored IVF', async () =>
  createSqliteStore(join(dir, `ivf-${counter++}.db`), {
    ivf: { threshold: 4 },
    ann: {
      load: () => Promise.reject(Object.assign(new Error('absent'), { code: 'ERR_MODULE_NOT_FOUND' })),
    },
  }),
);

describe('sqlite store specifics', () => {
  it('a bulk writeMemories (new, then updated memories) leaves no orphan row and the foreign-key checks on', async () => {
    const file = join(dir, 'bulk-unchecked.db');
    const store = await openStore(file);
    const n = BULK_MEMORY_WRITE_UNCHECKED_FROM + 6;
    const batch = (version: string) =>
      Array.from({ length: n }, (_, i) => {
        const base = write('ctx', `m${i}`, `note ${i} about the harbour ${version}`, i);
        const record = { ...base.record, agentId: 'agent-1', metadata: { topic: `t${i % 3}` } };
        return { ...base, record, keys: [`turn:s${i % 4}`, `round:s${i % 4}:${i}`] };
      });
    // New memories (the fresh-rows path), then every one of them updated (the history, tags and views path).
    expect((await store.writeMemories('ctx', batch('v1'))).inserted).toHaveLength(n);
    expect((await store.writeMemories('ctx', batch('v2'))).updated).toHaveLength(n);
    const connection = (store as unknown as { db: Database.Database }).db;
    expect(connection.pragma('foreign_keys', { simple: true })).toBe(1);
    await store.close();
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('foreign_key_check')).toEqual([]);
    const count = (table: string) => raw.prepare(`SELECT count(*) FROM ${table}`).pluck().get();
    expect([count('memories'), count('views'), count('memory_keys'), count('memory_versions')]).toEqual([
      n,
      2 * n,
      2 * n,
      n,
    ]);
    expect(count('memory_tags')).toBe(2 * n);
    raw.close();
  });

  it('persists across reopen, in WAL mode', async () => {
    const file = join(dir, 'persist.db');
    const store = await openStore(file);
    await store.writeMemories('ctx', [write('ctx', 'm1', 'kept across reopen', 0)]);
    await store.putVectors('ctx', 's', [
      { memoryId: 'm1', kind: 'text', key: 'main', vector: new Float32Array([0.5, 0.25]) },
    ]);
    await store.close();
    const again = await openStore(file);
    expect((await again.getMemory('ctx', 'm1'))?.text).toBe('kept across reopen');
    expect([...(await again.getVectors('ctx', 's'))[0]!.vector]).toEqual([0.5, 0.25]);
    expect((await again.searchLexical('ctx', 'reopen', { limit: 3 })).map((h) => h.memoryId)).toEqual(['m1']);
    await again.close();
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
  });

  it('sees writes made through another connection (version-checked caches)', async () => {
    const file = join(dir, 'shared.db');
    const reader = await openStore(file);
    const writer = await openStore(file);
    await writer.writeMemories('ctx', [write('ctx', 'm1', 'first words', 0)]);
    expect(await reader.searchLexical('ctx', 'second', { limit: 3 })).toEqual([]);
    await writer.writeMemories('ctx', [write('ctx', 'm2', 'second words', 1)]);
    expect((await reader.searchLexical('ctx', 'second', { limit: 3 })).map((h) => h.memoryId)).toEqual([
      'm2',
    ]);
    await reader.close();
    await writer.close();
  });

  it('refuses a store written by a newer schema with code STORE', async () => {
    const file = join(dir, 'newer.db');
    (await openStore(file)).close();
    const raw = new Database(file);
    raw.prepare('UPDATE schema_version SET version = ?').run(SCHEMA_VERSION + 1);
    raw.close();
    await expect(openStore(file)).rejects.toMatchObject({ code: 'STORE' });
  });

  it('refuses files that are not graphmemix stores', async () => {
    const foreign = join(dir, 'foreign.db');
    const raw = new Database(foreign);
    raw.exec('CREATE TABLE people (name TEXT)');
    raw.close();
    await expect(openStore(foreign)).rejects.toMatchObject({ code: 'STORE' });
    const text = join(dir, 'text.db');
    writeFileSync(text, 'this is not a database at all, just some text that is long enough '.repeat(20));
    await expect(openStore(text)).rejects.toMatchObject({ code: 'STORE' });
    await expect(openStore(join(dir, 'missing-dir', 'x.db'))).rejects.toMatchObject({ code: 'STORE' });
  });

  it('throws STORE after close', async () => {
    const store = await openStore(':memory:');
    await store.close();
    await expect(store.countMemories('ctx')).rejects.toMatchObject({ code: 'STORE' });
  });
});
