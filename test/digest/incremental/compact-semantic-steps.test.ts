import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compactSemantic } from '../../../src/digest/incremental/compact-semantic.ts';
import {
  type CompactionTurn,
  compactSemanticInSteps,
} from '../../../src/digest/incremental/compact-semantic-steps.ts';
import {
  appendBacklog,
  backlogKeys,
  COMPACTION_LEASE_MS,
  clearCompactionState,
  compactionLive,
  newCompactionMark,
  readCompactionMark,
  type SemanticCompactionMark,
  whileRunning,
  writeCompactionMark,
} from '../../../src/digest/incremental/semantic-compaction-mark.ts';
import { updateSemanticKnn } from '../../../src/digest/incremental/update-semantic-knn.ts';
import { updateSemanticRelations } from '../../../src/digest/incremental/update-semantic-relations.ts';
import { mulberry32 } from '../../../src/digest/semantic/seeded-random.ts';
import type { ArchiveStore } from '../../../src/store/archive-store-spec.ts';
import type { MemoryRecord } from '../../../src/types/memory-record.ts';
import { dropTestDatabases } from '../../store/postgres-test-db.ts';
import { storeBackends } from '../../store/store-backends.ts';
import { deadPid } from '../../support/dead-pid.ts';
import { put, record, skewedText } from './knn-test-fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-steps-'));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropTestDatabases();
});

const BACKENDS = storeBackends(dir, 'steps');

const WORDS = Array.from({ length: 60 }, (_, i) => `w${i.toString(36)}x`);
const SIZES = { docs: 37, edges: 41, replay: 5 };
const direct: CompactionTurn = (work) => work();

/** 150 memories compacted with k = 4, then 14 more added incrementally (the snapshot has drifted). */
async function drifted(store: ArchiveStore, seed: number): Promise<Map<string, MemoryRecord>> {
  const random = mulberry32(seed);
  const live = new Map<string, MemoryRecord>();
  const make = (n: number) => record(`m${String(n).padStart(4, '0')}`, skewedText(WORDS, random, 2, 9), n);
  const initial = Array.from({ length: 150 }, (_, n) => make(n));
  for (const r of initial) live.set(r.id, r);
  await put(store, initial);
  await compactSemantic(store, 'ctx', { k: 4 });
  const later = Array.from({ length: 14 }, (_, n) => make(150 + n));
  for (const r of later) live.set(r.id, r);
  await put(store, later);
  await updateSemanticKnn(store, 'ctx', { upserted: later.map((after) => ({ after })), removed: [] });
  return live;
}

/** Snapshot, df, documents and semantic_knn edges: the whole semantic state, for comparison. */
async function stateOf(store: ArchiveStore, ids: readonly string[]) {
  const snapshot = await store.semantic.getSnapshot('ctx');
  const docs = await store.semantic.getDocs('ctx', ids);
  const terms = [...new Set(docs.flatMap((doc) => doc.terms))];
  const df = [...(await store.semantic.documentFrequencies('ctx', [...terms, ...WORDS]))].sort();
  const edges = (await store.neighbors('ctx', ids))
    .filter((edge) => edge.types.includes('semantic_knn'))
    .map((edge) => `${edge.a}|${edge.b}|${edge.similarity!.toFixed(9)}`)
    .sort();
  return {
    snapshot: snapshot && { ...snapshot, createdAt: '' },
    df,
    docs,
    edges: [...new Set(edges)],
  };
}

/** Mutual pairs of the stored lists, as "a|b". */
function mutualOf(
  docs: ReadonlyArray<{ memoryId: string; neighbours: ReadonlyArray<{ memoryId: string }> }>,
) {
  const lists = new Map(docs.map((doc) => [doc.memoryId, new Set(doc.neighbours.map((n) => n.memoryId))]));
  const pairs = new Set<string>();
  for (const [id, names] of lists) {
    for (const other of names)
      if (lists.get(other)?.has(id)) pairs.add(id < other ? `${id}|${other}` : `${other}|${id}`);
  }
  return [...pairs].sort();
}

