import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/digest/semantic/seeded-random.ts';
import { loadOptionalPackage } from '../../src/importers/optional-package.ts';
import type { ArchiveStore, VectorRow } from '../../src/store/archive-store-spec.ts';
import { createSqliteStore } from '../../src/store/sqlite-store.ts';
import { write } from './store-conformance.ts';

/**
 * The persistent approximate vector index of the SQLite store (src/store/usearch-vector-index.ts) on a fixture
 * above a lowered threshold: it agrees with the exact scan, sees writes made after its file, survives a
 * damaged or missing file, is rebuilt by the next write, and leaves with forgotten memories and contexts.
 */
const usable = await loadOptionalPackage('usearch', 'test').then(
  () => true,
  () => false,
);
if (!usable)
  process.stdout.write('usearch does not load here (scripts/install-usearch.sh): ANN tests skip\n');

const DIMS = 24;
const THRESHOLD = 300;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function archive(): string {
  const dir = mkdtempSync(join(tmpdir(), 'graphmemix-ann-'));
  dirs.push(dir);
  return join(dir, 'archive.db');
}

/** Gaussian-ish vectors around a few hundred centres: neighbours exist but are not trivially separated. */
function vectors(count: number, seed: number, from = 0): VectorRow[] {
  const next = mulberry32(seed);
  const centres = Array.from({ length: 40 }, () => Array.from({ length: DIMS }, () => next() * 2 - 1));
  return Array.from({ length: count }, (_, i) => {
    const centre = centres[Math.floor(next() * centres.length)]!;
    const vector = Float32Array.from(centre, (v) => v + (next() + next() + next() - 1.5) * 0.8);
    return { memoryId: `m${from + i}`, kind: 'text' as const, key: 'main', vector };
  });
}

async function filled(file: string, count: number, options = {}): Promise<ArchiveStore> {
  const store = createSqliteStore(file, { ann: { threshold: THRESHOLD, ...options } });
  await store.writeMemories(
    'ctx',
    Array.from({ length: count }, (_, i) => write('ctx', `m${i}`, `text ${i}`, i)),
  );
  await store.putVectors('ctx', 'space', vectors(count, 7));
  return store;
}

const missing = () =>
  Promise.reject(Object.assign(new Error("Cannot find package 'usearch'"), { code: 'ERR_MODULE_NOT_FOUND' }));

function annRow(file: string): { file: string; version: number; size: number } | undefined {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT file, version, size FROM vector_ann').get() as never;
  } finally {
    db.close();
  }
}

async function top(store: ArchiveStore, query: Float32Array, limit = 10) {
  return (await store.searchVectors('ctx', 'space', query, { limit })).map(
    (h) => `${h.memoryId}:${h.rawScore}`,
  );
}

