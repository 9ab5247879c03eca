import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compactSemantic } from '../../src/digest/incremental/compact-semantic.ts';
import { ingestItems } from '../../src/digest/ingest.ts';
import { mulberry32 } from '../../src/digest/semantic/seeded-random.ts';
import { updateRelations } from '../../src/digest/update-relations.ts';
import { WriteQueue } from '../../src/graphmemix-write-queue.ts';
import type { ImportItem } from '../../src/importers/importer-spec.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import { dropTestDatabases } from '../store/postgres-test-db.ts';
import { storeBackends } from '../store/store-backends.ts';

/**
 * A bulk import's relation rebuild given the caller's write queue (`turn`: the facade's import, holding its
 * user) takes one turn per write and computes outside them: another user's write queued during it lands
 * between its pieces, not after all of it, and the relations are exactly those of the rebuild run at once.
 */
const dir = mkdtempSync(join(tmpdir(), 'gm-rebuild-turns-'));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropTestDatabases();
});

const BACKENDS = storeBackends(dir, 'turns');

const WORDS = Array.from({ length: 90 }, (_, i) => `w${i.toString(36)}q`);

/** 1,200 turns of 40 sessions (rounds, sessions: every schema type that chat has), seeded text. */
function annItems(): ImportItem[] {
  const random = mulberry32(7);
  return Array.from({ length: 1200 }, (_, i) => {
    const words = Array.from({ length: 4 + Math.floor(random() * 8) }, () => {
      return WORDS[Math.floor(random() ** 2 * WORDS.length)]!;
    });
    const record = {
      id: `a${String(i).padStart(4, '0')}`,
      contextId: 'ann',
      kind: 'message',
      sequence: i,
      role: i % 2 === 0 ? 'user' : 'assistant',
      sessionId: `s${Math.floor(i / 30)}`,
      roundId: `s${Math.floor(i / 30)}:${Math.floor((i % 30) / 2)}`,
      timestamp: new Date(Date.UTC(2024, 0, 1 + Math.floor(i / 30), 9, i % 30)).toISOString(),
      text: words.join(' '),
      assets: [],
    } as unknown as MemoryRecord;
    return { type: 'record', record, source: { file: 'ann.jsonl', line: i + 1 } } satisfies ImportItem;
  });
}

/** Every edge of the context and its semantic documents (vector and list), for comparison. */
async function relationsOf(store: ArchiveStore, contextId: string) {
  const ids = (await store.listMemories(contextId)).map((record) => record.id);
  const edges = (await store.neighbors(contextId, ids))
    .map((edge) => `${edge.a}|${edge.b}|${[...edge.types].sort().join(',')}|${edge.strength.toFixed(9)}`)
    .sort();
  const docs = (await store.semantic.getDocs(contextId, ids)).map((doc) => ({
    ...doc,
    weights: doc.weights.map((weight) => weight.toFixed(12)),
    neighbours: doc.neighbours.map((n) => `${n.memoryId}:${n.score.toFixed(12)}`),
  }));
  return { edges: [...new Set(edges)], docs, counts: await store.countEdges(contextId) };
}

describe.each(BACKENDS)('a bulk rebuild in turns of the write queue (%s)', (_, open) => {
  it("takes a turn per write, lets another user's write go between them, and builds the same relations", async () => {
    const atOnce = await open();
    const inTurns = await open();
    try {
      for (const store of [atOnce, inTurns]) {
        const written = await ingestItems(store, annItems(), { relations: false });
        expect(written.rejected).toEqual([]);
        await ingestItems(store, [{ type: 'record', record: bob('b0'), source: { file: 'api' } }], {
          contextId: 'bob',
        });
      }
      const expected = await updateRelations(atOnce, 'ann');
      expect(expected.mode).toBe('rebuild');

      const queue = new WriteQueue();
      const order: string[] = [];
      let turns = 0;
      let bobWrite: Promise<unknown> | undefined;
      const report = await updateRelations(inTurns, 'ann', {
        turn: (work) =>
          queue.exclusive(async () => {
            turns++;
            // In the rebuild's second turn (the schema edges), another user's add is queued behind it.
            if (turns === 2) {
              bobWrite = queue.exclusive(async () => {
                await ingestItems(inTurns, [{ type: 'record', record: bob('b1'), source: { file: 'api' } }], {
                  contextId: 'bob',
                });
                order.push('bob');
              });
            }
            return work();
          }),
      });
      order.push('rebuild');
      await bobWrite;
      expect(report.mode).toBe('rebuild');
      expect(report.entries).toBe(1200);
      // The decision, the schema edges, the semantic state, its edges, the journal and marks, the lexical merge.
      expect(turns).toBeGreaterThanOrEqual(6);
      expect(order).toEqual(['bob', 'rebuild']);
      const built = await relationsOf(inTurns, 'ann');
      expect(built.counts.same_round).toBeGreaterThan(0);
      expect(built.counts.semantic_knn).toBeGreaterThan(0);
      expect(built).toEqual(await relationsOf(atOnce, 'ann'));
      expect((await inTurns.relationWorkStatus('ann')).pending).toBe(0);
      expect(await inTurns.countMemories('bob')).toBe(2);
      expect(await inTurns.integrityCheck()).toEqual({ ok: true, problems: [] });
    } finally {
      await atOnce.close();
      await inTurns.close();
    }
  }, 120_000);
});

describe.each(BACKENDS)("a first import's semantic edges in slices of the write queue (%s)", (_, open) => {
  it('adds them pair by pair in turns of their own, with the same types and strengths as replaceEdges', async () => {
    const atOnce = await open();
    const inTurns = await open();
    try {
      for (const store of [atOnce, inTurns]) {
        await ingestItems(store, annItems());
        // The schema edges stay; the semantic ones go, as before a context's first rebuild.
        await store.replaceEdges('ann', ['semantic_knn'], []);
        expect((await store.countEdges('ann')).same_round).toBeGreaterThan(0);
      }
      const expected = await compactSemantic(atOnce, 'ann', { k: 8 });
      const before = (await inTurns.countEdges('ann')).same_round;
      let turns = 0;
      const counts: number[] = [];
      const report = await compactSemantic(inTurns, 'ann', {
        k: 8,
        edgeSlice: 500,
        turn: async (work) => {
          turns++;
          counts.push((await inTurns.countEdges('ann')).semantic_knn);
          return work();
        },
      });
      expect(report.edges).toBe(expected.edges);
      expect(expected.edges).toBeGreaterThan(1500);
      const slices = Math.ceil(expected.edges / 500);
      // The state (staged or at once), the check, one turn per slice, the marks.
      expect(turns).toBeGreaterThanOrEqual(2 + slices + 1);
      // The edges grew slice by slice: other users' writes could go between them.
      expect(new Set(counts.filter((n) => n > 0 && n < expected.edges)).size).toBeGreaterThanOrEqual(
        slices - 1,
      );
      expect((await inTurns.countEdges('ann')).same_round).toBe(before);
      expect(await relationsOf(inTurns, 'ann')).toEqual(await relationsOf(atOnce, 'ann'));
      expect(await inTurns.integrityCheck()).toEqual({ ok: true, problems: [] });
    } finally {
      await atOnce.close();
      await inTurns.close();
    }
  }, 120_000);
});

function bob(id: string): MemoryRecord {
  return {
    id,
    contextId: 'bob',
    kind: 'message',
    sequence: 0,
    text: `bob note ${id}`,
    assets: [],
  } as MemoryRecord;
}
