import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/store/migrations.ts';
import { POSTGRES_SCHEMA_VERSION } from '../../src/store/postgres/postgres-schema.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from '../store/postgres-test-db.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'graphmemix.js');
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-migrate-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterAll(dropTestDatabases);

function cli(...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('graphmemix migrate', () => {
  it('migrates a SQLite file (created when absent), idempotently', () => {
    const db = join(dir, 'a.db');
    for (let run = 0; run < 2; run++) {
      const result = cli('migrate', '--db', db, '--json');
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({
        backend: 'sqlite',
        schemaVersion: SCHEMA_VERSION,
        relations: { rebuilt: [], deferred: [] },
      });
    }
  });

  it.skipIf(PG_SKIP !== undefined)('migrates a PostgreSQL database, idempotently', async () => {
    const url = await createTestDatabase();
    const first = cli('migrate', '--db', url, '--json');
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      backend: 'postgres',
      schemaVersion: POSTGRES_SCHEMA_VERSION,
      from: 0,
    });
    const again = cli('migrate', '--db', url);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(
      new RegExp(`^postgres schema ${POSTGRES_SCHEMA_VERSION} \\(was ${POSTGRES_SCHEMA_VERSION}\\)`),
    );
  });

  it('fails with STORE and no password in the message when the server is unreachable', () => {
    const result = cli('migrate', '--db', 'postgres://user:hunter2@127.0.0.1:1/none');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/STORE|store/);
    expect(result.stderr).not.toContain('hunter2');
  });
});