describe.skipIf(!usable)('usearch vector index (SQLite)', () => {
  it('agrees with the exact scan above the threshold (recall@10 >= 0.98, exact scores)', async () => {
    const file = archive();
    const store = await filled(file, 900);
    const exact = await filled(archive(), 900, { load: missing });
    expect(store.vectorSupport).toBe('usearch');
    expect(exact.vectorSupport).toBe('stored-ivf');
    const row = annRow(file)!;
    expect(row.size).toBe(900);
    expect(existsSync(join(`${file}.vectors`, row.file))).toBe(true);
    const queries = vectors(60, 99);
    let shared = 0;
    for (const { vector } of queries) {
      const found = await top(store, vector);
      const truth = await top(exact, vector);
      expect(found).toHaveLength(10);
      // Same memory, same exact cosine: scores never come from the approximate index.
      shared += found.filter((hit) => truth.includes(hit)).length;
    }
    expect(shared / (10 * queries.length)).toBeGreaterThanOrEqual(0.98);
    await store.close();
    await exact.close();
  });

  it('finds vectors written after its file and forgets rewritten ones, without rebuilding per search', async () => {
    const file = archive();
    const store = await filled(file, 600);
    const before = annRow(file)!;
    // 40 new memories: below the refresh rule (256), so they live in the delta read by searches.
    await store.writeMemories(
      'ctx',
      Array.from({ length: 40 }, (_, i) => write('ctx', `m${600 + i}`, `new ${i}`, 600 + i)),
    );
    const added = vectors(40, 123, 600);
    await store.putVectors('ctx', 'space', added);
    expect(annRow(file)!.file).toBe(before.file);
    const hit = await store.searchVectors('ctx', 'space', added[5]!.vector, { limit: 3 });
    expect(hit[0]).toMatchObject({ memoryId: 'm605' });
    expect(hit[0]!.rawScore).toBeCloseTo(1, 5);
    // m3 rewritten to m605's vector: its old vector no longer answers, the new one does (both exactly scored).
    const old = (await store.getVectors('ctx', 'space', ['m3']))[0]!.vector;
    await store.putVectors('ctx', 'space', [{ ...added[5]!, memoryId: 'm3' }]);
    const again = await store.searchVectors('ctx', 'space', old, { limit: 5 });
    expect(again.map((h) => h.memoryId)).not.toContain('m3');
    expect(
      (await store.searchVectors('ctx', 'space', added[5]!.vector, { limit: 2 }))
        .map((h) => h.memoryId)
        .sort(),
    ).toEqual(['m3', 'm605']);
    // Past the refresh rule the next write saves a new file covering everything.
    await store.writeMemories(
      'ctx',
      Array.from({ length: 300 }, (_, i) => write('ctx', `m${700 + i}`, `more ${i}`, 700 + i)),
    );
    await store.putVectors('ctx', 'space', vectors(300, 5, 700));
    const after = annRow(file)!;
    expect(after.file).not.toBe(before.file);
    expect(after.size).toBe(940);
    expect(readdirSync(`${file}.vectors`)).toEqual([after.file]);
    await store.close();
  });

  it('refreshes its file incrementally when the new rows reach the rule (256 here, under 10% of the file)', async () => {
    const file = archive();
    const store = await filled(file, 3000);
    const before = annRow(file)!;
    await store.writeMemories(
      'ctx',
      Array.from({ length: 280 }, (_, i) => write('ctx', `m${3000 + i}`, `late ${i}`, 3000 + i)),
    );
    const added = vectors(280, 321, 3000);
    await store.putVectors('ctx', 'space', added);
    const after = annRow(file)!;
    expect(after.file).not.toBe(before.file);
    expect(after.size).toBe(3280);
    expect(after.version).toBeGreaterThan(before.version);
    // The added rows are now in the file (no delta left), and they answer.
    const hit = await store.searchVectors('ctx', 'space', added[17]!.vector, { limit: 1 });
    expect(hit[0]!.memoryId).toBe('m3017');
    await store.close();
  });

  it('without the package: no usearch file written, health says stored-ivf', async () => {
    const file = archive();
    const store = await filled(file, 500, { load: missing });
    expect(annRow(file)).toBeUndefined();
    expect(existsSync(`${file}.vectors`)).toBe(false);
    const [query] = vectors(1, 3);
    expect(await store.searchVectors('ctx', 'space', query!.vector, { limit: 5 })).toHaveLength(5);
    expect(store.vectorSupport).toBe('stored-ivf');
    await store.close();
  });

  it('a damaged or missing file is never loaded: exact answers, then the next write rebuilds it', async () => {
    const file = archive();
    const first = await filled(file, 500);
    const exactStore = await filled(archive(), 500, { load: missing });
    const query = vectors(1, 42)[0]!.vector;
    const truth = await top(exactStore, query);
    await first.close();
    const row = annRow(file)!;
    const path = join(`${file}.vectors`, row.file);
    // A crash-damaged file (usearch itself aborts the process on one): half of it overwritten.
    const bytes = readFileSync(path);
    bytes.fill(0xff, 64, bytes.length >> 1);
    writeFileSync(path, bytes);
    const reopened = createSqliteStore(file, { ann: { threshold: THRESHOLD } });
    expect(await top(reopened, query)).toEqual(truth);
    expect(annRow(file)!.file).toBe(row.file);
    await reopened.writeMemories('ctx', [write('ctx', 'm500', 'one more', 500)]);
    await reopened.putVectors('ctx', 'space', vectors(1, 77, 500));
    const rebuilt = annRow(file)!;
    expect(rebuilt.file).not.toBe(row.file);
    expect(rebuilt.size).toBe(501);
    // Missing altogether: the same.
    rmSync(join(`${file}.vectors`, rebuilt.file));
    await reopened.close();
    const third = createSqliteStore(file, { ann: { threshold: THRESHOLD } });
    expect(await top(third, query)).toEqual(truth);
    await third.writeMemories('ctx', [write('ctx', 'm501', 'and one more', 501)]);
    await third.putVectors('ctx', 'space', vectors(1, 78, 501));
    expect(existsSync(join(`${file}.vectors`, annRow(file)!.file))).toBe(true);
    expect(annRow(file)!.size).toBe(502);
    await third.close();
    await exactStore.close();
  });

  it('forgetting a memory rebuilds without its vector; forgetting the context removes the files', async () => {
    const file = archive();
    const store = await filled(file, 400);
    const before = annRow(file)!;
    const gone = (await store.getVectors('ctx', 'space', ['m10']))[0]!.vector;
    await store.deleteMemory('ctx', 'm10');
    const after = annRow(file)!;
    expect(after.file).not.toBe(before.file);
    expect(after.size).toBe(399);
    expect(
      (await store.searchVectors('ctx', 'space', gone, { limit: 5 })).map((h) => h.memoryId),
    ).not.toContain('m10');
    await store.deleteContext('ctx');
    expect(readdirSync(`${file}.vectors`)).toEqual([]);
    await store.close();
  });
});
