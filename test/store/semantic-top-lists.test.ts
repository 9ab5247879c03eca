import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/digest/semantic/seeded-random.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { migrateArchive } from '../../src/store/migrate-archive.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { SemanticDoc, SemanticPosting } from '../../src/store/semantic-index-spec.ts';
import {
  comparePostings,
  compareUtf8,
  enterRow,
  SEMANTIC_TOP_SIZE,
} from '../../src/store/sqlite-semantic-top.ts';
import { write } from './store-conformance.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-semtop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** More documents hold 'common' than a kept row holds, with many weight ties (22 documents per weight). */
const N = SEMANTIC_TOP_SIZE + 76;
const LEVELS = 50;
const levelWeight = (i: number) => 0.1 + (i % LEVELS) / 100;
const baseIds = Array.from({ length: N }, (_, i) => `m${String(i).padStart(4, '0')}`);
/** Ties broken by id in UTF-8 byte order: U+FF21 sorts before an astral character there, after it in UTF-16. */
const EXTRA = [
  'a-tie',
  'z-tie',
  'heavy',
  'light',
  '\uff21-wide',
  '\u{1f600}-astral',
  'rare-new',
  'new\nline',
];

const doc = (memoryId: string, vector: Record<string, number>): SemanticDoc => {
  const terms = Object.keys(vector).sort();
  return { memoryId, terms, weights: terms.map((t) => vector[t]!), neighbours: [] };
};
const baseDoc = (i: number, shift = 0): SemanticDoc =>
  doc(baseIds[i]!, {
    common: levelWeight(i + shift),
    [`other${i % 3}`]: 0.5,
    ...(i < 5 ? { rare: 0.3 + i / 100 } : {}),
    ...(i < 100 ? { mid: 0.2 + (i % 7) / 100 } : {}),
  });

/** Every kept row equals the statement it stands for; returns the terms that have one. */
function checkRows(file: string): string[] {
  const raw = new Database(file, { readonly: true });
  try {
    const rows = raw.prepare('SELECT context_id, term, size, held, ids, weights FROM semantic_top').all() as {
      context_id: string;
      term: string;
      size: number;
      held: number;
      ids: string;
      weights: Buffer;
    }[];
    const read = raw.prepare(`SELECT memory_id AS memoryId, weight FROM semantic_postings
      WHERE context_id = ? AND term = ? ORDER BY weight DESC, memory_id LIMIT ?`);
    for (const row of rows) {
      const ids = row.ids.split('\n');
      const kept: SemanticPosting[] = ids.map((memoryId, at) => ({
        memoryId,
        weight: row.weights.readDoubleLE(8 * at),
      }));
      expect(kept.length).toBe(row.held);
      expect(kept).toEqual(read.all(row.context_id, row.term, row.size));
    }
    return rows.map((row) => row.term).sort();
  } finally {
    raw.close();
  }
}

async function sqlWindow(file: string, term: string, minWeight: number, below: number) {
  const raw = new Database(file, { readonly: true });
  try {
    return raw
      .prepare(`SELECT memory_id AS memoryId, weight FROM semantic_postings WHERE context_id = 'ctx'
        AND term = ? AND weight >= ? AND weight < ? ORDER BY weight DESC, memory_id`)
      .all(term, minWeight, below) as SemanticPosting[];
  } finally {
    raw.close();
  }
}

async function sqlTop(file: string, term: string): Promise<SemanticPosting[]> {
  const raw = new Database(file, { readonly: true });
  try {
    return raw
      .prepare(`SELECT memory_id AS memoryId, weight FROM semantic_postings WHERE context_id = 'ctx'
        AND term = ? ORDER BY weight DESC, memory_id LIMIT ?`)
      .all(term, SEMANTIC_TOP_SIZE) as SemanticPosting[];
  } finally {
    raw.close();
  }
}

async function setUp(file: string): Promise<ArchiveStore> {
  const store = await openStore(file);
  await store.writeMemories(
    'ctx',
    [...baseIds, ...EXTRA].map((id, i) => write('ctx', id, `text ${i}`, i)),
  );
  await store.semantic.replaceAll(
    'ctx',
    {
      space: 'tfidf',
      documents: N,
      k: 2,
      createdAt: '2026-01-01T00:00:00.000Z',
      df: new Map([
        ['common', N],
        ['rare', 5],
      ]),
    },
    baseIds.map((_, i) => baseDoc(i)),
  );
  return store;
}

