import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'graphmemix.js');
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-limits-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('graphmemix ingest with an oversized line', () => {
  it('imports the 1,000 valid lines around a 10k-deep metadata line and rejects that one by line number', async () => {
    const depth = 10_000;
    const deep = `{"id":"deep","text":"deep one","metadata":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
    const lines: string[] = [];
    for (let i = 0; i < 1000; i++) {
      if (i === 500) lines.push(deep);
      lines.push(JSON.stringify({ id: `m${i}`, text: `note number ${i} about the garden`, sequence: i }));
    }
    const file = join(dir, 'archive.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const db = join(dir, 'a.db');
    const run = cli('ingest', file, '--format', 'unified', '--db', db, '--context', 'alice', '--json');
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as { imported: number; rejections: Record<string, unknown>[] };
    expect(summary.imported).toBe(1000);
    expect(summary.rejections).toHaveLength(1);
    expect(summary.rejections[0]).toMatchObject({
      line: 501,
      code: 'TOO_LARGE',
      field: 'metadata',
      recordId: 'deep',
    });
    const store = await openStore(db, { readonly: true });
    expect(await store.countMemories('alice')).toBe(1000);
    await store.close();
  });
});
