import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/digest/semantic/seeded-random.ts';
import type { ArchiveStore, VectorRow } from '../../src/store/archive-store-spec.ts';
import { createSqliteStore } from '../../src/store/sqlite-store.ts';
import { trainUntrainedSpaces } from '../../src/store/sqlite-stored-ivf.ts';
import { VectorIndex } from '../../src/store/vector-index.ts';
import { write } from './store-conformance.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-stored-ivf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const archive = () => join(dir, `a${files++}.db`);

/** usearch absent (the default install on Node 20): the stored IVF serves large spaces. */
const missing = () =>
  Promise.reject(Object.assign(new Error("Cannot find package 'usearch'"), { code: 'ERR_MODULE_NOT_FOUND' }));
const THRESHOLD = 300;
const DIMS = 12;

const open = (
  file: string,
  options: { readonly?: boolean; ivf?: { threshold?: number; keptFloats?: number } } = {},
) =>
  createSqliteStore(file, {
    ann: { load: missing },
    ...(options.readonly === undefined ? {} : { readonly: options.readonly }),
    ivf: { threshold: THRESHOLD, ...options.ivf },
  });

/** Clustered vectors (40 centres, noise), seeded: recall of a probe over a few lists is meaningful. */
function vectors(count: number, seed: number, first = 0): VectorRow[] {
  const random = mulberry32(seed);
  const centres = Array.from({ length: 40 }, (_, c) => {
    const centre = mulberry32(1000 + c);
    return Array.from({ length: DIMS }, () => centre() * 2 - 1);
  });
  return Array.from({ length: count }, (_, i) => {
    const centre = centres[Math.floor(random() * centres.length)]!;
    return {
      memoryId: `m${String(first + i).padStart(5, '0')}`,
      kind: (i % 5 === 0 ? 'caption' : 'text') as VectorRow['kind'],
      key: 'main',
      vector: Float32Array.from(centre, (value) => value + (random() - 0.5) * 0.6),
    };
  });
}

async function put(store: ArchiveStore, rows: VectorRow[]): Promise<void> {
  await store.writeMemories(
    'ctx',
    rows.map((row) => write('ctx', row.memoryId, `text ${row.memoryId}`, Number(row.memoryId.slice(1)))),
  );
  await store.putVectors('ctx', 'space', rows);
}

/** A new archive whose space holds `count` rows (trained: above THRESHOLD), and its writing store. */
async function trainedArchive(count: number, seed: number) {
  const file = archive();
  const store = open(file);
  const rows = vectors(count, seed);
  await put(store, rows);
  return { file, store, rows };
}

function ivfRow(file: string): { nlist: number; trained_rows: number; generation: number } | undefined {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT nlist, trained_rows, generation FROM vector_ivf').get() as never;
  } finally {
    db.close();
  }
}

/** Counts statements that read every vector row of a space (the in-process index's build). */
const prototype = Database.prototype as unknown as { prepare: (sql: string) => Database.Statement };
const original = prototype.prepare;
afterEach(() => {
  prototype.prepare = original;
});
function countWholeSpaceReads(): { reads: number } {
  const counter = { reads: 0 };
  prototype.prepare = function (this: Database.Database, sql: string) {
    const statement = original.call(this, sql);
    if (
      /^SELECT memory_id, kind, key, vector FROM vectors WHERE context_id = \? AND space = \? ORDER BY/.test(
        sql.replace(/\s+/g, ' '),
      )
    ) {
      const all = statement.all.bind(statement);
      (statement as unknown as { all: (...args: unknown[]) => unknown }).all = (...args: unknown[]) => {
        counter.reads++;
        return all(...args);
      };
    }
    return statement;
  };
  return counter;
}

const ids = (hits: { memoryId: string; kind: string }[]) => hits.map((hit) => `${hit.memoryId}/${hit.kind}`);

