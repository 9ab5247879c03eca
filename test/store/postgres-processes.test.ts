import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';

const CHILD = join(import.meta.dirname, 'postgres-writer-child.ts');
afterAll(dropTestDatabases);

function writer(url: string, name: string, count: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, url, name, String(count)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`writer ${name} exited ${code}`)),
    );
  });
}

describe.skipIf(PG_SKIP !== undefined)('postgres store: writers in several processes', () => {
  it('three processes writing one context lose no acknowledged write and keep counters exact', async () => {
    const url = await createTestDatabase();
    // Migrated once first, so the children open an existing schema (their concurrent opens are tested elsewhere).
    await (await openPostgresStore({ url })).close();
    const names = ['p1', 'p2', 'p3'];
    const count = 30;
    const outputs = await Promise.all(names.map((name) => writer(url, name, count)));
    expect(outputs).toEqual(names.map(() => 'done\n'));
    const store = await openPostgresStore({ url });
    const expected = names.length * (count - 1) + 1;
    expect(await store.countMemories('shared')).toBe(expected);
    const ids = (await store.listMemories('shared')).map((record) => record.id);
    for (const name of names) {
      for (let i = 1; i < count; i++) expect(ids).toContain(`${name}-${i}`);
      expect(ids).not.toContain(`${name}-0`);
    }
    // One journal entry per insert, per update of "contested" after the first, per delete.
    expect((await store.relationWorkStatus('shared')).pending).toBe(
      names.length * count + 1 + 2 + names.length,
    );
    expect((await store.searchLexical('shared', 'common', { limit: 1000 })).length).toBe(expected - 1);
    expect(await store.integrityCheck()).toEqual({ ok: true, problems: [] });
    await store.close();
  });
});
