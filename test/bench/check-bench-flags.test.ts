import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

/** A bench entry run as `npm run bench:*` runs it (tsx), with `args`; its exit status and output. */
function run(entry: string, args: string[]) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'bench', entry), ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('bench commands check their flags before running anything', () => {
  it('--help prints the usage and exits 0 (bench:scale used to run its default 1M scenario)', () => {
    const help = run('scale-bench.ts', ['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('npm run bench:scale');
    expect(help.stdout).not.toContain('scenario');
  });

  it('an unknown flag is refused with exit 2, naming it', () => {
    for (const entry of ['scale-bench.ts', 'solver-bench.ts', 'lexical-bench.ts']) {
      const refused = run(entry, ['--sizez', '10k']);
      expect(refused.status, entry).toBe(2);
      expect(refused.stderr, entry).toContain('unknown flag --sizez');
      expect(refused.stderr, entry).toContain('usage: ');
    }
  });
});
