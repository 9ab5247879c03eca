import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'graphmemix.js');
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-train-ranker-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('graphmemix train-ranker --l2', () => {
  it('refuses a penalty that is not a number >= 0 before opening anything, naming the flag', () => {
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