describe('SQLite kept top lists (semantic_top, migration 12)', () => {
  it('compaction builds the rows of truncated terms; adds that enter, tie or stay below keep them exact', async () => {
    const file = join(dir, 'enter.db');
    const store = await setUp(file);
    expect(checkRows(file)).toEqual(['common']);
    const lastWeight = (await sqlTop(file, 'common')).at(-1)!.weight;
    // One above everything, one below the row, ties with the last kept weight on both sides of its id, and
    // two ties whose order differs between UTF-16 and UTF-8.
    await store.semantic.writeDocs('ctx', {
      put: [
        doc('heavy', { common: 0.99 }),
        doc('light', { common: 0.01 }),
        doc('a-tie', { common: lastWeight }),
        doc('z-tie', { common: lastWeight }),
        doc('\uff21-wide', { common: 0.95 }),
        doc('\u{1f600}-astral', { common: 0.95 }),
      ],
    });
    expect(checkRows(file)).toEqual(['common']);
    const top = await sqlTop(file, 'common');
    expect(top.slice(0, 3).map((p) => p.memoryId)).toEqual(['heavy', '\uff21-wide', '\u{1f600}-astral']);
    expect(top.some((p) => p.memoryId === 'a-tie')).toBe(true);
    expect(top.some((p) => p.memoryId === 'z-tie' || p.memoryId === 'light')).toBe(false);
    // What the forward search reads is the same rows.
    expect(await store.semantic.postings('ctx', 'common', { top: SEMANTIC_TOP_SIZE })).toEqual(top);
    expect(await store.semantic.postings('ctx', 'common', { top: 40 })).toEqual(top.slice(0, 40));
    // A second compaction rebuilds them from its own postings.
    await store.semantic.replaceAll(
      'ctx',
      {
        space: 'tfidf',
        documents: N,
        k: 2,
        createdAt: '2026-01-02T00:00:00.000Z',
        // From WHOLE_ROW_MIN documents a term's whole list is kept too; rare (5) has no row.
        df: new Map([
          ['common', N],
          ['mid', 100],
          ['rare', 5],
        ]),
      },
      baseIds.map((_, i) => baseDoc(i, 7)),
    );
    expect(checkRows(file)).toEqual(['common', 'mid']);
    expect((await sqlTop(file, 'common'))[0]!.memoryId).toBe(baseIds[LEVELS - 1 - 7]);
    await store.close();
  });

  it('a deleted member (removed document, changed vector, forgotten memory) drops the row; a read stores it again', async () => {
    const file = join(dir, 'delete.db');
    const store = await setUp(file);
    const top = await sqlTop(file, 'common');
    const member = top[3]!.memoryId;
    const outsider = baseIds.find((id) => !top.some((p) => p.memoryId === id))!;
    // A posting below the row leaves it as it is.
    await store.semantic.writeDocs('ctx', { remove: [outsider] });
    expect(checkRows(file)).toEqual(['common']);
    await store.semantic.writeDocs('ctx', { remove: [member] });
    expect(checkRows(file)).toEqual([]);
    expect(await store.semantic.postings('ctx', 'common', { top: SEMANTIC_TOP_SIZE })).toEqual(
      await sqlTop(file, 'common'),
    );
    expect(checkRows(file)).toEqual(['common']);
    // A changed vector: its old posting leaves (dropping the row), the new one enters nothing.
    const changed = top[0]!.memoryId;
    await store.semantic.writeDocs('ctx', { put: [doc(changed, { common: 0.02 })] });
    expect(checkRows(file)).toEqual([]);
    await store.semantic.postings('ctx', 'common', { top: SEMANTIC_TOP_SIZE });
    expect(checkRows(file)).toEqual(['common']);
    // A forgotten memory's postings go by cascade, past the semantic index: the trigger still sees them.
    expect(await store.deleteMemory('ctx', top[5]!.memoryId)).toBe(true);
    expect(checkRows(file)).toEqual([]);
    await store.semantic.postings('ctx', 'common', { top: SEMANTIC_TOP_SIZE });
    expect(checkRows(file)).toEqual(['common']);
    await store.close();
  });

  it('a row shorter than its size is the whole list: every new posting enters it, every delete drops it', async () => {
    const file = join(dir, 'short.db');
    const store = await setUp(file);
    const rare = await store.semantic.postings('ctx', 'rare', { top: SEMANTIC_TOP_SIZE });
    expect(rare).toHaveLength(5);
    expect(checkRows(file)).toEqual(['common', 'rare']);
    await store.semantic.writeDocs('ctx', { put: [doc('rare-new', { rare: 0.001 })] });
    expect(checkRows(file)).toEqual(['common', 'rare']);
    expect((await sqlTop(file, 'rare')).at(-1)!.memoryId).toBe('rare-new');
    await store.semantic.writeDocs('ctx', { remove: ['rare-new'] });
    expect(checkRows(file)).toEqual(['common']);
    // An id holding the row separator keeps its term out of the table (reads take the statement).
    await store.semantic.writeDocs('ctx', { put: [doc('new\nline', { rare: 0.9 })] });
    expect(await store.semantic.postings('ctx', 'rare', { top: SEMANTIC_TOP_SIZE })).toEqual(
      await sqlTop(file, 'rare'),
    );
    expect((await sqlTop(file, 'rare'))[0]!.memoryId).toBe('new\nline');
    expect(checkRows(file)).toEqual(['common']);
    await store.close();
  });

  it('a whole-list read keeps a row that answers weight windows; a truncated row answers windows above its end', async () => {
    const file = join(dir, 'windows.db');
    const store = await setUp(file);
    const inf = Number.POSITIVE_INFINITY;
    // Fewer than WHOLE_ROW_MIN postings: read by the statement, no row.
    expect(await store.semantic.postings('ctx', 'rare', { minWeight: 0 })).toEqual(
      await sqlWindow(file, 'rare', 0, inf),
    );
    expect(checkRows(file)).toEqual(['common']);
    // A window that is not a whole-list read keeps nothing.
    await store.semantic.postings('ctx', 'mid', { minWeight: 0.22 });
    expect(checkRows(file)).toEqual(['common']);
    expect(await store.semantic.postings('ctx', 'mid', { minWeight: 0 })).toEqual(
      await sqlWindow(file, 'mid', 0, inf),
    );
    expect(checkRows(file)).toEqual(['common', 'mid']);
    // Windows now come from the row (ties on both bounds), and new postings enter it.
    await store.semantic.writeDocs('ctx', {
      put: [doc('heavy', { mid: 0.23 }), doc('light', { mid: 0.001 })],
    });
    expect(checkRows(file)).toEqual(['common', 'mid']);
    for (const [minWeight, below] of [
      [0.22, inf],
      [0.21, 0.24],
      [0.23, 0.23],
      [0, 0.2],
      [0.5, inf],
    ] as const) {
      expect(await store.semantic.postings('ctx', 'mid', { minWeight, below })).toEqual(
        await sqlWindow(file, 'mid', minWeight, below),
      );
    }
    // The truncated row answers windows above its last weight only; the others take the statement.
    const last = (await sqlTop(file, 'common')).at(-1)!.weight;
    for (const minWeight of [last + 0.001, last, last - 0.01]) {
      expect(await store.semantic.postings('ctx', 'common', { minWeight })).toEqual(
        await sqlWindow(file, 'common', minWeight, inf),
      );
    }
    await store.semantic.writeDocs('ctx', { remove: [baseIds[50]!] });
    expect(checkRows(file)).toEqual(['common']);
    await store.close();
  });

  it('a file from before migration 12 opens without rows, fills them on read or by migrate', async () => {
    const file = join(dir, 'older.db');
    (await setUp(file)).close();
    const raw = new Database(file);
    raw.exec(
      'DROP TRIGGER semantic_top_on_delete; DROP TABLE semantic_top; UPDATE schema_version SET version = 11;',
    );
    raw.close();
    const store = await openStore(file);
    expect(checkRows(file)).toEqual([]);
    expect(await store.semantic.postings('ctx', 'common', { top: SEMANTIC_TOP_SIZE })).toEqual(
      await sqlTop(file, 'common'),
    );
    expect(checkRows(file)).toEqual(['common']);
    await store.semantic.writeDocs('ctx', { put: [doc('heavy', { common: 0.99 })] });
    expect(checkRows(file)).toEqual(['common']);
    expect((await store.integrityCheck()).ok).toBe(true);
    await store.close();
    // migrate stores what compaction would have built (rows dropped since included).
    const again = new Database(file);
    again.exec('DELETE FROM semantic_top');
    again.close();
    await migrateArchive(file);
    expect(checkRows(file)).toEqual(['common']);
  });

  it('compareUtf8 is the byte order of UTF-8 (SQLite BINARY)', () => {
    const words = ['b', 'a', '\uff21', '\u{1f600}', 'ab', '', '\ud7ff', '\ue000'];
    const bytes = [...words].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect([...words].sort(compareUtf8)).toEqual(bytes);
  });
});

