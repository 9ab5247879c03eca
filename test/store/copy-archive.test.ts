import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { copyArchive } from '../../src/store/copy-archive.ts';
import { openStore } from '../../src/store/open-store.ts';
import { stoppedForget } from '../support/stopped-forget.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';

const dir = mkdtempSync(join(tmpdir(), 'gm-copy-'));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropTestDatabases();
});
if (PG_SKIP) console.log(`copy-archive: Postgres cases skipped: ${PG_SKIP}`);

const TOPICS = ['ceramics class', 'dentist visit', 'flight to Lisbon', 'design review', 'tax return'];
const record = (user: string, i: number) => ({
  id: `${user}-m${i}`,
  text: `${user} said the ${TOPICS[i % TOPICS.length]} moved to ${['Monday', 'Friday', 'noon'][i % 3]} (note ${i}, room ${i % 11})`,
  sessionId: `${user}-s${Math.floor(i / 6)}`,
  timestamp: new Date(Date.UTC(2024, 2, 1) + i * 3_600_000).toISOString(),
  ...(i % 2 === 0 ? { role: 'user' } : { role: 'assistant' }),
});

const CONTEXTS = { alice: 140, bob: 60 };
const QUESTIONS = ['When is the design review?', 'Where does the flight go?'];

/** A source archive with everything a copy must carry: several contexts, edges, a dense space, meta, questions. */
async function buildSource(db: string): Promise<void> {
  const gm = await openGraphmemix({ db });
  for (const [user, n] of Object.entries(CONTEXTS)) {
    await gm.addMemories(
      user,
      Array.from({ length: n }, (_, i) => record(user, i)),
    );
    await gm.compact(user);
  }
  // A vector space the offline pipeline does not write (as an embedding model would), questions and a calibration.
  await gm.store.putVectors(
    'alice',
    'embedding:test-model',
    Array.from({ length: 5 }, (_, i) => ({
      memoryId: `alice-m${i}`,
      kind: 'text' as const,
      key: 'main',
      vector: Float32Array.from([i + 1, 2, 3 - i]),
    })),
  );
  await gm.store.putQuestions([
    { id: 'q1', contextId: 'alice', prompt: QUESTIONS[0]!, goldEvidence: ['alice-m3'] } as never,
  ]);
  await gm.store.setMeta('calibration:test', { a: 1.5, b: 0.25, c: -2 });
  await gm.close();
}

/** Everything the copy promises, read through the port, for one context. */
async function contextState(store: ArchiveStore, context: string) {
  const records = await store.listMemories(context, { limit: 100_000 });
  const ids = records.map((r) => r.id);
  return {
    count: await store.countMemories(context),
    records,
    hashes: [...(await store.getContentHashes(context, ids))].sort(),
    views: (await store.getViews(context, ids)).map((v) => JSON.stringify(v)).sort(),
    edges: (await store.neighbors(context, ids))
      .map((e) => JSON.stringify([[e.a, e.b].sort(), [...e.types].sort(), e.strength, e.similarity]))
      .sort(),
    edgeCounts: await store.countEdges(context),
    keys: (await store.findKeyRange(context, '', '\uffff', { limit: 100_000 })).map(
      (k) => `${k.key} ${k.record.id}`,
    ),
    snapshot: await store.semantic.getSnapshot(context),
    docs: await store.semantic.getDocs(context, ids),
    vectors: (await store.getVectors(context, 'embedding:test-model')).map((v) => [
      v.memoryId,
      [...v.vector],
    ]),
    questions: await store.listQuestions(context),
    journal: (await store.relationWorkStatus(context)).pending,
  };
}

async function retrieveBoth(source: ArchiveStore, target: ArchiveStore, context: string) {
  const answers = [];
  for (const store of [source, target]) {
    const gm = await openGraphmemix({ db: store.backend, store });
    const rows = [];
    for (const question of QUESTIONS) {
      const result = await gm.retrieve(context, question, { k: 8 });
      rows.push({
        evidence: result.evidence.map((e) => e.memoryId),
        pool: result.pool.map((p) => [p.memoryId, p.retrievalScore, p.prize]),
      });
    }
    answers.push(rows);
    await gm.close();
  }
  return answers;
}

async function expectMirror(source: ArchiveStore, target: ArchiveStore): Promise<void> {
  expect((await target.listContexts()).map((c) => [c.id, c.memories])).toEqual(
    (await source.listContexts()).map((c) => [c.id, c.memories]),
  );
  for (const context of Object.keys(CONTEXTS)) {
    const from = await contextState(source, context);
    const to = await contextState(target, context);
    expect(to.count).toBe(CONTEXTS[context as keyof typeof CONTEXTS]);
    expect({ ...to, journal: undefined }).toEqual({ ...from, journal: undefined });
    expect(to.journal).toBe(0);
    const [a, b] = await retrieveBoth(source, target, context);
    expect(a!.some((row) => row.evidence.length > 0)).toBe(true);
    expect(b).toEqual(a);
  }
  expect(await target.getMeta('calibration:test')).toEqual({ a: 1.5, b: 0.25, c: -2 });
}

