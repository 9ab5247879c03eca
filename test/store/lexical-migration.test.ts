import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { Bm25Index } from '../../src/retrieval/bm25-index.ts';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/store/migrations.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { MemoryView } from '../../src/types/view.ts';
import { write } from './store-conformance.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-lexmig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A store as schema version 1 wrote it: memories and views, no lexical index tables. */
function writeVersion1Store(file: string, contexts: Record<string, string[]>): MemoryView[] {
  const db = new Database(file);
  db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL)');
  db.exec(MIGRATIONS[0]!.sql);
  db.prepare('INSERT INTO schema_version (version) VALUES (1)').run();
  const views: MemoryView[] = [];
  for (const [contextId, texts] of Object.entries(contexts)) {
    db.prepare('INSERT INTO contexts (id) VALUES (?)').run(contextId);
    texts.forEach((text, i) => {
      const w = write(contextId, `m${i}`, text, i);
      db.prepare(`INSERT INTO memories (context_id, id, sequence, kind, content_hash, record)
        VALUES (?, ?, ?, 'message', ?, ?)`).run(
        contextId,
        w.record.id,
        i,
        w.contentHash,
        JSON.stringify(w.record),
      );
      w.views.forEach((view, position) => {
        db.prepare(
          'INSERT INTO views (context_id, memory_id, position, kind, key, text) VALUES (?, ?, ?, ?, ?, ?)',
        ).run(contextId, view.memoryId, position, view.kind, view.key, view.text);
        if (contextId === 'ctx') views.push(view);
      });
    });
  }
  db.close();
  return views;
}

const TEXTS = [
  'sunset over the harbour',
  'harbour photos at sunset, sunset again',
  'grocery list milk eggs',
  '',
  'the of and',
  'a long walk along the harbour wall at dawn with the dog',
];

describe('lexical index migration (schema 1 -> 2)', () => {
  it('backfills the index from existing views so search equals a fresh Bm25Index', async () => {
    const file = join(dir, 'v1.db');
    const views = writeVersion1Store(file, { ctx: TEXTS, other: ['sunset sunset sunset', 'milk'] });
    const store = await openStore(file);
    const raw = new Database(file, { readonly: true });
    expect(raw.prepare('SELECT version FROM schema_version').get()).toEqual({ version: SCHEMA_VERSION });
    raw.close();
    const reference = Bm25Index.build(views);
    for (const query of ['sunset', 'harbour dawn', 'milk eggs sunset', 'meta m2', 'the']) {
      for (const limit of [1, 2, 10]) {
        expect(await store.searchLexical('ctx', query, { limit })).toEqual(
          reference.search(query, { limit }),
        );
      }
    }
    // The backfilled index is maintained like a fresh one afterwards.
    await store.writeMemories('ctx', [write('ctx', 'm0', 'sunrise over the harbour', 0)]);
    await store.deleteMemory('ctx', 'm1');
    const current = [
      ...views.filter((v) => v.memoryId !== 'm0' && v.memoryId !== 'm1'),
      ...write('ctx', 'm0', 'sunrise over the harbour', 0).views,
    ];
    expect(await store.searchLexical('ctx', 'harbour sunrise sunset', { limit: 10 })).toEqual(
      Bm25Index.build(current).search('harbour sunrise sunset', { limit: 10 }),
    );
    await store.close();
  });

  it('a read-only schema-1 store (not migrated) still answers by building BM25 per search', async () => {
    const file = join(dir, 'v1-readonly.db');
    const views = writeVersion1Store(file, { ctx: TEXTS });
    const store = await openStore(file, { readonly: true });
    expect(await store.searchLexical('ctx', 'harbour', { limit: 3 })).toEqual(
      Bm25Index.build(views).search('harbour', { limit: 3 }),
    );
    await store.close();
  });
});
