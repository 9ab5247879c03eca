import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'graphmemix.js');
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-cli-says-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

// Issue #15 item 8: mistakes exit non-zero with a message naming the cause; --json matches the HTTP API.
describe('the CLI says what happened', () => {
  const db = join(dir, 'a.db');
  const file = join(dir, 'notes.jsonl');
  writeFileSync(file, `${JSON.stringify({ id: 'm1', text: 'The design review moved to Monday' })}\n`);

  it('ingest creates an archive and says so; a mistyped --db elsewhere is an error, not an empty archive', () => {
    const created = cli('ingest', file, '--format', 'unified', '--db', db, '--context', 'alice', '--json');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain(`creating a new archive at ${db}`);
    expect(JSON.parse(created.stdout)).toHaveProperty('step_seconds');
    const typo = join(dir, 'typo.db');
    const missing = cli('retrieve', 'When is the review?', '--db', typo, '--context', 'alice');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no archive at');
    expect(existsSync(typo)).toBe(false);
  });

  it('an unknown context is an error naming the contexts there are', () => {
    const wrong = cli('retrieve', 'When is the review?', '--db', db, '--context', 'alicia');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('no context "alicia"');
    expect(wrong.stderr).toContain('alice');
    const json = cli(
      'retrieve',
      'When is the review?',
      '--db',
      db,
      '--context',
      'alice',
      '--json',
      '--verifiers',
      'offline',
    );
    expect(json.code, json.stderr).toBe(0);
    const body = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(body).toHaveProperty('packet_text');
    expect(body).toHaveProperty('user_id', 'alice');
  });

  it('an import that stores nothing and rejects records exits non-zero naming the format', () => {
    const mbox = join(dir, 'mail.mbox');
    writeFileSync(mbox, 'From a@b Mon Jan  1 00:00:00 2024\nSubject: hi\n\nbody\n');
    const run = cli('ingest', mbox, '--format', 'unified', '--db', db, '--context', 'alice');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no record imported');
    expect(run.stderr).toContain('--format');
  });

  it('an eval whose data has no gold exits non-zero instead of printing zeros', () => {
    const data = join(dir, 'empty-bench');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'x.jsonl'), `${JSON.stringify({ id: 'q', text: 'not a benchmark' })}\n`);
    const run = cli('eval', '--format', 'locomo', '--data', data, '--questions', 'all');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`no questions read from ${data} as locomo`);
    expect(run.stdout).not.toContain('0.00');
  });

  it('train-ranker refuses an --l2 that is not a number >= 0 before opening anything, naming the flag', () => {
    const out = join(dir, 'ranker.json');
    for (const bad of ['-1', 'abc', 'Infinity']) {
      const run = cli('train-ranker', '--db', join(dir, 'missing.db'), '--l2', bad, '--out', out);
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain('--l2 must be a number >= 0');
      expect(existsSync(join(dir, 'missing.db'))).toBe(false);
    }
    expect(existsSync(out)).toBe(false);
  });
});
