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

  it("forgets a user in steps while another user's add goes between them, then closes", async () => {
    const gm = await openGraphmemix({ db: join(dir, 'f.db'), writeWorker: true });
    try {
      // ~3k memories: several forget steps of 16,384 rows (postings, list entries, keys, views, documents).
      await gm.addMemories(
        'alice',
        Array.from({ length: 3000 }, (_, i) => ({
          id: `m${i}`,
          text: `note ${i} about the pottery workshop number ${i % 97} and the train ticket ${i % 13}`,
          sessionId: `s${Math.floor(i / 20)}`,
        })),
      );
      await gm.addMemories('bob', [{ id: 'b0', text: 'bob rides the night train' }]);
      const order: string[] = [];
      const forget = gm.forgetContext('alice').then((report) => {
        order.push('forget');
        return report;
      });
      const add = gm.addMemories('bob', [{ id: 'b1', text: 'bob writes during the forget' }]).then(() => {
        order.push('bob add');
      });
      await Promise.all([forget, add]);
      expect(order).toEqual(['bob add', 'forget']);
      expect(await forget).toMatchObject({ deleted: true, memories: 3000 });
      expect(await gm.store.countMemories('alice')).toBe(0);
      expect(await gm.store.countMemories('bob')).toBe(2);
      expect(await gm.store.integrityCheck()).toEqual({ ok: true, problems: [] });
    } finally {
      await gm.close();
    }
  }, 60_000);

  it('rejects a record too deep to cross the thread like ingest does, keeps the rest and its line numbers', async () => {
    const deep = JSON.parse(`${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`) as Record<string, unknown>;
    const records = [
      { id: 'ok1', text: 'first' },
      { id: 'deep', text: 'too deep', metadata: deep },
      { id: 'bad', text: 'bad time', timestamp: 'not a date' },
      { id: 'ok2', text: 'second' },
    ];
    const inProcess = await openGraphmemix({ db: join(dir, 'c.db') });
    const worker = await openGraphmemix({ db: join(dir, 'd.db'), writeWorker: true });
    try {
      const expected = await inProcess.addMemories('alice', records);
      const report = await worker.addMemories('alice', records);
      expect(report.imported).toBe(2);
      expect(report.rejected.map((r) => [r.line, r.recordId, r.code, r.field])).toEqual(
        expected.rejected.map((r) => [r.line, r.recordId, r.code, r.field]),
      );
      expect(report.rejected.map((r) => [r.line, r.code])).toEqual([
        [2, 'TOO_LARGE'],
        [3, 'INVALID_INPUT'],
      ]);
      // A call whose arguments cannot be cloned fails alone; the worker keeps serving and closes.
      await expect(worker.deleteMemory('alice', (() => 'x') as unknown as string)).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
      expect(await worker.deleteMemory('alice', 'ok1')).toBe(true);
    } finally {
      await inProcess.close();
      await worker.close();
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
