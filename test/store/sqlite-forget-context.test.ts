import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { createSqliteStore } from '../../src/store/sqlite-store.ts';
import { TSX_IMPORT } from '../support/repo-paths.ts';
import { stoppedForget } from '../support/stopped-forget.ts';

/**
 * Forgetting a context on SQLite deletes it in steps (sqlite-context-forget.ts): its lexical documents through
 * its memories, then its rows table by table through their (context, ...) keys, each step one transaction of
 * at most `forgetStepRows` rows. Whatever the step size, every table that names the context is empty of it
 * afterwards, the other context keeps every row, the counters and the integrity check agree, and the same user
 * id starts over cleanly.
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

const records = (user: string) =>
  Array.from({ length: 120 }, (_, i) => ({
    id: `${user}-${i}`,
    text: `${user} talked about the ${['harbour', 'garden', 'lighthouse', 'market'][i % 4]} trip number ${i % 9}`,
    timestamp: `2024-03-${String(1 + (i % 28)).padStart(2, '0')}T10:00:00Z`,
    ...(i % 10 === 0 ? { agentId: 'planner' } : {}),
  }));

/** Opens the archive with forget steps of `stepRows` rows (undefined: the default). */
const open = (file: string, stepRows?: number) =>
  openGraphmemix({
    db: file,
    readWorkers: false,
    ...(stepRows === undefined ? {} : { store: createSqliteStore(file, { forgetStepRows: stepRows }) }),
  });

