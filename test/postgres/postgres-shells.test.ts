import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startReplica } from '../../bench/support/replica-cluster.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { readPoolOf } from '../../src/read-workers/with-read-workers.ts';
import { createServer } from '../../src/server/create-server.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from '../store/postgres-test-db.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'graphmemix.js');
const dir = mkdtempSync(join(tmpdir(), 'gm-pg-shells-'));
afterAll(async () => {
  await dropTestDatabases();
  rmSync(dir, { recursive: true, force: true });
});
if (PG_SKIP) console.log(`postgres shells: skipped: ${PG_SKIP}`);

// The throwaway cluster trusts local connections, so a password in the URL is accepted and ignored: it
// stands for a real secret that must never appear in any output.
const SECRET = 'Hunter2-NotInLogs';
const withPassword = (url: string) => url.replace('postgres://postgres@', `postgres://postgres:${SECRET}@`);

function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    cwd: dir,
    env: { ...process.env, GRAPHMEMIX_CONFIG: '', GRAPHMEMIX_DB: '', ...env },
  });
  return { code: result.status, out: `${result.stdout}${result.stderr}`, stdout: result.stdout };
}

describe.skipIf(PG_SKIP !== undefined)('a postgres:// --db in the library and every shell', () => {
  it('library: write worker and read workers each open the same URL', async () => {
    const db = withPassword(await createTestDatabase());
    const gm = await openGraphmemix({ db, writeWorker: true, readWorkers: 1 });
    try {
      expect(readPoolOf(gm)?.size).toBe(1);
      expect(gm.store.backend).toBe('postgres');
      const report = await gm.addMemories('alice', [
        { id: 'a1', text: 'The design review moved to Monday', timestamp: '2024-04-01' },
        { id: 'a2', text: 'Flight to Lisbon on Friday', timestamp: '2024-04-02' },
      ]);
      expect(report.imported).toBe(2);
      await gm.addMemories('bob', [{ id: 'b1', text: 'The design review of bob', timestamp: '2024-04-01' }]);
      const result = await gm.retrieve('alice', 'When is the design review?', { k: 4 });
      expect(result.evidence.map((e) => e.memoryId)).toContain('a1');
      expect(result.evidence.every((e) => e.memoryId.startsWith('a'))).toBe(true);
      const app = createServer({ graphmemix: gm, open: true, mediaDir: join(dir, 'media') });
      const health = (await (await app.request('/v1/health')).json()) as Record<string, unknown>;
      expect(health).toMatchObject({ status: 'ok', backend: 'postgres', vector_support: 'pgvector' });
    } finally {
      await gm.close();
    }
  }, 120_000);

  it('CLI: ingest, retrieve, compact, copy, --version and serve take the URL (flag, env or config); no password in any output', async () => {
    const db = withPassword(await createTestDatabase());
    const file = join(dir, 'alice.jsonl');
    writeFileSync(
      file,
      [
        { id: 'm1', text: 'The ceramics class moved to Thursday', timestamp: '2024-05-01' },
        { id: 'm2', text: 'Dentist appointment on Tuesday at noon', timestamp: '2024-05-02' },
      ]
        .map((r) => `${JSON.stringify(r)}\n`)
        .join(''),
    );
    const outputs: string[] = [];
    const run = (args: string[], env?: NodeJS.ProcessEnv) => {
      const result = cli(args, env);
      outputs.push(result.out);
      expect(result.code, result.out).toBe(0);
      return result;
    };
    run(['ingest', file, '--format', 'unified', '--db', db, '--context', 'alice', '--json']);
    // No --db: $GRAPHMEMIX_DB, then the config file's "db".
    const viaEnv = run(['retrieve', 'When is the ceramics class?', '--context', 'alice', '--json'], {
      GRAPHMEMIX_DB: db,
    });
    expect(JSON.parse(viaEnv.stdout).evidence[0].memory_id).toBe('m1');
    const config = join(dir, 'graphmemix.config.json');
    writeFileSync(config, JSON.stringify({ db }));
    const viaConfig = run(['retrieve', 'dentist', '--context', 'alice', '--config', config, '--json']);
    expect(JSON.parse(viaConfig.stdout).evidence[0].memory_id).toBe('m2');
    run(['compact', '--db', db, '--context', 'alice']);
    const version = run(['--version', '--db', db, '--json']);
    expect(JSON.parse(version.stdout)).toMatchObject({ backend: 'postgres', vector_support: 'pgvector' });
    expect(JSON.parse(version.stdout).db).toContain('[redacted]@127.0.0.1');
    run(['copy', '--from', db, '--to', join(dir, 'down.db')]);
    const down = run(['retrieve', 'dentist', '--db', join(dir, 'down.db'), '--context', 'alice', '--json']);
    expect(JSON.parse(down.stdout).evidence[0].memory_id).toBe('m2');
    // A failure names the server without the password.
    const refused = cli([
      'retrieve',
      'x',
      '--db',
      withPassword('postgres://postgres@127.0.0.1:1/none'),
      '--context',
      'a',
    ]);
    outputs.push(refused.out);
    expect(refused.code).toBe(74);
    expect(refused.out).toContain('127.0.0.1:1');

    const replica = await startReplica(db, { mediaDir: join(dir, 'media') });
    try {
      const health = (await (await fetch(`${replica.url}/v1/health`)).json()) as Record<string, unknown>;
      expect(health).toMatchObject({ backend: 'postgres', vector_support: 'pgvector' });
    } finally {
      await replica.stop();
    }
    for (const output of outputs) expect(output).not.toContain(SECRET);
  }, 300_000);
});
