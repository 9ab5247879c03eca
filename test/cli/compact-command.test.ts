import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'graphmemix.js');
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-compact-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('graphmemix compact', () => {
  it('rebuilds the semantic state per context, honours --if-needed, and rejects unknown contexts', async () => {
    const file = join(dir, 'archive.jsonl');
    const texts = [
      'train to Porto booked',
      'the Porto train leaves at nine',
      'nine trains to Lisbon',
      'pasta',
    ];
    writeFileSync(
      file,
      `${texts.map((text, i) => JSON.stringify({ id: `m${i}`, text, sequence: i })).join('\n')}\n`,
    );
    const db = join(dir, 'a.db');
    expect(cli('ingest', file, '--format', 'unified', '--db', db, '--context', 'alice').code).toBe(0);

    const forced = cli('compact', '--db', db, '--json');
    expect(forced.code).toBe(0);
    const [line] = JSON.parse(forced.stdout).contexts;
    expect(line).toMatchObject({ context: 'alice', reason: 'forced', compacted: true, documents: 4 });
    const store = await openStore(db);
    expect((await store.semantic.getSnapshot('alice'))?.documents).toBe(4);
    expect((await store.countEdges('alice')).semantic_knn).toBe(line.semanticEdges);
    await store.close();

    const skipped = cli('compact', '--db', db, '--context', 'alice', '--if-needed');
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toBe('alice: skipped (fresh)\n');
    expect(cli('compact', '--db', db, '--context', 'bob').code).toBe(2);
    expect(cli('compact', '--db', join(dir, 'missing.db')).code).toBe(2);
  });
});