describe.each(BACKENDS)('compaction in steps (%s)', (_name, open) => {
  it("a write's delta under a quarter of the context is added, then compacted in steps; inline only without a scheduler", async () => {
    const [a, b, c] = [await open(), await open(), await open()];
    const random = mulberry32(3);
    const make = (n: number) => record(`m${String(n).padStart(4, '0')}`, skewedText(WORDS, random, 2, 9), n);
    const initial = Array.from({ length: 200 }, (_, n) => make(n));
    const tenth = Array.from({ length: 20 }, (_, n) => make(200 + n));
    for (const store of [a, b, c]) {
      await put(store, initial);
      await compactSemantic(store, 'ctx', { k: 4 });
      await put(store, tenth);
    }
    const delta = { upserted: tenth.map((after) => ({ after })), removed: [] };
    // 10% of the snapshot reaches the 5% rule: with a scheduler it is added (one turn of adds), and the
    // compaction goes to the background; before round 32 the write compacted the whole context itself.
    const scheduled: SemanticCompactionMark[] = [];
    // A scheduler not ready for the context (its last run ended too recently): added, and no run is started.
    const cooling = await updateSemanticRelations(c, 'ctx', delta, {
      compactInBackground: Object.assign(
        (_context: string, mark: SemanticCompactionMark) => scheduled.push(mark),
        {
          ready: () => false,
        },
      ),
    });
    expect(cooling.mode).toBe('incremental');
    expect(scheduled).toHaveLength(0);
    expect(await readCompactionMark(c, 'ctx')).toBeUndefined();
    expect(
      (
        await c.semantic.getDocs(
          'ctx',
          tenth.map((r) => r.id),
        )
      ).length,
    ).toBe(20);
    expect((await c.semantic.getSnapshot('ctx'))?.documents).toBe(200);
    const stepped = await updateSemanticRelations(a, 'ctx', delta, {
      compactInBackground: (_context, mark) => scheduled.push(mark),
    });
    expect(stepped.mode).toBe('incremental');
    expect(scheduled).toHaveLength(1);
    expect((await a.semantic.getSnapshot('ctx'))?.documents).toBe(200);
    // Without one, compacting is the cheaper way to the same end (the rule would compact right after).
    const inline = await updateSemanticRelations(b, 'ctx', delta, {});
    expect(inline.mode).toBe('compacted');
    expect((await b.semantic.getSnapshot('ctx'))?.documents).toBe(220);
    // The steps end where the inline compaction did.
    const result = await compactSemanticInSteps(a, 'ctx', scheduled[0]!, direct, { sizes: SIZES });
    expect(result.outcome).toBe('done');
    const ids = [...initial, ...tenth].map((r) => r.id);
    expect((await stateOf(a, ids)).edges).toEqual((await stateOf(b, ids)).edges);
    // A quarter or more is still compacted inside the write, scheduler or not.
    const quarter = Array.from({ length: 60 }, (_, n) => make(220 + n));
    await put(a, quarter);
    const bulk = await updateSemanticRelations(
      a,
      'ctx',
      { upserted: quarter.map((after) => ({ after })), removed: [] },
      { compactInBackground: (_context, mark) => scheduled.push(mark) },
    );
    expect(bulk.mode).toBe('compacted');
    expect(scheduled).toHaveLength(1);
    await a.close();
    await b.close();
    await c.close();
  });

  it('with no write between its steps, ends in exactly the state of compactSemantic', async () => {
    const [a, b] = [await open(), await open()];
    const live = await drifted(a, 7);
    await drifted(b, 7);
    await compactSemantic(a, 'ctx');
    const mark = newCompactionMark();
    await writeCompactionMark(b, 'ctx', mark);
    const result = await compactSemanticInSteps(b, 'ctx', mark, direct, { sizes: SIZES });
    expect(result.outcome).toBe('done');
    expect(result.documents).toBe(164);
    // 1 + 5 document steps + snapshot + 4 edge steps + the replay's turn.
    expect(result.steps).toBe(12);
    const ids = [...live.keys()];
    const [want, got] = [await stateOf(a, ids), await stateOf(b, ids)];
    expect(got.snapshot).toEqual(want.snapshot);
    expect(got.df).toEqual(want.df);
    expect(got.docs).toEqual(want.docs);
    expect(got.edges).toEqual(want.edges);
    expect(await readCompactionMark(b, 'ctx')).toBeUndefined();
    expect(await backlogKeys(b, 'ctx')).toEqual([]);
    expect((await b.integrityCheck()).ok).toBe(true);
    await a.close();
    await b.close();
  });

  it('sized by time: steps that fit the budget, the same end state as compactSemantic', async () => {
    const [a, b] = [await open(), await open()];
    const live = await drifted(a, 11);
    await drifted(b, 11);
    await compactSemantic(a, 'ctx');
    const mark = newCompactionMark();
    await writeCompactionMark(b, 'ctx', mark);
    // A budget no step can meet: every step after the first of its kind holds one item.
    const tight = await compactSemanticInSteps(b, 'ctx', mark, direct, { stepMs: 1e-6 });
    expect(tight.outcome).toBe('done');
    // 1 + (1 of 16 documents + 148 of one) + snapshot + (1 of 64 memories + 100 of one) + the replay's turn.
    expect(tight.steps).toBe(1 + 149 + 1 + 101 + 1);
    const ids = [...live.keys()];
    const want = await stateOf(a, ids);
    expect(await stateOf(b, ids)).toEqual(want);
    // A generous budget: steps grow twofold up to the caps (16, 32, 64, 52 documents; 64, 100 memories).
    const again = newCompactionMark();
    await writeCompactionMark(b, 'ctx', again);
    const loose = await compactSemanticInSteps(b, 'ctx', again, direct, { stepMs: 1e9 });
    expect(loose.steps).toBe(1 + 4 + 1 + 2 + 1);
    expect(await stateOf(b, ids)).toEqual(want);
    expect((await b.integrityCheck()).ok).toBe(true);
    await a.close();
    await b.close();
  });

  it("a backlog row larger than a step is applied in parts, one step's worth at a time", async () => {
    const store = await open();
    const live = await drifted(store, 5);
    const random = mulberry32(17);
    const mark = newCompactionMark();
    await writeCompactionMark(store, 'ctx', mark);
    const added = Array.from({ length: 12 }, (_, n) =>
      record(`n${n}`, skewedText(WORDS, random, 2, 9), 900 + n),
    );
    const rows: number[][] = [];
    const turn: CompactionTurn = async (work) => {
      if (rows.length === 0) {
        // One write of 12 memories before the run's first step: one backlog row of 12 ids.
        for (const r of added) live.set(r.id, r);
        await put(store, added);
        const update = { upserted: added.map((after) => ({ after })), removed: [] };
        expect((await updateSemanticRelations(store, 'ctx', update, {})).mode).toBe('deferred');
      }
      const sizes = [];
      for (const key of await backlogKeys(store, 'ctx'))
        sizes.push((await store.getMeta<string[]>(key))!.length);
      rows.push(sizes);
      return work();
    };
    const result = await compactSemanticInSteps(store, 'ctx', mark, turn, { sizes: SIZES });
    expect(result.outcome).toBe('done');
    expect(result.replayed).toBe(12);
    // Steps of 5: the row holds 12, then 7, then 2 ids (before round 32 one step took all 12).
    expect(rows.map((sizes) => sizes.join(',')).filter((sizes) => sizes !== '12')).toEqual(['7', '2']);
    expect(await backlogKeys(store, 'ctx')).toEqual([]);
    const ids = [...live.keys()].sort();
    const docs = await store.semantic.getDocs('ctx', ids);
    expect(docs.map((doc) => doc.memoryId)).toEqual(ids);
    expect((await stateOf(store, ids)).edges.map((edge) => edge.split('|').slice(0, 2).join('|'))).toEqual(
      mutualOf(docs),
    );
    await store.close();
  });

  it('writes between its steps go to the backlog and are applied under the new snapshot', async () => {
    const store = await open();
    const live = await drifted(store, 11);
    const random = mulberry32(99);
    let next = 500;
    // Relation updates of the writes, as a write of the facade would run them (no scheduler: the mark is live).
    const write = async () => {
      const ids = [...live.keys()];
      const roll = random();
      if (roll < 0.5) {
        const r = record(`m${next}`, skewedText(WORDS, random, 2, 9), next++);
        live.set(r.id, r);
        await put(store, [r]);
        expect(
          (await updateSemanticRelations(store, 'ctx', { upserted: [{ after: r }], removed: [] }, {})).mode,
        ).toBe('deferred');
      } else if (roll < 0.75) {
        const before = live.get(ids[Math.floor(random() * ids.length)]!)!;
        const after = { ...before, text: skewedText(WORDS, random, 2, 9) };
        live.set(after.id, after);
        await put(store, [after]);
        await updateSemanticRelations(store, 'ctx', { upserted: [{ before, after }], removed: [] }, {});
      } else {
        const gone = live.get(ids[Math.floor(random() * ids.length)]!)!;
        live.delete(gone.id);
        await store.deleteMemory('ctx', gone.id);
        await updateSemanticRelations(store, 'ctx', { upserted: [], removed: [gone] }, {});
      }
    };
    let turns = 0;
    const turn: CompactionTurn = async (work) => {
      // Two writes before every other turn, so they land before, among and after the document steps.
      if (turns++ % 2 === 1) {
        await write();
        await write();
      }
      return work();
    };
    const mark = newCompactionMark();
    await writeCompactionMark(store, 'ctx', mark);
    const result = await compactSemanticInSteps(store, 'ctx', mark, turn, { sizes: SIZES });
    expect(result.outcome).toBe('done');
    expect(result.replayed).toBeGreaterThan(5);
    expect(await readCompactionMark(store, 'ctx')).toBeUndefined();
    expect(await backlogKeys(store, 'ctx')).toEqual([]);

    const ids = [...live.keys()].sort();
    const docs = await store.semantic.getDocs('ctx', ids);
    // Every live memory has its document, no list names a deleted one, and the edges are the lists' mutual pairs.
    expect(docs.map((doc) => doc.memoryId)).toEqual(ids);
    for (const doc of docs) for (const n of doc.neighbours) expect(live.has(n.memoryId)).toBe(true);
    const state = await stateOf(store, ids);
    expect(state.edges.map((edge) => edge.split('|').slice(0, 2).join('|'))).toEqual(mutualOf(docs));
    // Counted from the new snapshot: each replayed id is a put or a removal, a changed one both.
    expect(state.snapshot?.changes).toBeGreaterThanOrEqual(result.replayed);
    expect(state.snapshot?.changes).toBeLessThanOrEqual(2 * result.replayed);
    // Close to a fresh exact compaction (the writes after the snapshot are in its IDF, not in the run's).
    await compactSemantic(store, 'ctx');
    const exact = (await stateOf(store, ids)).edges.map((edge) => edge.split('|').slice(0, 2).join('|'));
    const mine = new Set(state.edges.map((edge) => edge.split('|').slice(0, 2).join('|')));
    const shared = exact.filter((key) => mine.has(key)).length;
    expect(shared / (exact.length + mine.size - shared)).toBeGreaterThan(0.85);
    expect((await store.integrityCheck()).ok).toBe(true);
    await store.close();
  });

  it('stops when another compaction took the context, and leaves that one as it wrote it', async () => {
    const store = await open();
    const live = await drifted(store, 13);
    let turns = 0;
    const turn: CompactionTurn = async (work) => {
      if (++turns === 4) await compactSemantic(store, 'ctx');
      return work();
    };
    const mark = newCompactionMark();
    await writeCompactionMark(store, 'ctx', mark);
    const result = await compactSemanticInSteps(store, 'ctx', mark, turn, { sizes: SIZES });
    expect(result.outcome).toBe('superseded');
    const ids = [...live.keys()];
    const after = await stateOf(store, ids);
    await compactSemantic(store, 'ctx');
    expect((await stateOf(store, ids)).edges).toEqual(after.edges);
    expect((await stateOf(store, ids)).docs).toEqual(after.docs);
    await store.close();
  });

  it('a signal stops it between steps and leaves its mark (a later write finds it stale)', async () => {
    const store = await open();
    await drifted(store, 19);
    const stop = new AbortController();
    let turns = 0;
    const turn: CompactionTurn = async (work) => {
      if (++turns === 4) stop.abort();
      return work();
    };
    const mark = newCompactionMark();
    await writeCompactionMark(store, 'ctx', mark);
    const result = await compactSemanticInSteps(store, 'ctx', mark, turn, {
      sizes: SIZES,
      signal: stop.signal,
    });
    expect(result.outcome).toBe('stopped');
    expect(result.steps).toBe(3);
    expect((await readCompactionMark(store, 'ctx'))?.token).toBe(mark.token);
    await store.close();
  });

  it("a user's backlog rows are its own, whatever its id (quotes, slashes, a prefix of another's)", async () => {
    const store = await open();
    const users = ['a', 'a/', 'a"', 'a"/x', 'a\\"/', '"a"', 'a:b', 'a\u0001', 'ab', '\ud83d\ude00', ''];
    for (const [n, user] of users.entries()) await appendBacklog(store, user, [`m${n}`]);
    for (const [n, user] of users.entries()) {
      const keys = await backlogKeys(store, user);
      expect(keys).toHaveLength(1);
      expect(await store.getMeta(keys[0]!)).toEqual([`m${n}`]);
    }
    // Clearing one user's state leaves every other user's backlog alone.
    await clearCompactionState(store, 'a');
    expect(await backlogKeys(store, 'a')).toEqual([]);
    for (const user of users.slice(1)) expect(await backlogKeys(store, user)).toHaveLength(1);
    await store.close();
  });

  it('a mark whose run is gone: restarted through the scheduler, or compacted in one turn without one', async () => {
    const store = await open();
    const live = await drifted(store, 17);
    const dead: SemanticCompactionMark = { ...newCompactionMark(), token: 'dead-run' };
    await writeCompactionMark(store, 'ctx', dead);
    const newcomer = record('m9000', `${WORDS[1]} ${WORDS[2]} ${WORDS[3]}`, 9000);
    live.set(newcomer.id, newcomer);
    await put(store, [newcomer]);
    const scheduled: SemanticCompactionMark[] = [];
    const report = await updateSemanticRelations(
      store,
      'ctx',
      { upserted: [{ after: newcomer }], removed: [] },
      { compactInBackground: (_context, mark) => scheduled.push(mark) },
    );
    expect(report.mode).toBe('deferred');
    expect(scheduled).toHaveLength(1);
    expect(scheduled[0]!.token).not.toBe('dead-run');
    expect((await readCompactionMark(store, 'ctx'))?.token).toBe(scheduled[0]!.token);
    expect(await backlogKeys(store, 'ctx')).toHaveLength(1);
    const result = await compactSemanticInSteps(store, 'ctx', scheduled[0]!, direct, { sizes: SIZES });
    expect(result.outcome).toBe('done');
    expect((await store.semantic.getDocs('ctx', [newcomer.id])).map((doc) => doc.memoryId)).toEqual([
      newcomer.id,
    ]);

    // Without a scheduler (the library's own updateRelations): one exact compaction clears mark and backlog.
    await writeCompactionMark(store, 'ctx', dead);
    const second = record('m9001', `${WORDS[4]} ${WORDS[5]}`, 9001);
    live.set(second.id, second);
    await put(store, [second]);
    const inline = await updateSemanticRelations(
      store,
      'ctx',
      { upserted: [{ after: second }], removed: [] },
      {},
    );
    expect(inline.mode).toBe('compacted');
    expect(inline.warnings.join()).toMatch(/interrupted semantic compaction/);
    expect(await readCompactionMark(store, 'ctx')).toBeUndefined();
    const ids = [...live.keys()];
    const before = await stateOf(store, ids);
    await compactSemantic(store, 'ctx');
    expect((await stateOf(store, ids)).edges).toEqual(before.edges);
    await store.close();
  });
});

