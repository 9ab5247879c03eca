import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { BIN } from '../support/repo-paths.ts';

const run = promisify(execFile);

describe('graphmemix view', () => {
  it('writes one self-contained page for the questions of one context', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gmx-view-cli-'));
    try {
      const db = join(dir, 'a.db');
      const graphmemix = await openGraphmemix({ db });
      await graphmemix.addMemories('alice', [
        { id: 'm1', text: 'The design review is on Friday in room Tejo', timestamp: '2024-04-01T09:00:00Z' },
        { id: 'm2', text: 'Update: the design review moved to Monday', timestamp: '2024-04-03T09:00:00Z' },
      ]);
      await graphmemix.addMemories('bob', [
        { id: 'b1', text: 'Bob design review secret', timestamp: '2024-04-02' },
      ]);
      await graphmemix.close();
      const out = join(dir, 'page.html');
      const env = { PATH: process.env.PATH ?? '', OPENAI_API_KEY: '' };
      const args = [BIN, 'view', 'When is the design review?', 'Which room?'];
      const { stdout } = await run(
        process.execPath,
        [...args, '--db', db, '--context', 'alice', '--out', out, '--gold', 'm2', '--json'],
        { env },
      );
      const summary = JSON.parse(stdout) as { out: string; questions: { evidence: string[] }[] };
      expect(summary.out).toBe(out);
      expect(summary.questions).toHaveLength(2);
      expect(summary.questions.flatMap((q) => q.evidence)).not.toContain('b1');
      const html = readFileSync(out, 'utf8');
      expect(html.match(/data-testid="question"/g)).toHaveLength(2);
      expect(html).toContain('data-testid="gold-summary"');
      expect(html).not.toContain('Bob design review secret');

      const bad = await run(
        process.execPath,
        [...args, '--db', db, '--context', '../x', '--out', join(dir, 'no.html')],
        { env },
      ).catch((error: { code: number }) => error);
      expect((bad as { code: number }).code).toBe(2);
      expect(existsSync(join(dir, 'no.html'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
