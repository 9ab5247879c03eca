import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { ArchiveStore, MemoryWrite } from '../../src/store/archive-store-spec.ts';
import { openStore } from '../../src/store/open-store.ts';
import { postgresLexicalCounters } from '../../src/store/postgres/postgres-lexical-search.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import type { MemoryView } from '../../src/types/view.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';

/*
 * The question path's PostgreSQL reads send postings, forward-list tfs and edges as one JSON array per
 * statement (not a row per posting or edge). These must stay exact: hostile ids (quotes, backslashes,
 * control characters, astral characters) arrive unchanged, and doubles come back bit-identical even when the
 * database is configured to round float output (extra_float_digits = 0), where a keyset built from a
 * rounded impact would re-read or skip postings.
 */
afterAll(dropTestDatabases);
if (PG_SKIP) console.warn(`[postgres JSON reads skipped] ${PG_SKIP}`);

const HOSTILE = [
  'm"quote',
  'm\\back',
  'm\nline',
  'm\u0001ctl',
  'm😀',
  'm,comma',
  'm]}bracket',
  "m'tick",
  'plain',
];

function write(contextId: string, id: string, index: number): MemoryWrite {
  const record: MemoryRecord = { id, contextId, kind: 'message', sequence: index, text: id, assets: [] };
  // One common word in every view (its list is read in rounds), rarer words every 3rd / 7th memory.
  const words = ['harbor', index % 3 === 0 ? 'lantern' : 'pebble', index % 7 === 0 ? 'violet' : 'cinder'];
  for (let i = 0; i < (index % 5) + 1; i++) words.push(`w${(index * 31 + i * 17) % 97}`);
  const views: MemoryView[] = [
    { memoryId: id, kind: 'text', key: 'main', text: words.join(' ') },
    { memoryId: id, kind: 'caption', key: `c"${index % 2}\\`, text: `harbor ${words[1]} ${words[3] ?? ''}` },
  ];
  return { record, views, contentHash: `${id}-1` };
}

async function fill(store: ArchiveStore, contextId: string, ids: readonly string[]): Promise<void> {
  await store.writeMemories(
    contextId,
    ids.map((id, i) => write(contextId, id, i)),
  );
  // Strengths and similarities whose shortest decimal form needs 16-17 digits.
  await store.changeEdges(
    contextId,
    ids.slice(1).map((id, i) => ({
      a: ids[i]!,
      b: id,
      add: i % 2 === 0 ? ['semantic_knn'] : ['consecutive_turn', 'same_round'],
      strength: 0.1 + 0.2 + i / 3,
      ...(i % 2 === 0 ? { similarity: Math.PI / (i + 7) } : {}),
    })),
  );
}

describe.skipIf(PG_SKIP !== undefined)('postgres JSON-aggregated reads', () => {
  it('hostile ids and doubles arrive exactly, also with extra_float_digits = 0 on the server', async () => {
    const url = await createTestDatabase();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${new URL(url).pathname.slice(1)} SET extra_float_digits = 0`);
    } finally {
      await admin.end();
    }
    const ids = [...HOSTILE, ...Array.from({ length: 400 }, (_, i) => `n${i}`)];
    const postgres = await openPostgresStore({ url, maxConnections: 2 });
    const memory = await openStore('memory:');
    try {
      for (const store of [postgres, memory]) await fill(store, 'ctx', ids);
      const some = [...HOSTILE, 'n0', 'n1', 'n2', 'n200'];
      const pgTouching = await postgres.neighbors('ctx', some);
      expect(pgTouching.length).toBeGreaterThan(10);
      expect(pgTouching).toEqual(await memory.neighbors('ctx', some));
      const pgAmong = await postgres.edgesAmong!('ctx', some);
      expect(pgAmong.map((edge) => [edge.a, edge.b])).toContainEqual(['m"quote', 'm\\back']);
      expect(pgAmong).toEqual(await memory.edgesAmong!('ctx', some));

      const before = { ...postgresLexicalCounters };
      for (const query of ['harbor lantern violet', 'harbor w5 w40 pebble', 'cinder harbor', 'violet w3']) {
        for (const limit of [3, 10, 50]) {
          const expected = await memory.searchLexical('ctx', query, { limit });
          expect(expected.length).toBeGreaterThan(0);
          // Bit-identical scores, not within a tolerance.
          expect(await postgres.searchLexical('ctx', query, { limit }), `${query} / ${limit}`).toEqual(
            expected,
          );
        }
      }
      // The lists were read in rounds and candidates completed from forward lists (every path exercised).
      expect(postgresLexicalCounters.rounds - before.rounds).toBeGreaterThan(
        postgresLexicalCounters.searches - before.searches,
      );
      expect(postgresLexicalCounters.forwardLists).toBeGreaterThan(before.forwardLists);
      const hit = await postgres.searchLexical('ctx', 'harbor', { limit: 1000, kinds: ['caption'] });
      expect(new Set(hit.map((h) => h.memoryId))).toEqual(new Set(ids));
      expect(new Set(hit.map((h) => h.key))).toEqual(new Set(['c"0\\', 'c"1\\']));
    } finally {
      await postgres.close();
      await memory.close();
    }
  }, 60_000);
});
