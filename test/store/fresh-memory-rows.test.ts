import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { MemoryWrite } from '../../src/store/archive-store-spec.ts';
import { MULTI_ROW_MAX } from '../../src/store/multi-row-insert.ts';
import { createSqliteStore } from '../../src/store/sqlite-store.ts';
import { write } from './store-conformance.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-fresh-rows-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tagged(id: string, text: string, sequence: number, keys: string[]): MemoryWrite {
  const base = write('ctx', id, text, sequence);
  const record = { ...base.record, agentId: `agent-${sequence % 3}`, metadata: { room: sequence % 2 } };
  return { ...base, record, keys, contentHash: `${base.contentHash}-${keys.join()}` };
}

/**
 * New memories, then in the same batch: an update of one of them, an unchanged repeat with other keys, an id
 * new to the batch twice (inserted, then replaced), and more new ones past a MULTI_ROW_MAX chunk.
 */
function batch(): MemoryWrite[] {
  const writes: MemoryWrite[] = [];
  for (let i = 0; i < MULTI_ROW_MAX + 7; i++) {
    writes.push(
      tagged(`m${i}`, `harbour walk ${i} with word${i % 5}`, i + 1, [`round:${i >> 2}`, `day:${i % 4}`]),
    );
  }
  writes.push(tagged('m3', 'harbour walk 3 rewritten at dusk', 4, ['round:0']));
  const repeat = tagged('m5', 'harbour walk 5 with word0', 6, ['round:1', 'day:1']);
  writes.push({ ...repeat, keys: ['round:9'] });
  writes.push(tagged('twice', 'first version of twice', 100, ['round:50']));
  writes.push(tagged('twice', 'second version of twice', 100, ['round:51']));
  for (let i = 0; i < MULTI_ROW_MAX + 3; i++) {
    writes.push(tagged(`n${i}`, `market eggs ${i} and dog${i % 7}`, 200 + i, [`round:${100 + (i >> 3)}`]));
  }
  return writes;
}

const TABLES: Record<string, string> = {
  memories: 'SELECT rowid, context_id, id, sequence, kind, content_hash, record FROM memories ORDER BY rowid',
  views: 'SELECT rowid, memory_id, position, kind, key, text, uri FROM views ORDER BY rowid',
  memory_keys: 'SELECT rowid, memory_id, key, sequence FROM memory_keys ORDER BY rowid',
  memory_tags: 'SELECT name, value, memory_id FROM memory_tags ORDER BY name, value, memory_id',
  relation_journal: 'SELECT seq, memory_id, before FROM relation_journal ORDER BY seq',
  memory_versions: 'SELECT memory_id, version, record FROM memory_versions ORDER BY memory_id, version',
  // Not the ids (doc and term): a batch drops the queued documents of a memory it replaces before they get
  // one and learns its new terms together, one write per call does either in turn; the searches are compared.
  lex_docs: 'SELECT field, memory_id, key, length FROM lex_docs ORDER BY id',
  lex_fields: 'SELECT id, kind, docs, total_length, reference_length FROM lex_fields ORDER BY id',
  kind_counts: 'SELECT kind, n FROM kind_counts ORDER BY kind',
  contexts: 'SELECT id, memories FROM contexts ORDER BY id',
};

function tables(file: string): Record<string, unknown[]> {
  const db = new Database(file, { readonly: true });
  const out = Object.fromEntries(
    Object.entries(TABLES).map(([name, sql]) => [name, db.prepare(sql).raw().all()]),
  );
  db.close();
  return out;
}

describe('writeMemories: new memories in multi-row INSERTs', () => {
  it('stores the rows (rowids and journal order included) that one write per call stores', async () => {
    const files = [join(dir, 'batched.db'), join(dir, 'single.db')];
    const stores = files.map((file) => createSqliteStore(file));
    const [batched, single] = stores as [
      ReturnType<typeof createSqliteStore>,
      ReturnType<typeof createSqliteStore>,
    ];
    // The lexical fields take their reference length from their first write: the same one on both sides.
    for (const store of stores) await store.writeMemories('ctx', [tagged('first', 'harbour at dawn', 0, [])]);
    const writes = batch();
    const outcome = await batched.writeMemories('ctx', writes);
    const outcomes = { inserted: [] as string[], updated: [] as string[], unchanged: [] as string[] };
    for (const one of writes) {
      const result = await single.writeMemories('ctx', [one]);
      outcomes.inserted.push(...result.inserted);
      outcomes.updated.push(...result.updated);
      outcomes.unchanged.push(...result.unchanged);
    }
    expect(outcome).toEqual(outcomes);
    expect(outcome.updated).toEqual(['m3', 'twice']);
    expect(outcome.unchanged).toEqual(['m5']);
    const queries = ['harbour walk', 'dusk', 'word0', 'eggs dog3', 'second version'];
    for (const query of queries) {
      const hits = await Promise.all(
        stores.map((store) => store.searchLexical('ctx', query, { limit: 10, kinds: ['text'] })),
      );
      expect(hits[0]).toEqual(hits[1]);
      expect(hits[0]!.length).toBeGreaterThan(0);
    }
    for (const store of stores) {
      expect((await store.integrityCheck()).ok).toBe(true);
      await store.close();
    }
    const [a, b] = files.map(tables) as [Record<string, unknown[]>, Record<string, unknown[]>];
    expect(a.memories!.length).toBe(2 * MULTI_ROW_MAX + 12);
    expect(a.memory_keys!.some((row) => (row as unknown[])[2] === 'round:9')).toBe(true);
    expect(a.memory_tags!.length).toBeGreaterThan(0);
    for (const name of Object.keys(TABLES)) expect({ name, rows: a[name] }).toEqual({ name, rows: b[name] });
  });

  it('leaves nothing of a batch that fails after rows were written and queued', async () => {
    const file = join(dir, 'failing.db');
    const store = createSqliteStore(file);
    const good = Array.from({ length: MULTI_ROW_MAX + 8 }, (_, i) => write('ctx', `g${i}`, `good ${i}`, i));
    // Two views with one (kind, key): the views' primary key refuses it when its chunk is written, after the
    // first chunk went in and with rows of other memories queued.
    const broken = write('ctx', 'bad', 'bad one', 99);
    const bad = { ...broken, views: [broken.views[0]!, broken.views[0]!] };
    const writes = [...good.slice(0, MULTI_ROW_MAX + 4), bad, ...good.slice(MULTI_ROW_MAX + 4)];
    await expect(store.writeMemories('ctx', writes)).rejects.toThrow(/UNIQUE/);
    expect(await store.countMemories('ctx')).toBe(0);
    // Nothing queued by the failed call reaches the next one.
    await store.writeMemories('ctx', good.slice(0, 2));
    expect(await store.countMemories('ctx')).toBe(2);
    expect((await store.integrityCheck()).ok).toBe(true);
    await store.close();
    const rows = tables(file);
    expect(rows.views!.length).toBe(4);
    expect(rows.relation_journal!.map((row) => (row as unknown[])[1])).toEqual(['g0', 'g1']);
  });
});
