import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';

/**
 * An import into one user runs batch by batch through the library's write queue (src/graphmemix-write-queue.ts):
 * another user's add issued while it runs lands between its batches, an add to the same user after it. In
 * the process and through the write worker (the server's path).
 */
const dir = mkdtempSync(join(tmpdir(), 'gm-import-queue-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// 2,000 records: four batches of 500, then the relation update.
const file = join(dir, 'ann.jsonl');
writeFileSync(
  file,
  Array.from({ length: 2000 }, (_, i) =>
    JSON.stringify({
      id: `a${i}`,
      text: `ann wrote note ${i} about the pottery workshop ${i % 97} and the night train ${i % 13}`,
      sessionId: `s${Math.floor(i / 20)}`,
    }),
  ).join('\n'),
);

describe.each([
  ['in the process', false],
  ['through the write worker', true],
])('an import into one user (%s)', (_, writeWorker) => {
  it("lets another user's add go between its batches; the same user's add waits for it", async () => {
    const gm = await openGraphmemix({ db: join(dir, `${writeWorker}.db`), writeWorker, readWorkers: false });
    try {
      await gm.addMemories('bob', [{ id: 'b0', text: 'bob rides the night train' }]);
      const order: string[] = [];
      const adds: Promise<void>[] = [];
      const imported = gm
        .ingest(file, {
          format: 'unified',
          contextId: 'ann',
          // After the first batch committed: both adds are issued while the import still has batches to go.
          onProgress: () => {
            if (adds.length > 0) return;
            adds.push(
              gm.addMemories('bob', [{ id: 'b1', text: 'bob writes during the import' }]).then(() => {
                order.push('bob add');
              }),
              gm.addMemories('ann', [{ id: 'late', text: 'ann writes during her import' }]).then(() => {
                order.push('ann add');
              }),
            );
          },
        })
        .then((report) => {
          order.push('import');
          return report;
        });
      const report = await imported;
      await Promise.all(adds);
      expect(adds).toHaveLength(2);
      expect(order).toEqual(['bob add', 'import', 'ann add']);
      expect(report.imported).toBe(2000);
      expect(await gm.store.countMemories('ann')).toBe(2001);
      expect(await gm.store.countMemories('bob')).toBe(2);
      expect(await gm.store.integrityCheck()).toEqual({ ok: true, problems: [] });
      expect((await gm.search('ann', 'pottery workshop 42', { k: 3 }))[0]?.record.text).toContain(
        'workshop 42 ',
      );
    } finally {
      await gm.close();
    }
  }, 60_000);
});

describe('a forget of a user whose import is running (write worker)', () => {
  it("waits for that import, and does not hold other users' writes meanwhile", async () => {
    const gm = await openGraphmemix({
      db: join(dir, 'forget-during.db'),
      writeWorker: true,
      readWorkers: false,
    });
    try {
      await gm.addMemories('bob', [{ id: 'b0', text: 'bob rides the night train' }]);
      const order: string[] = [];
      const later: Promise<void>[] = [];
      const imported = gm
        .ingest(file, {
          format: 'unified',
          contextId: 'ann',
          onProgress: () => {
            if (later.length > 0) return;
            // In this order: the forget first, then another user's add.
            later.push(
              gm.deleteUser('ann').then((report) => {
                order.push(`forget ${report.memories}`);
              }),
              gm.addMemories('bob', [{ id: 'b1', text: 'bob writes during the forget' }]).then(() => {
                order.push('bob add');
              }),
            );
          },
        })
        .then(() => {
          order.push('import');
        });
      await imported;
      await Promise.all(later);
      expect(order).toEqual(['bob add', 'import', 'forget 2000']);
      expect(await gm.store.countMemories('ann')).toBe(0);
      expect(await gm.store.countMemories('bob')).toBe(2);
      expect(await gm.store.integrityCheck()).toEqual({ ok: true, problems: [] });
    } finally {
      await gm.close();
    }
  }, 60_000);
});

describe('a write to the importing user, then another user’s (write worker)', () => {
  it('waits for the import without holding the write behind it', async () => {
    const gm = await openGraphmemix({
      db: join(dir, 'same-first.db'),
      writeWorker: true,
      readWorkers: false,
    });
    try {
      await gm.addMemories('bob', [{ id: 'b0', text: 'bob rides the night train' }]);
      const order: string[] = [];
      const adds: Promise<void>[] = [];
      const imported = gm
        .ingest(file, {
          format: 'unified',
          contextId: 'ann',
          onProgress: () => {
            if (adds.length > 0) return;
            // In this order: ann's own add (it waits for her import), then bob's.
            adds.push(
              gm.addMemories('ann', [{ id: 'late', text: 'ann writes during her import' }]).then(() => {
                order.push('ann add');
              }),
              gm.deleteMemory('ann', 'a3').then((deleted) => {
                order.push(`ann delete ${deleted}`);
              }),
              gm.addMemories('bob', [{ id: 'b1', text: 'bob writes during the import' }]).then(() => {
                order.push('bob add');
              }),
              // An update reads the memory first: it must see ann's add above, issued before it.
              gm.updateMemory('ann', 'late', { text: 'ann changed her note' }).then((updated) => {
                order.push(`ann update ${updated.memory.text}`);
              }),
            );
          },
        })
        .then(() => {
          order.push('import');
        });
      await imported;
      await Promise.all(adds);
      // ann's writes after her import, in call order; bob's did not wait for them.
      expect(order).toEqual([
        'bob add',
        'import',
        'ann add',
        'ann delete true',
        'ann update ann changed her note',
      ]);
      expect(await gm.store.countMemories('ann')).toBe(2000);
      expect(await gm.store.countMemories('bob')).toBe(2);
      expect(await gm.store.integrityCheck()).toEqual({ ok: true, problems: [] });
    } finally {
      await gm.close();
    }
  }, 60_000);
});
