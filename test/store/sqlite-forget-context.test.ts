import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';

/**
 * Forgetting a context on SQLite deletes its rows table by table through their (context, ...) keys and its
 * lexical documents through its memories (sqlite-memory-writes.ts deleteContext, FORGET_ORDER): every table
 * that names the context is empty of it afterwards, the other context keeps every row, the counters and the
 * integrity check agree, and the same user id starts over cleanly.
 */
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-forget-ctx-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function rowsPerTable(file: string, contextId: string): Record<string, number> {
  const db = new Database(file, { readonly: true });
  const out: Record<string, number> = {};
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
  for (const table of tables) {
    const columns = (db.prepare(`PRAGMA table_info("${table}")`).all() as { name: string }[]).map(
      (c) => c.name,
    );
    const column = columns.includes('context_id') ? 'context_id' : table === 'contexts' ? 'id' : undefined;
    if (column)
      out[table] = db
        .prepare(`SELECT count(*) FROM "${table}" WHERE ${column} = ?`)
        .pluck()
        .get(contextId) as number;
  }
  const docs = db
    .prepare('SELECT count(*) FROM lex_docs d JOIN lex_fields f ON f.id = d.field WHERE f.context_id = ?')
    .pluck()
    .get(contextId) as number;
  const fts = db
    .prepare(
      'SELECT count(*) FROM lex_docs d JOIN lex_fields f ON f.id = d.field JOIN lex_fts t ON t.rowid = d.id WHERE f.context_id = ?',
    )
    .pluck()
    .get(contextId) as number;
  const stats = db
    .prepare(
      'SELECT count(*) FROM lex_term_stats s JOIN lex_fields f ON f.id = s.field WHERE f.context_id = ?',
    )
    .pluck()
    .get(contextId) as number;
  db.close();
  return { ...out, lex_docs_of_context: docs, lex_fts_of_context: fts, lex_term_stats_of_context: stats };
}

describe('deleteContext on SQLite', () => {
  it('removes every row of the context, keeps the other, and the archive stays consistent', async () => {
    const file = join(dir, 'two.db');
    const gm = await openGraphmemix({ db: file, readWorkers: false });
    const records = (user: string) =>
      Array.from({ length: 120 }, (_, i) => ({
        id: `${user}-${i}`,
        text: `${user} talked about the ${['harbour', 'garden', 'lighthouse', 'market'][i % 4]} trip number ${i % 9}`,
        timestamp: `2024-03-${String(1 + (i % 28)).padStart(2, '0')}T10:00:00Z`,
        ...(i % 10 === 0 ? { agentId: 'planner' } : {}),
      }));
    await gm.addMemories('ann', records('ann'));
    await gm.addMemories('bob', records('bob'));
    await gm.updateMemory('ann', 'ann-3', { text: 'ann changed her mind about the market' });
    await gm.close();
    const bobBefore = rowsPerTable(file, 'bob');
    const annBefore = rowsPerTable(file, 'ann');
    // The fixture reaches the tables forget must empty.
    for (const table of [
      'memories',
      'views',
      'edges',
      'memory_keys',
      'memory_tags',
      'memory_versions',
      'semantic_postings',
      'semantic_neighbours',
      'lex_docs_of_context',
      'lex_fts_of_context',
      'lex_term_stats_of_context',
    ])
      expect(annBefore[table], table).toBeGreaterThan(0);

    const again = await openGraphmemix({ db: file, readWorkers: false });
    expect(await again.deleteUser('ann')).toMatchObject({ deleted: true, memories: 120 });
    await again.close();
    const annAfter = rowsPerTable(file, 'ann');
    for (const [table, n] of Object.entries(annAfter)) {
      // Emptied field rows stay (their ids and reference lengths serve a later write to the same id).
      if (table !== 'lex_fields') expect(n, table).toBe(0);
    }
    expect(rowsPerTable(file, 'bob')).toEqual(bobBefore);
    // The FTS5 rows of the forgotten documents are gone too: only bob's are left in the whole index.
    const raw = new Database(file, { readonly: true });
    expect(raw.prepare('SELECT count(*) FROM lex_fts_docsize').pluck().get()).toBe(
      bobBefore.lex_docs_of_context,
    );
    raw.close();

    const reopened = await openGraphmemix({ db: file, readWorkers: false });
    expect(await reopened.store.integrityCheck()).toEqual({ ok: true, problems: [] });
    expect((await reopened.search('bob', 'lighthouse trip')).length).toBeGreaterThan(0);
    expect(await reopened.search('ann', 'lighthouse trip')).toEqual([]);
    // The same user id starts over: found by search, counted from zero.
    await reopened.addMemories('ann', [
      { id: 'n1', text: 'ann is back with a lighthouse story', timestamp: '2024-05-01' },
    ]);
    expect((await reopened.search('ann', 'lighthouse')).map((h) => h.memoryId)).toEqual(['n1']);
    expect(await reopened.userStats('ann')).toMatchObject({ memories: 1 });
    expect(await reopened.store.integrityCheck()).toEqual({ ok: true, problems: [] });
    await reopened.close();
  }, 60_000);
});
