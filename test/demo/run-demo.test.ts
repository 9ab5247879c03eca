import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_QUESTIONS } from '../../src/demo/example-archive.ts';
import { REPO_ROOT, TSX_IMPORT } from '../support/repo-paths.ts';
import { MEDIA_TOOLS } from '../support/system-tools.ts';

const run = promisify(execFile);

describe('npm run demo', () => {
  it('ingests the example archive offline, prints forests and ends with the viewer page path', async () => {
    const out = mkdtempSync(join(tmpdir(), 'gmx-demo-test-'));
    try {
      const env = { ...process.env, OPENAI_API_KEY: '', GRAPHMEMIX_CONFIG: '', GRAPHMEMIX_MODEL: '' };
      const { stdout } = await run(
        process.execPath,
        ['--import', TSX_IMPORT, join(REPO_ROOT, 'src/demo/run-demo.ts'), '--out', out],
        {
          env,
          timeout: 120_000,
        },
      );
      const lines = stdout.trimEnd().split('\n');
      const last = lines[lines.length - 1] ?? '';
      expect(last).toBe(join(out, 'demo-view.html'));
      expect(existsSync(last)).toBe(true);
      for (const format of ['unified', 'mail', 'media', 'documents'])
        expect(stdout).toMatch(new RegExp(`ingested ${format}\\s+[1-9]`));
      // Without ffmpeg or poppler-utils the demo leaves the video's or the PDF's question out, and says so.
      const kept = EXAMPLE_QUESTIONS.filter((question) => {
        const refs = (question.expectMemoryIds ?? []).join(' ');
        return (
          (MEDIA_TOOLS.ffmpeg || !refs.includes('.mp4')) && (MEDIA_TOOLS.poppler || !refs.includes('.pdf'))
        );
      });
      expect(stdout.match(/^Q\d+\. /gm)?.length).toBe(kept.length);
      if (!MEDIA_TOOLS.ffmpeg) expect(stdout).toMatch(/^note: ffmpeg is not installed/m);
      if (!MEDIA_TOOLS.poppler) expect(stdout).toMatch(/^note: poppler-utils is not installed/m);
      expect(stdout).toMatch(/^ {2}tree 1$/m);
      // At least one forest joins memories by an edge, printed with its relation and role.
      expect(stdout).toMatch(/└─ [a-z_+]+ · (new_fact|clarification|corroboration) \(w /);
      // The update and its history (oldest first), and the question answered from the current version.
      expect(stdout).toMatch(/updateMemory\('dentist'\) -> version 2/);
      expect(stdout).toMatch(/ {2}v1 event 2024-05-20T10:00:00Z recorded \S+: .*Monday/);
      expect(stdout).toMatch(/ {2}v2 event 2024-05-28T16:30:00Z recorded \S+: .*Thursday/);
      expect(stdout).toMatch(/^ {4}1\. \[2024-05-28T16:30:00Z\] .*Thursday June 6/m);
      expect(stdout).not.toMatch(/^ {4}\d\. .*Monday June 3/m);
      const html = readFileSync(last, 'utf8');
      expect(html.match(/data-testid="question"/g)?.length).toBe(kept.length);
      expect(html).toContain('data-testid="gold-summary"');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