describe("whether a mark's run may still be going (compactionLive)", () => {
  it("another process's mark is live within its lease unless flagged stopped; this process's only while held", async () => {
    const now = Date.parse('2026-12-03T05:00:00Z');
    // A live process of this machine (the test runner's parent).
    const other = { ...newCompactionMark(new Date(now - 60_000)), pid: process.ppid };
    expect(compactionLive(other, now)).toBe(true);
    // A server that shut down stopped its run on purpose: the next write need not wait out the lease.
    expect(compactionLive({ ...other, stoppedAt: new Date(now).toISOString() }, now)).toBe(false);
    expect(compactionLive(other, now + COMPACTION_LEASE_MS)).toBe(false);
    const own = newCompactionMark(new Date(now));
    expect(compactionLive(own, now)).toBe(false);
    await whileRunning(own.token, async () => {
      expect(compactionLive(own, now)).toBe(true);
      expect(compactionLive({ ...own, stoppedAt: new Date(now).toISOString() }, now)).toBe(true);
    });
  });

  it('a mark of this machine whose process is gone is stale at once; of another machine it keeps its lease', async () => {
    const now = Date.parse('2026-12-03T05:00:00Z');
    const dead = { ...newCompactionMark(new Date(now - 60_000)), pid: await deadPid() };
    expect(compactionLive(dead, now)).toBe(false);
    expect(compactionLive({ ...dead, host: 'another-machine' }, now)).toBe(true);
    // A mark written before marks named their machine: the lease alone, as before.
    const { host: _host, ...older } = dead;
    expect(compactionLive(older, now)).toBe(true);
  });
});
