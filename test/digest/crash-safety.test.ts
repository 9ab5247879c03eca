import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ingestItems } from '../../src/digest/ingest.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { openStore } from '../../src/store/open-store.ts';
import { generatedArchive } from '../store/fixtures/ingest-child.ts';
import { TSX_IMPORT } from '../support/repo-paths.ts';

const COUNT = 15_000;
const CHILD = join(import.meta.dirname, '..', 'store', 'fixtures', 'ingest-child.ts');
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type KillAt = { afterItems: number } | { paused: 'write' };

/**
 * Starts the import in a real child process and SIGKILLs it once `afterItems` items are committed, or once
 * it reports the pause point inside the relation rebuild. Returns the last committed item count it printed.
 */
function killImport(
  db: string,
  at: KillAt,
): Promise<{ signal: NodeJS.Signals | null; committed: number; paused: boolean }> {
  return new Promise((resolve, reject) => {
    const pause = 'paused' in at ? ['pause'] : [];
    const child = spawn(process.execPath, ['--import', TSX_IMPORT, CHILD, db, String(COUNT), '1', ...pause], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let committed = 0;
    let paused = false;
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        const match = /^progress (\d+)$/.exec(line);
        if (match) committed = Number(match[1]);
        if ('paused' in at && line === `paused ${at.paused}`) paused = true;
        const due = 'afterItems' in at ? committed >= at.afterItems : paused;
        if (due && !child.killed) child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => resolve({ signal, committed, paused }));
  });
}

/** Records among the first `items` items of the generated archive (the rest are questions). */
async function recordsAmong(items: number): Promise<number> {
  let seen = 0;
  let records = 0;
  for await (const item of generatedArchive(COUNT)) {
    if (seen++ >= items) break;
    if (item.type === 'record') records++;
  }
  return records;
}

async function finalState(store: ArchiveStore) {
  const records = await store.listMemories('crash');
  const ids = records.map((r) => r.id);
  return {
    // recordedAt is the write clock: two imports at different times legitimately differ there only.
    records: records.map(({ recordedAt: _clock, ...content }) => content),
    views: await store.getViews('crash', ids),
    edges: await store.neighbors('crash', ids),
    questions: await store.listQuestions('crash'),
  };
}

describe('crash safety', () => {
  it.each([
    ['while records are being written', { afterItems: 3000 }],
    ['inside the relation rebuild (schema edges written, semantic and journal not)', { paused: 'write' }],
  ] as [string, KillAt][])(
    'a SIGKILLed import (%s) loses no committed row and resumes to the clean final state',
    async (name, at) => {
      const db = join(dir, `killed-${'paused' in at ? 'rebuild' : at.afterItems}.db`);
      const { signal, committed, paused } = await killImport(db, at);
      expect(signal).toBe('SIGKILL');
      if ('paused' in at) expect(paused).toBe(true);

      const store = await openStore(db);
      expect(await store.integrityCheck()).toEqual({ ok: true, problems: [] });
      const survived = await store.countMemories('crash');
      // Every batch the child reported as committed is there: 0 committed rows lost.
      expect(survived).toBeGreaterThanOrEqual(await recordsAmong(committed));
      if ('afterItems' in at) expect(survived).toBeLessThan(COUNT);
      else {
        // Killed inside the rebuild: every record is in, schema edges are written, the journal is not cleared.
        expect(survived).toBe(COUNT);
        expect((await store.relationWorkStatus('crash')).pending).toBeGreaterThan(0);
        expect((await store.countEdges('crash')).same_round).toBeGreaterThan(0);
        expect((await store.countEdges('crash')).semantic_knn).toBe(0);
      }

      const resumed = await ingestItems(store, generatedArchive(COUNT), { relations: true });
      expect(resumed.imported + resumed.unchanged).toBe(COUNT);
      expect(resumed.unchanged).toBe(survived);

      const clean = await openStore(join(dir, `clean-${'paused' in at ? 'rebuild' : at.afterItems}.db`));
      await ingestItems(clean, generatedArchive(COUNT), { relations: true });
      expect(await finalState(store), name).toEqual(await finalState(clean));
      expect((await store.integrityCheck()).ok).toBe(true);
      await store.close();
      await clean.close();
    },
    180_000,
  );
});
