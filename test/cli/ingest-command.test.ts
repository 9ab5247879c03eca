import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatProgress } from '../../src/cli/progress.ts';
import { openStore } from '../../src/store/open-store.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'graphmemix.js');
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-ingest-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const lines = [
  {
    id: 'm1',
    text: 'We booked the train to Porto',
    speaker: 'Ann',
    sessionId: 's1',
    sequence: 0,
    timestamp: '2024-06-03T10:00:00Z',
  },
  {
    id: 'm2',
    text: 'Great, which day?',
    speaker: 'assistant',
    sessionId: 's1',
    sequence: 1,
    timestamp: '2024-06-03T10:01:00Z',
  },
  { id: 'm3', text: 7 },
  {
    id: 'p1',
    kind: 'photo',
    sequence: 2,
    assets: [{ id: 'a', kind: 'image', derived: { captions: ['a train at a platform'] } }],
  },
];

describe('graphmemix ingest', () => {
  it('--json prints the summary object with the issue keys first, and re-running changes nothing', () => {
    const file = join(dir, 'archive.jsonl');
    writeFileSync(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    const db = join(dir, 'a.db');
    const first = cli('ingest', file, '--format', 'unified', '--db', db, '--context', 'alice', '--json');
    expect(first.code).toBe(0);
    const summary = JSON.parse(first.stdout) as Record<string, unknown>;
    expect(Object.keys(summary).slice(0, 7)).toEqual([
      'contexts',
      'memories',
      'assets',
      'questions',
      'edges',
      'rejected',
      'seconds',
    ]);
    expect(Object.keys(summary.edges as object)).toEqual([
      'same_round',
      'consecutive_turn',
      'event_bridge',
      'same_record',
      'record_grounding',
      'supersedes',
      'semantic_knn',
    ]);
    expect(summary).toMatchObject({
      contexts: 1,
      memories: 3,
      assets: 1,
      questions: 0,
      rejected: 1,
      imported: 3,
    });
    expect((summary.edges as Record<string, number>).consecutive_turn).toBe(1);
    expect(first.stdout.trim().split('\n')).toHaveLength(1);

    const again = JSON.parse(
      cli('ingest', file, '--format', 'unified', '--db', db, '--context', 'alice', '--json').stdout,
    );
    expect(again).toMatchObject({ memories: 3, imported: 0, unchanged: 3, edges: summary.edges });
  });

  it('prints a readable report naming the rejected line and field', async () => {
    const file = join(dir, 'text.jsonl');
    writeFileSync(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    const db = join(dir, 'b.db');
    const result = cli('ingest', file, '--format', 'unified', '--db', db);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('3 imported');
    expect(result.stdout).toMatch(/rejected \[INVALID_INPUT\] .*text\.jsonl:3, record m3, field text/);
    expect(result.stdout).not.toContain('\x1b');
    const store = await openStore(db);
    expect(await store.countMemories('text')).toBe(3);
    await store.close();
  });

  it('exits 2 for a missing path or an unknown format', () => {
    const missing = cli(
      'ingest',
      join(dir, 'nope.jsonl'),
      '--format',
      'unified',
      '--db',
      join(dir, 'c.db'),
      '--json',
    );
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stderr).error.code).toBe('NOT_FOUND_PATH');
    const unknown = cli('ingest', dir, '--format', 'csv', '--db', join(dir, 'c.db'), '--json');
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stderr).error.code).toBe('UNSUPPORTED');
  });
});

describe('progress line', () => {
  it('formats a bar with a total and a count without one', () => {
    expect(formatProgress('ingest', 50, 200, 2, 'items')).toBe(
      'ingest [######------------------] 25% 50/200 25/s items',
    );
    expect(formatProgress('ingest', 1500, undefined, 0)).toBe('ingest 1,500');
  });
});