/**
 * enterRow builds the entered row from slices of the stored text and bytes: it must equal inserting each
 * posting into the decoded row where it sorts and cutting to the row's size (what `store` wrote before).
 */
describe('enterRow', () => {
  it('equals decode, insert in order and cut, with ties, UTF-8 order, empty ids and full rows', () => {
    const pool = ['a', 'b', '', 'm01', 'm1', '\uff21', '\u{1f600}', 'zz', 'é', 'a\u0000'];
    for (let seed = 1; seed <= 300; seed++) {
      const random = mulberry32(seed);
      const pick = () => `${pool[Math.floor(random() * pool.length)]}${Math.floor(random() * 30)}`;
      const weightOf = () =>
        [0.5, 0.25, 0.125, 0.1, 0.3][Math.floor(random() * 5)]! + (random() < 0.3 ? random() : 0);
      const seen = new Set<string>();
      const unique = () => {
        let id = pick();
        while (seen.has(id)) id = `${id}x`;
        seen.add(id);
        return id;
      };
      const held = 1 + Math.floor(random() * 40);
      const size = held + Math.floor(random() * 4) * (random() < 0.5 ? 0 : 3);
      const row: SemanticPosting[] = Array.from({ length: held }, () => ({
        memoryId: unique(),
        weight: weightOf(),
      })).sort(comparePostings);
      const entering = Array.from({ length: 1 + Math.floor(random() * 6) }, () => ({
        term: 't',
        memoryId: unique(),
        weight: random() < 0.5 ? row[Math.floor(random() * held)]!.weight : weightOf(),
      }));
      const bytes = Buffer.alloc(8 * held);
      row.forEach((posting, at) => {
        bytes.writeDoubleLE(posting.weight, 8 * at);
      });
      const got = enterRow(row.map((p) => p.memoryId).join('\n'), bytes, held, size, entering)!;
      const expected = [...row];
      for (const posting of entering) {
        const at = expected.findIndex((p) => comparePostings(p, posting) >= 0);
        expected.splice(at === -1 ? expected.length : at, 0, {
          memoryId: posting.memoryId,
          weight: posting.weight,
        });
      }
      const kept = expected.slice(0, size);
      expect(got.ids.split('\n'), `seed ${seed}`).toEqual(kept.map((p) => p.memoryId));
      expect(Array.from({ length: got.held }, (_, at) => got.weights.readDoubleLE(8 * at))).toEqual(
        kept.map((p) => p.weight),
      );
      expect(got.held).toBe(kept.length);
      expect(got.weights.length).toBe(8 * kept.length);
      expect([got.lastId, got.lastWeight]).toEqual([kept.at(-1)!.memoryId, kept.at(-1)!.weight]);
    }
  });

  it('refuses an entering id with a newline (such a term keeps no row)', () => {
    const bytes = Buffer.alloc(8);
    bytes.writeDoubleLE(0.5, 0);
    expect(enterRow('a', bytes, 1, 4, [{ term: 't', memoryId: 'x\ny', weight: 0.1 }])).toBeUndefined();
  });
});