const copies: Array<[string, () => Promise<ArchiveStore>]> = [
  ['sqlite -> sqlite', () => openStore(join(dir, `target-${Math.random()}.db`))],
  ['sqlite -> memory', () => openStore('memory:')],
  ...(PG_SKIP
    ? []
    : ([['sqlite -> postgres', async () => openStore(await createTestDatabase())]] as Array<
        [string, () => Promise<ArchiveStore>]
      >)),
];

describe('copyArchive: a whole archive through the store port', () => {
  const sourceDb = join(dir, 'source.db');
  beforeAll(() => buildSource(sourceDb), 120_000);

  for (const [name, openTarget] of copies) {
    it(`${name}: the target mirrors the source, and a re-run writes nothing`, async () => {
      const source = await openStore(sourceDb, { readonly: true });
      const target = await openTarget();
      try {
        const progress: number[] = [];
        const first = await copyArchive(source, target, {
          pageSize: 64,
          onProgress: ({ done, total }) => progress.push(done / total),
        });
        expect(first.contexts.map((c) => [c.contextId, c.memories, c.written])).toEqual([
          ['alice', 140, 140],
          ['bob', 60, 60],
        ]);
        expect(first.contexts[0]!.semantic).toBe(true);
        expect(first.contexts[0]!.vectors).toBe(5);
        // The calibration, and each context's relation-keys-version mark (its keys are copied as they are).
        expect(first.meta).toBe(3);
        expect(progress.at(-1)).toBe(1);
        expect(first.warnings).toEqual([]);
        await expectMirror(source, target);
        expect(first.contexts[0]!.edges).toBeGreaterThan(0);

        const again = await copyArchive(source, target, { pageSize: 64 });
        for (const context of again.contexts) {
          expect([
            context.written,
            context.vectors,
            context.edges,
            context.semantic,
            context.questions,
          ]).toEqual([0, 0, 0, false, 0]);
        }
        expect(again.meta).toBe(0);
        await expectMirror(source, target);
        expect((await target.integrityCheck()).ok).toBe(true);
      } finally {
        await source.close();
        await target.close();
      }
    }, 120_000);
  }

  it('copies one context only, and back again (sqlite -> memory -> sqlite)', async () => {
    const source = await openStore(sourceDb, { readonly: true });
    const middle = await openStore('memory:');
    const back = await openStore(join(dir, 'back.db'));
    try {
      const one = await copyArchive(source, middle, { contextId: 'bob' });
      expect(one.contexts.map((c) => c.contextId)).toEqual(['bob']);
      expect((await middle.listContexts()).map((c) => c.id)).toEqual(['bob']);
      await copyArchive(middle, back);
      expect(await contextState(back, 'bob')).toEqual(await contextState(source, 'bob'));
      await expect(copyArchive(source, middle, { contextId: 'nobody' })).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
    } finally {
      await source.close();
      await middle.close();
      await back.close();
    }
  }, 120_000);

  it('does not copy a user whose forget began (a copy would bring back what it asked to forget)', async () => {
    const db = join(dir, 'forgetting.db');
    await buildSource(db);
    const source = await openStore(db);
    // Stopped right after the mark, as a process killed there leaves it.
    await stoppedForget(source, 'bob', 1);
    const target = await openStore('memory:');
    try {
      const report = await copyArchive(source, target);
      expect(report.contexts.map((c) => c.contextId)).toEqual(['alice']);
      expect(report.warnings).toContain(
        'context bob is being forgotten: not copied (finish with graphmemix forget)',
      );
      expect((await target.listContexts()).map((c) => c.id)).toEqual(['alice']);
    } finally {
      await source.close();
      await target.close();
    }
  }, 120_000);

  it.skipIf(PG_SKIP !== undefined)(
    'postgres -> sqlite: back down from a server, the same mirror',
    async () => {
      const source = await openStore(sourceDb, { readonly: true });
      const server = await openStore(await createTestDatabase());
      const back = await openStore(join(dir, 'from-postgres.db'));
      try {
        await copyArchive(source, server);
        const down = await copyArchive(server, back, { pageSize: 50 });
        expect(down.warnings).toEqual([]);
        await expectMirror(source, back);
        await expectMirror(server, back);
        const again = await copyArchive(server, back);
        expect(again.contexts.map((c) => c.written + c.vectors + c.edges + c.questions)).toEqual([0, 0]);
      } finally {
        await source.close();
        await server.close();
        await back.close();
      }
    },
    180_000,
  );

  it('brings a changed target back to the source (updated record, extra edge types, dropped vectors)', async () => {
    const source = await openStore(sourceDb, { readonly: true });
    const target = await openStore('memory:');
    try {
      await copyArchive(source, target);
      const gm = await openGraphmemix({ db: 'memory:', store: target });
      // Drift: one record rewritten (its views and vectors change), a memory deleted.
      await gm.addMemories('alice', [{ ...record('alice', 4), text: 'completely different words here' }]);
      await gm.deleteMemory('alice', 'alice-m7');
      await gm.close();
      const repair = await copyArchive(source, target);
      const alice = repair.contexts.find((c) => c.contextId === 'alice')!;
      expect(alice.written).toBe(2);
      await expectMirror(source, target);
    } finally {
      await source.close();
      await target.close();
    }
  }, 120_000);
});