describe.each([
  ['default steps', undefined],
  ['steps of 7 rows', 7],
])('deleteContext on SQLite (%s)', (_, stepRows) => {
  it('removes every row of the context, keeps the other, and the archive stays consistent', async () => {
    const file = join(dir, `two-${stepRows ?? 'default'}.db`);
    const gm = await open(file);
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

    const again = await open(file, stepRows);
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

/** Two users, 120 memories each, in a fresh file. */
async function twoUsers(file: string): Promise<void> {
  const gm = await open(file);
  await gm.addMemories('ann', records('ann'));
  await gm.addMemories('bob', records('bob'));
  await gm.close();
}

/** After an interrupted forget: consistent, ann refused, bob intact; forgetting again finishes it. */
async function resumes(file: string, bobBefore: Record<string, number>): Promise<void> {
  const gm = await open(file, 7);
  expect(await gm.store.integrityCheck()).toEqual({ ok: true, problems: [] });
  expect(await gm.store.isForgetting?.('ann')).toBe(true);
  for (const read of [
    () => gm.search('ann', 'lighthouse'),
    () => gm.retrieve('ann', 'the lighthouse trip?'),
    () => gm.getMemory('ann', 'ann-5'),
    () => gm.listMemories('ann'),
    () => gm.userStats('ann'),
    () => gm.addMemories('ann', [{ id: 'late', text: 'a write that must not land' }]),
    () => gm.updateMemory('ann', 'ann-5', { text: 'an update that must not land' }),
    () => gm.deleteMemory('ann', 'ann-6'),
    () => gm.compact('ann'),
  ])
    await expect(read()).rejects.toMatchObject({ code: 'CONFLICT' });
  expect((await gm.search('bob', 'lighthouse trip')).length).toBeGreaterThan(0);
  expect(await gm.deleteUser('ann')).toMatchObject({ deleted: true });
  expect(await gm.store.isForgetting?.('ann')).toBe(false);
  await gm.close();
  for (const [table, n] of Object.entries(rowsPerTable(file, 'ann')))
    if (table !== 'lex_fields') expect(n, table).toBe(0);
  expect(rowsPerTable(file, 'bob')).toEqual(bobBefore);
}

describe('an interrupted forget (SQLite)', () => {
  it('stopped between two steps: the file is consistent, the context refused, and forget finishes it', async () => {
    const file = join(dir, 'stopped.db');
    await twoUsers(file);
    const bobBefore = rowsPerTable(file, 'bob');
    const store = createSqliteStore(file, { forgetStepRows: 7 });
    // Past the lexical stages (7 documents a step at 7 rows), inside the tables' stages.
    await stoppedForget(store, 'ann', 250);
    await store.close();
    // Some of ann is gone already, not all.
    const partial = rowsPerTable(file, 'ann');
    expect(partial.lex_docs_of_context).toBe(0);
    expect(partial.semantic_postings).toBe(0);
    expect(partial.memories).toBe(120);
    await resumes(file, bobBefore);
  }, 60_000);

  it('killed (SIGKILL) in the middle of a forget: the same', async () => {
    const file = join(dir, 'killed.db');
    await twoUsers(file);
    const bobBefore = rowsPerTable(file, 'bob');
    const child = spawn(
      process.execPath,
      ['--import', TSX_IMPORT, join(import.meta.dirname, 'fixtures', 'forget-child.ts'), file, '7'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let seen = 0;
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_, signal) => resolve(signal)),
    );
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      seen += text.split('step').length - 1;
      if (seen >= 25) child.kill('SIGKILL');
    });
    expect(await exited).toBe('SIGKILL');
    expect(rowsPerTable(file, 'ann').contexts).toBe(1);
    await resumes(file, bobBefore);
  }, 60_000);
});

describe('a forget in steps shares the write queue (SQLite)', () => {
  it("other users' writes run between its steps; the forgotten user's writes are refused meanwhile", async () => {
    const file = join(dir, 'shared.db');
    await twoUsers(file);
    const gm = await open(file, 7);
    const order: string[] = [];
    let started!: () => void;
    const begun = new Promise<void>((resolve) => {
      started = resolve;
    });
    const forget = gm.forgetContext('ann', { onStarted: () => started() }).then((report) => {
      order.push('forget');
      return report;
    });
    await begun;
    const add = gm.addMemories('bob', [{ id: 'bob-new', text: 'bob writes while ann is forgotten' }]);
    await expect(gm.addMemories('ann', [{ id: 'ann-new', text: 'too late' }])).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await add.then(() => order.push('bob add'));
    expect((await forget).deleted).toBe(true);
    expect(order).toEqual(['bob add', 'forget']);
    expect(await gm.getMemory('bob', 'bob-new')).toBeDefined();
    expect(await gm.getMemory('ann', 'ann-new')).toBeUndefined();
    expect(await gm.store.integrityCheck()).toEqual({ ok: true, problems: [] });
    await gm.close();
  }, 60_000);
});

describe('the FTS5 side of a forget (SQLite)', () => {
  it("deletes documents without merge work, then lets FTS5's merges drop them; its settings stay", async () => {
    const file = join(dir, 'fts.db');
    await twoUsers(file);
    const bobBefore = rowsPerTable(file, 'bob');
    const annDocs = rowsPerTable(file, 'ann').lex_docs_of_context!;
    const raw = new Database(file);
    // A setting of its own, which the forget must leave as it found it.
    raw.prepare("INSERT INTO lex_fts (lex_fts, rank) VALUES ('automerge', 8)").run();
    const indexBytes = () =>
      raw.prepare('SELECT sum(length(block)) FROM lex_fts_data').pluck().get() as number;
    const automerge = () => raw.prepare("SELECT v FROM lex_fts_config WHERE k = 'automerge'").pluck().get();
    const before = indexBytes();

    // The mark and one step of 200 documents (enough deletes for FTS5 to owe merge work at their flush):
    // FTS5 only added tombstones, where its merge would have rewritten the segments without them.
    const store = createSqliteStore(file, { forgetStepRows: 200 });
    await stoppedForget(store, 'ann', 2);
    await store.close();
    const partial = rowsPerTable(file, 'ann');
    expect(partial.lex_docs_of_context).toBeGreaterThan(0);
    expect(partial.lex_docs_of_context).toBeLessThan(annDocs);
    expect(indexBytes()).toBeGreaterThanOrEqual(before);
    expect(automerge()).toBe(8);

    const gm = await open(file, 7);
    expect(await gm.deleteUser('ann')).toMatchObject({ deleted: true });
    await gm.close();
    // The merge stage rewrote the segments without ann's postings: about bob's half of the index is left.
    expect(indexBytes()).toBeLessThan(before * 0.75);
    expect(automerge()).toBe(8);
    raw.prepare("INSERT INTO lex_fts (lex_fts, rank) VALUES ('integrity-check', 0)").run();
    raw.close();
    expect(rowsPerTable(file, 'bob')).toEqual(bobBefore);
    const reopened = await openGraphmemix({ db: file, readWorkers: false });
    expect(await reopened.store.integrityCheck()).toEqual({ ok: true, problems: [] });
    expect((await reopened.search('bob', 'lighthouse trip')).length).toBeGreaterThan(0);
    await reopened.close();
  }, 60_000);
});
