import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { compactSemantic } from '../../src/digest/incremental/compact-semantic.ts';
import { openStore } from '../../src/store/open-store.ts';
import { write } from './store-conformance.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-semvec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TEXTS = [
  'sunset over the harbour',
  'harbour photos at sunset, sunset again',
  'grocery list milk eggs',
  'milk and eggs for the harbour picnic',
  'a long walk along the harbour wall at dawn with the dog',
  'the dog at dawn again',
];

describe('SQLite semantic documents (migration 9)', () => {
  it('reads a vector from its row, and from its postings when the row predates migration 9', async () => {
    const file = join(dir, 'semvec.db');
    const store = await openStore(file);
    await store.writeMemories(
      'ctx',
      TEXTS.map((text, i) => write('ctx', `m${i}`, text, i)),
    );
    await compactSemantic(store, 'ctx', { k: 2 });
    const ids = TEXTS.map((_, i) => `m${i}`);
    const fromRows = await store.semantic.getDocs('ctx', ids);
    expect(fromRows.length).toBe(TEXTS.length);
    await store.close();

    // A document written before migration 9 has no vector row: getDocs must read the same vector back.
    const raw = new Database(file);
    const nulls = raw.prepare("UPDATE semantic_docs SET vector = NULL WHERE context_id = 'ctx'").run();
    expect(nulls.changes).toBe(TEXTS.length);
    raw.close();
    const reopened = await openStore(file);
    expect(await reopened.semantic.getDocs('ctx', ids)).toEqual(fromRows);
    expect((await reopened.integrityCheck()).ok).toBe(true);
    await reopened.close();
  });
});
