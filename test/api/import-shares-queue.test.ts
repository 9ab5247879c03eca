import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { IngestReport } from '../../src/digest/ingest-report.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';

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

/**
 * ann's import of `file` into `gm` (bob already holding one memory), `issue` called once at its first progress,
 * after the first batch committed: the writes it returns are issued while the import still has batches to go.
 * Returns the order in which they (labelled through `finish`) and the import ended.
 */
async function importWhile(
  gm: Graphmemix,
  issue: (finish: (label: string) => void) => Promise<unknown>[],
): Promise<{ order: string[]; report: IngestReport; issued: number }> {
  await gm.addMemories('bob', [{ id: 'b0', text: 'bob rides the night train' }]);
  const order: string[] = [];
  let during: Promise<unknown>[] | undefined;
  const report = await gm
    .ingest(file, {
      format: 'unified',
      contextId: 'ann',
      onProgress: () => {
        during ??= issue((label) => order.push(label));
      },
    })
    .then((imported) => {
      order.push('import');
      return imported;
    });
  await Promise.all(during ?? []);
  return { order, report, issued: during?.length ?? 0 };
}

describe.each([
  ['in the process', false],
  ['through the write worker', true],
])('an import into one user (%s)', (_, writeWorker) => {
  it("lets another user's add go between its batches; the same user's add waits for it", async () => {
    const gm = await openGraphmemix({ db: join(dir, `${writeWorker}.db`), writeWorker, readWorkers: false });
    try {
      const { order, report, issued } = await importWhile(gm, (finish) => [
        gm
          .addMemories('bob', [{ id: 'b1', text: 'bob writes during the import' }])
          .then(() => finish('bob add')),
        gm
          .addMemories('ann', [{ id: 'late', text: 'ann writes during her import' }])
          .then(() => finish('ann add')),
      ]);
      expect(issued).toBe(2);
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
      // In this order: the forget first, then another user's add.
      const { order } = await importWhile(gm, (finish) => [
        gm.deleteUser('ann').then((report) => finish(`forget ${report.memories}`)),
        gm
          .addMemories('bob', [{ id: 'b1', text: 'bob writes during the forget' }])
          .then(() => finish('bob add')),
      ]);
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
      // In this order: ann's own add and delete (they wait for her import), bob's add, then ann's update, which
      // reads the memory first and must see her add.
      const { order } = await importWhile(gm, (finish) => [
        gm
          .addMemories('ann', [{ id: 'late', text: 'ann writes during her import' }])
          .then(() => finish('ann add')),
        gm.deleteMemory('ann', 'a3').then((deleted) => finish(`ann delete ${deleted}`)),
        gm
          .addMemories('bob', [{ id: 'b1', text: 'bob writes during the import' }])
          .then(() => finish('bob add')),
        gm
          .updateMemory('ann', 'late', { text: 'ann changed her note' })
          .then((updated) => finish(`ann update ${updated.memory.text}`)),
      ]);
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
