import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backlogKeys, semanticPending } from '../../src/digest/incremental/semantic-compaction-mark.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { annNotes, annText } from '../support/ann-notes.ts';

/**
 * `semanticUpdates: 'after-write'`: a write returns with its records, postings and schema edges in and its
 * semantic (mutual-kNN) update left to a drain that runs as the next turn of its user. Once drained, the
 * archive holds the same semantic_knn edges as one written with the update inside each write (the drain runs
 * the same incremental update on the same delta), compactions included; questions meanwhile are flagged.
 */
const dir = mkdtempSync(join(tmpdir(), 'gm-after-write-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const text = annText;
const notes = annNotes;

/** Every semantic_knn edge of ann's memories a0..a(n-1), as sorted "a|b" pairs. */
async function semanticEdges(gm: Graphmemix, n: number): Promise<string[]> {
  const ids = notes(0, n).map((note) => note.id);
  const edges = await gm.store.neighbors('ann', ids);
  const pairs = new Set<string>();
  for (const edge of edges) {
    if (!edge.types.includes('semantic_knn')) continue;
    pairs.add([edge.a, edge.b].sort().join('|'));
  }
  return [...pairs].sort();
}

/** The same writes: 300 in one add (a rebuild), then single adds, an update and a delete of a fresh add. */
async function writeAll(gm: Graphmemix, singles: number): Promise<void> {
  await gm.addMemories('ann', notes(0, 300));
  for (let i = 300; i < 300 + singles; i++) await gm.addMemories('ann', notes(i, 1));
  await gm.updateMemory('ann', 'a301', {
    text: 'ann rode the night train 3 to garden 9 and the pottery class 2',
  });
  // Not awaited one by one: the delete is queued before the add's drain runs.
  await Promise.all([gm.addMemories('ann', [{ id: 'gone', text: text(5) }]), gm.deleteMemory('ann', 'gone')]);
}

describe.each([
  ['in the process', false],
  ['through the write worker', true],
])('semantic updates after the write (%s)', (_, writeWorker) => {
  it('end with the same semantic_knn edges as updates inside the write, through a compaction', async () => {
    // Compactions inside a turn (the write's, or the drain's): the same sequence of updates on both sides. In
    // steps their timing decides which ids a run replays, on either side (the next test).
    const common = { writeWorker, readWorkers: false, compaction: 'inline' } as const;
    const inWrite = await openGraphmemix({
      db: join(dir, `in-${writeWorker}.db`),
      ...common,
      semanticUpdates: 'in-write',
    });
    const after = await openGraphmemix({
      db: join(dir, `after-${writeWorker}.db`),
      ...common,
      semanticUpdates: 'after-write',
    });
    try {
      // 20 singles: past the 5% rule of 300 (15 changes), so each archive compacts once.
      await writeAll(inWrite, 20);
      await writeAll(after, 20);
      await inWrite.waitForCompactions();
      await after.waitForCompactions();
      expect(await backlogKeys(after.store, 'ann')).toEqual([]);
      const expected = await semanticEdges(inWrite, 320);
      expect(expected.length).toBeGreaterThan(100);
      expect(await semanticEdges(after, 320)).toEqual(expected);
      expect((await after.store.semantic.getSnapshot('ann'))?.documents).toBe(
        (await inWrite.store.semantic.getSnapshot('ann'))?.documents,
      );
      expect((await after.store.integrityCheck()).ok).toBe(true);
    } finally {
      await inWrite.close();
      await after.close();
    }
  });
});

describe('an after-write update', () => {
  it('with compactions in steps, converges: every memory documented, no backlog, edges as in-write', async () => {
    const inWrite = await openGraphmemix({ db: join(dir, 'steps-in.db'), semanticUpdates: 'in-write' });
    const after = await openGraphmemix({ db: join(dir, 'steps-after.db'), semanticUpdates: 'after-write' });
    try {
      await writeAll(inWrite, 40);
      await writeAll(after, 40);
      await inWrite.waitForCompactions();
      await after.waitForCompactions();
      expect(await backlogKeys(after.store, 'ann')).toEqual([]);
      // The runs' replays and the drains emptied the backlog: questions are no longer flagged.
      expect(await semanticPending(after.store, 'ann')).toBe(false);
      expect(await semanticPending(inWrite.store, 'ann')).toBe(false);
      const ids = notes(0, 340).map((note) => note.id);
      expect(await after.store.semantic.getDocs('ann', ids)).toHaveLength(340);
      const expected = new Set(await semanticEdges(inWrite, 340));
      const got = await semanticEdges(after, 340);
      const shared = got.filter((pair) => expected.has(pair)).length;
      // Jaccard: which ids a run replays differs with timing on either side; the lists stay those of one state.
      expect(shared / (expected.size + got.length - shared)).toBeGreaterThan(0.9);
      expect((await after.store.integrityCheck()).ok).toBe(true);
    } finally {
      await inWrite.close();
      await after.close();
    }
  });

  it('is not in when the add returns: its ids wait in the backlog, then the drain applies them', async () => {
    const gm = await openGraphmemix({ db: join(dir, 'returns.db'), semanticUpdates: 'after-write' });
    try {
      await gm.addMemories('ann', notes(0, 100));
      await gm.waitForCompactions();
      const report = await gm.addMemories('ann', notes(100, 5));
      // The records and their schema edges are in; the semantic side waits for its turn.
      expect(report.imported).toBe(5);
      expect((await gm.store.getMemories('ann', ['a100', 'a104'])).length).toBe(2);
      expect(await backlogKeys(gm.store, 'ann')).toHaveLength(1);
      expect(await semanticPending(gm.store, 'ann')).toBe(true);
      expect(await gm.store.semantic.getDocs('ann', ['a100'])).toEqual([]);
      await gm.waitForCompactions();
      expect(await backlogKeys(gm.store, 'ann')).toEqual([]);
      expect(await gm.store.semantic.getDocs('ann', ['a100', 'a104'])).toHaveLength(2);
      expect(await semanticPending(gm.store, 'ann')).toBe(false);
    } finally {
      await gm.close();
    }
  });

  it('is the default for adds; an import and an in-write archive apply it before they return', async () => {
    const gm = await openGraphmemix({ db: join(dir, 'default.db') });
    const inWrite = await openGraphmemix({ db: join(dir, 'default-in.db'), semanticUpdates: 'in-write' });
    try {
      for (const facade of [inWrite, gm]) {
        await facade.addMemories('ann', notes(0, 100));
        await facade.waitForCompactions();
        await facade.addMemories('ann', notes(100, 5));
      }
      // The default leaves the add's ids for the drain, and its questions are flagged until then.
      expect(await backlogKeys(gm.store, 'ann')).toHaveLength(1);
      const pending = await gm.retrieve('ann', 'the night train to the pottery class');
      expect(pending.trace.flags).toContain('semantic_pending');
      await gm.waitForCompactions();
      const settled = await gm.retrieve('ann', 'the night train to the pottery class');
      expect(settled.trace.flags).not.toContain('semantic_pending');
      expect(await gm.store.semantic.getDocs('ann', ['a100', 'a104'])).toHaveLength(2);
      // 'in-write' returns with them in.
      expect(await backlogKeys(inWrite.store, 'ann')).toEqual([]);
      expect(await inWrite.store.semantic.getDocs('ann', ['a100', 'a104'])).toHaveLength(2);

      // An import applies its semantic side in the write in either mode: its report counts the edges it made.
      const file = join(dir, 'import.jsonl');
      writeFileSync(
        file,
        `${notes(200, 40)
          .map((note) => JSON.stringify(note))
          .join('\n')}\n`,
      );
      const report = await gm.ingest(file, { format: 'unified', contextId: 'bea' });
      expect(report.imported).toBe(40);
      expect(await backlogKeys(gm.store, 'bea')).toEqual([]);
      expect(await semanticPending(gm.store, 'bea')).toBe(false);
      expect(report.edges.semantic_knn).toBeGreaterThan(0);
      expect(report.edges.semantic_knn).toBe((await gm.store.countEdges('bea')).semantic_knn);
    } finally {
      await gm.close();
      await inWrite.close();
    }
  });

  it('left by a stopped process flags questions until a writer reopens the archive and drains it', async () => {
    const db = join(dir, 'stopped.db');
    const first = await openGraphmemix({ db, semanticUpdates: 'after-write' });
    await first.addMemories('ann', notes(0, 100));
    await first.waitForCompactions();
    await first.addMemories('ann', notes(100, 3));
    // A shutdown that does not wait for background work: the queued drain passes without applying anything.
    await first.close({ background: 'stop' });

    const reader = await openGraphmemix({ db, readonly: true });
    const flagged = await reader.retrieve('ann', 'the night train to the pottery class');
    expect(flagged.trace.flags).toContain('semantic_pending');
    await reader.close();

    // Any writer (the default mode too) drains rows it finds at open.
    const writer = await openGraphmemix({ db });
    await writer.waitForCompactions();
    expect(await backlogKeys(writer.store, 'ann')).toEqual([]);
    expect(await writer.store.semantic.getDocs('ann', ['a100', 'a101', 'a102'])).toHaveLength(3);
    const clean = await writer.retrieve('ann', 'the night train to the pottery class');
    expect(clean.trace.flags).not.toContain('semantic_pending');
    expect((await writer.store.integrityCheck()).ok).toBe(true);
    await writer.close();
  });
});
