import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ingestItems } from '../../src/digest/ingest.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { openStore } from '../../src/store/open-store.ts';
import { generatedArchive } from '../store/fixtures/ingest-child.ts';

const COUNT = 15_000;
const CHILD = join(import.meta.dirname, '..', 'store', 'fixtures', 'ingest-child.ts');
// Relations are part of the final state once the relations module exists.
const RELATIONS = existsSync(join(import.meta.dirname, '..', '..', 'src', 'digest', 'build-relations.ts'));
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts the import in a real child process and SIGKILLs it once `killAfter` items are committed. */
function killMidImport(
  db: string,
  killAfter: number,
): Promise<{ signal: NodeJS.Signals | null; committed: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', CHILD, db, String(COUNT), RELATIONS ? '1' : '0'],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let committed = 0;
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        const match = /^progress (\d+)$/.exec(line);
        if (match) committed = Number(match[1]);
        if (committed >= killAfter && !child.killed) child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => resolve({ signal, committed }));
  });
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
  // Items = records + one question per 1,000 records; the last progress line comes right before relations.
  const ALL_ITEMS = COUNT + COUNT / 1000;
  it.each([
    ['while records are being written', 3000],
    ['after the last batch, while relations are rebuilt', ALL_ITEMS],
  ])(
    'a SIGKILLed import (%s) leaves a sound store that resumes to the clean final state',
    async (name, killAfter) => {
      const db = join(dir, `killed-${killAfter}.db`);
      const { signal, committed } = await killMidImport(db, killAfter);
      // Mid-import the kill always lands; after the last batch the child may just win the race and finish.
      if (killAfter < COUNT) expect(signal).toBe('SIGKILL');

      const store = await openStore(db);
      expect(await store.integrityCheck()).toEqual({ ok: true, problems: [] });
      const survived = await store.countMemories('crash');
      expect(survived).toBeGreaterThanOrEqual(Math.floor(committed * 0.9));
      if (killAfter < COUNT) expect(survived).toBeLessThan(COUNT);

      const resumed = await ingestItems(store, generatedArchive(COUNT), { relations: RELATIONS });
      expect(resumed.imported + resumed.unchanged).toBe(COUNT);
      expect(resumed.unchanged).toBe(survived);

      const clean = await openStore(join(dir, `clean-${killAfter}.db`));
      await ingestItems(clean, generatedArchive(COUNT), { relations: RELATIONS });
      expect(await finalState(store), name).toEqual(await finalState(clean));
      expect((await store.integrityCheck()).ok).toBe(true);
      await store.close();
      await clean.close();
    },
    180_000,
  );
});
