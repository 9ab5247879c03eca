import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';

describe('openGraphmemix({ writeWorker: true })', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gm-write-worker-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs writes in a worker thread: this thread writes nothing and reads the committed result', async () => {
    const gm = await openGraphmemix({ db: join(dir, 'a.db'), writeWorker: true });
    try {
      const records = Array.from({ length: 3000 }, (_, i) => ({
        id: `m${i}`,
        text: `note ${i} about the pottery workshop number ${i % 97} and the train ticket ${i % 13}`,
        sessionId: `s${Math.floor(i / 20)}`,
        kind: 'message' as const,
      }));
      // Every write of this thread's store is counted: with the worker, digest never runs here.
      let writesHere = 0;
      const writeHere = gm.store.writeMemories.bind(gm.store);
      gm.store.writeMemories = (contextId, writes) => {
        writesHere++;
        return writeHere(contextId, writes);
      };
      const report = await gm.addMemories('alice', records);
      expect(writesHere).toBe(0);
      expect(report.imported).toBe(3000);
      expect(await gm.store.countMemories('alice')).toBe(3000);
      const hits = await gm.search('alice', 'pottery workshop number 42', { k: 3 });
      expect(hits[0]?.record.text).toContain('number 42 ');
      expect(await gm.deleteMemory('alice', 'm42')).toBe(true);
      expect(await gm.getMemory('alice', 'm42')).toBeUndefined();
    } finally {
      await gm.close();
    }
  });

  it('keeps error codes across the thread and closes cleanly', async () => {
    const gm = await openGraphmemix({ db: join(dir, 'b.db'), writeWorker: true });
    await expect(
      gm.ingest(join(dir, 'missing.jsonl'), { format: 'unified', contextId: 'x' }),
    ).rejects.toMatchObject({ name: 'GraphmemixError' });
    await gm.close();
    await gm.close();
  });
});
