import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { createServer } from '../../src/server/create-server.ts';
import { openStore } from '../../src/store/open-store.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'graphmemix.js');
const dir = mkdtempSync(join(tmpdir(), 'gm-concurrent-writers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const record = (prefix: string, i: number) => ({
  id: `${prefix}${i}`,
  text: `${prefix} note ${i}: the ceramics class ${i % 29} moved to the studio by the river ${i % 7}`,
  sessionId: `${prefix}s${Math.floor(i / 10)}`,
  timestamp: new Date(Date.UTC(2024, 0, 1) + i * 600_000).toISOString(),
});

/** `graphmemix ingest` in its own process; resolves with its exit code and output. */
function ingestProcess(file: string, db: string, context: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((resolve) => {
    const t0 = performance.now();
    const child = spawn(
      process.execPath,
      [BIN, 'ingest', file, '--format', 'unified', '--db', db, '--context', context, '--json'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: performance.now() - t0 }));
  });
}

/**
 * Issue #12 item 4: writers serialize. Three writers share one SQLite file at once: the server's write worker
 * (HTTP POST /v1/memories batches, for as long as the others run) and two `graphmemix ingest` processes.
 * SQLite allows one writer at a time; BEGIN IMMEDIATE with busy_timeout makes the others wait instead of
 * failing, so every write commits, no request answers 500, and the file ends whole with every record.
 */
describe('concurrent writers on one archive (server write worker + two CLI processes)', () => {
  it('commits every write, without "database is locked", and leaves an intact store', async () => {
    const db = join(dir, 'shared.db');
    const graphmemix = await openGraphmemix({ db, writeWorker: true });
    const app = createServer({ graphmemix, open: true, mediaDir: join(dir, 'media') });
    const files = ['bob', 'carol'].map((context) => {
      const file = join(dir, `${context}.jsonl`);
      const lines = Array.from({ length: 3000 }, (_, i) => JSON.stringify(record(context, i)));
      writeFileSync(file, `${lines.join('\n')}\n`);
      return { context, file };
    });
    try {
      const children = files.map(({ file, context }) => ingestProcess(file, db, context));
      let childrenDone = false;
      void Promise.all(children).then(() => {
        childrenDone = true;
      });
      // HTTP writes for as long as the processes write (bounded), so the three really overlap.
      const statuses: number[] = [];
      const bodies: string[] = [];
      let batch = 0;
      while ((!childrenDone || batch < 4) && batch < 60) {
        const memories = Array.from({ length: 100 }, (_, i) => record('alice', batch * 100 + i));
        const response = await app.request('/v1/memories', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ user_id: 'alice', memories }),
        });
        statuses.push(response.status);
        const body = await response.text();
        if (response.status !== 200) bodies.push(body.slice(0, 300));
        batch++;
      }
      const results = await Promise.all(children);
      for (const result of results) {
        expect(result.stderr).not.toMatch(/locked|SQLITE_BUSY/i);
        expect(result.code, result.stderr).toBe(0);
        expect(JSON.parse(result.stdout)).toMatchObject({ imported: 3000 });
      }
      expect(bodies).toEqual([]);
      expect(statuses.every((status) => status === 200)).toBe(true);
      console.log(
        `writers: ${batch} HTTP batches of 100 alongside 2 x 3000-record ingest processes ` +
          `(${results.map((r) => `${(r.ms / 1000).toFixed(1)} s`).join(', ')})`,
      );

      await graphmemix.close();
      const store = await openStore(db);
      try {
        expect(await store.integrityCheck()).toMatchObject({ ok: true, problems: [] });
        expect(await store.countMemories('alice')).toBe(batch * 100);
        expect(await store.countMemories('bob')).toBe(3000);
        expect(await store.countMemories('carol')).toBe(3000);
      } finally {
        await store.close();
      }
    } finally {
      await graphmemix.close();
    }
  }, 180_000);
});