describe('stored IVF (SQLite without usearch)', () => {
  it('is trained by the write that crosses the threshold, and again when the space has doubled', async () => {
    const file = archive();
    const store = open(file);
    const rows = vectors(1300, 1);
    await put(store, rows.slice(0, 300));
    expect(ivfRow(file)).toBeUndefined();
    await put(store, rows.slice(300, 301));
    const first = ivfRow(file)!;
    expect(first).toMatchObject({ nlist: Math.ceil(Math.sqrt(301)), trained_rows: 301 });
    await put(store, rows.slice(301, 602));
    expect(ivfRow(file)).toEqual(first); // 602 rows: not yet past twice 301
    await put(store, rows.slice(602, 603));
    const second = ivfRow(file)!;
    expect(second.trained_rows).toBe(603);
    expect(second.generation).not.toBe(first.generation);
    expect(await store.integrityCheck!()).toEqual({ ok: true, problems: [] });
    await store.close();
  });

  it('answers a fresh process without reading the whole space; recall@10 against exact, exact scores', async () => {
    const file = archive();
    const writer = open(file);
    const rows = vectors(1200, 2);
    for (let at = 0; at < rows.length; at += 200) await put(writer, rows.slice(at, at + 200));
    await writer.close();
    const counter = countWholeSpaceReads();
    const store = open(file, { readonly: true });
    const exact = new VectorIndex(rows, { approximateAbove: Number.POSITIVE_INFINITY });
    const queries = vectors(50, 77, 90_000);
    let shared = 0;
    for (const { vector } of queries) {
      const found = await store.searchVectors('ctx', 'space', vector, { limit: 10 });
      const truth = exact.search(vector, { limit: 10 });
      const truthScores = new Map(truth.map((hit) => [`${hit.memoryId}/${hit.kind}`, hit.rawScore]));
      for (const hit of found) {
        const score = truthScores.get(`${hit.memoryId}/${hit.kind}`);
        if (score === undefined) continue;
        shared++;
        expect(hit.rawScore).toBe(score);
      }
    }
    expect(counter.reads).toBe(0);
    expect(shared / (queries.length * 10)).toBeGreaterThanOrEqual(0.9);
    await store.close();
  });

  it('answers the same with a budget that keeps a few lists as with one that keeps them all', async () => {
    const { file, store: writer, rows } = await trainedArchive(900, 10);
    const roomy = open(file);
    const tight = open(file, { ivf: { keptFloats: 60 * DIMS } });
    for (const { vector } of vectors(30, 11, 70_000)) {
      const expected = await roomy.searchVectors('ctx', 'space', vector, { limit: 10 });
      expect(await tight.searchVectors('ctx', 'space', vector, { limit: 10 })).toEqual(expected);
    }
    // Writes and deletes between searches: the lists it kept are caught up, the evicted ones read again.
    await put(writer, vectors(40, 12, 60_000));
    await writer.deleteMemory('ctx', rows[5]!.memoryId);
    for (const { vector } of [...vectors(10, 13, 71_000), rows[5]!]) {
      const expected = await roomy.searchVectors('ctx', 'space', vector, { limit: 10 });
      expect(await tight.searchVectors('ctx', 'space', vector, { limit: 10 })).toEqual(expected);
    }
    for (const store of [writer, roomy, tight]) await store.close();
  });

  it('puts rows written after training in their lists: new, rewritten, deleted', async () => {
    const { file, store, rows } = await trainedArchive(500, 3);
    expect(ivfRow(file)).toBeDefined();
    const [fresh] = vectors(1, 4, 5000);
    await put(store, [fresh!]);
    expect((await store.searchVectors('ctx', 'space', fresh!.vector, { limit: 1 }))[0]!.memoryId).toBe(
      'm05000',
    );
    // A rewritten vector moves: found by its new value, its old one no longer finds it first.
    const moved = { ...rows[7]!, vector: Float32Array.from(fresh!.vector, (value) => -value) };
    await store.putVectors('ctx', 'space', [moved]);
    const top = await store.searchVectors('ctx', 'space', moved.vector, { limit: 1 });
    expect(top[0]!.memoryId).toBe(rows[7]!.memoryId);
    expect(top[0]!.rawScore).toBeCloseTo(1, 5);
    await store.deleteMemory('ctx', 'm05000');
    const after = await store.searchVectors('ctx', 'space', fresh!.vector, { limit: 20 });
    expect(ids(after)).not.toContain('m05000/text');
    expect(after).toHaveLength(20);
    expect(await store.integrityCheck!()).toEqual({ ok: true, problems: [] });
    await store.close();
  });

  it("keeps the lists it read and follows another connection's writes and deletes", async () => {
    const { file, store: writer, rows } = await trainedArchive(500, 8);
    const reader = open(file);
    const target = rows[42]!;
    expect((await reader.searchVectors('ctx', 'space', target.vector, { limit: 1 }))[0]!.memoryId).toBe(
      target.memoryId,
    );
    // A near copy written elsewhere is found through the kept lists' catch-up; the deleted original is gone.
    const twin = { ...target, memoryId: 'm09999', vector: Float32Array.from(target.vector, (v) => v * 2) };
    await put(writer, [twin]);
    await writer.deleteMemory('ctx', target.memoryId);
    const hits = await reader.searchVectors('ctx', 'space', target.vector, { limit: 5 });
    expect(hits[0]!.memoryId).toBe('m09999');
    expect(ids(hits)).not.toContain(`${target.memoryId}/${target.kind}`);
    expect(hits).toHaveLength(5);
    await reader.close();
    await writer.close();
  });

  it('reads further lists until a kind filter has its hits, and searches given memories exactly', async () => {
    const { store, rows } = await trainedArchive(700, 5);
    const exact = new VectorIndex(rows, { approximateAbove: Number.POSITIVE_INFINITY });
    const [query] = vectors(1, 6, 80_000);
    // Every fifth row is a caption: 140 of them, more than a probe of the nearest lists holds.
    const captions = await store.searchVectors('ctx', 'space', query!.vector, {
      limit: 100,
      kinds: ['caption'],
    });
    expect(captions).toHaveLength(100);
    expect(captions.every((hit) => hit.kind === 'caption')).toBe(true);
    const everyCaption = await store.searchVectors('ctx', 'space', query!.vector, {
      limit: 1000,
      kinds: ['caption'],
    });
    expect(ids(everyCaption)).toEqual(ids(exact.search(query!.vector, { limit: 1000, kinds: ['caption'] })));
    const some = rows.filter((_, i) => i % 7 === 0).map((row) => row.memoryId);
    expect(
      ids(await store.searchVectors('ctx', 'space', query!.vector, { limit: 5, memoryIds: some })),
    ).toEqual(ids(exact.search(query!.vector, { limit: 5, memoryIds: some })));
    await store.close();
  });

  it('migrates a file from schema 13: counts backfilled, the space trained by its next write', async () => {
    const file = archive();
    const rows = vectors(360, 9);
    // Written with a high threshold: no IVF, as a file from before migration 14 has none.
    const untrained = open(file, { ivf: { threshold: 10_000 } });
    await put(untrained, rows.slice(0, 350));
    await untrained.close();
    const raw = new Database(file);
    raw.exec(`DROP TRIGGER vectors_space_insert; DROP TRIGGER vectors_space_delete; DROP TABLE vector_spaces;
      DROP TABLE vector_ivf; DROP INDEX vectors_by_list; ALTER TABLE vectors DROP COLUMN list;
      UPDATE schema_version SET version = 13;`);
    raw.close();
    const store = open(file);
    expect(await store.integrityCheck!()).toEqual({ ok: true, problems: [] });
    const counted = new Database(file, { readonly: true });
    expect(counted.prepare('SELECT rows FROM vector_spaces').get()).toEqual({ rows: 350 });
    counted.close();
    expect(ivfRow(file)).toBeUndefined();
    await put(store, rows.slice(350));
    expect(ivfRow(file)).toMatchObject({ trained_rows: 360 });
    expect(await store.integrityCheck!()).toEqual({ ok: true, problems: [] });
    await store.close();
  });

  it('is trained by maintenance for spaces that wait for a write (graphmemix migrate)', async () => {
    const file = archive();
    const untrained = open(file, { ivf: { threshold: 10_000 } });
    await put(untrained, vectors(400, 14));
    await untrained.close();
    const raw = new Database(file);
    expect(trainUntrainedSpaces(raw, 500)).toEqual([]);
    expect(trainUntrainedSpaces(raw, THRESHOLD)).toEqual([{ contextId: 'ctx', space: 'space' }]);
    expect(trainUntrainedSpaces(raw, THRESHOLD)).toEqual([]);
    raw.close();
    expect(ivfRow(file)).toMatchObject({ trained_rows: 400, nlist: 20 });
    const counter = countWholeSpaceReads();
    const store = open(file, { readonly: true });
    expect(await store.searchVectors('ctx', 'space', vectors(1, 15)[0]!.vector, { limit: 5 })).toHaveLength(
      5,
    );
    expect(counter.reads).toBe(0);
    expect(await store.integrityCheck!()).toEqual({ ok: true, problems: [] });
    await store.close();
  });

  it('goes with its context, and a rolled-back unit leaves no trained state behind', async () => {
    const file = archive();
    const store = open(file);
    const rows = vectors(400, 7);
    await put(store, rows.slice(0, 250));
    await store.writeMemories(
      'ctx',
      rows.slice(250).map((row, i) => write('ctx', row.memoryId, `text ${row.memoryId}`, 250 + i)),
    );
    // An empty relation journal, so that the unit is taken (SQLite takes it for small updates only).
    await store.clearRelationWork('ctx', { through: Number.MAX_SAFE_INTEGER });
    // The crossing write inside a unit that fails: no IVF, no counted rows.
    await expect(
      store.unitOfWork!('ctx', async () => {
        await store.putVectors('ctx', 'space', rows.slice(250, 400));
        expect(ivfRow(file)).toBeUndefined(); // another connection does not see the uncommitted training
        throw new Error('abandoned');
      }),
    ).rejects.toThrow('abandoned');
    expect(ivfRow(file)).toBeUndefined();
    expect(await store.integrityCheck!()).toEqual({ ok: true, problems: [] });
    await store.putVectors('ctx', 'space', rows.slice(250, 400));
    expect(ivfRow(file)).toBeDefined();
    expect(await store.searchVectors('ctx', 'space', rows[3]!.vector, { limit: 1 })).toMatchObject([
      { memoryId: rows[3]!.memoryId },
    ]);
    await store.deleteContext('ctx');
    expect(ivfRow(file)).toBeUndefined();
    const db = new Database(file, { readonly: true });
    expect(db.prepare('SELECT COUNT(*) AS n FROM vector_spaces').get()).toEqual({ n: 0 });
    db.close();
    await store.close();
  });
});
