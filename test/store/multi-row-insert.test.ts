import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MULTI_ROW_MAX, multiRowInsert } from '../../src/store/multi-row-insert.ts';

describe('multiRowInsert', () => {
  it('writes every row in order, in chunks of at most MULTI_ROW_MAX rows a statement', () => {
    const db = new Database(':memory:');
    db.exec(
      'CREATE TABLE t (seq INTEGER PRIMARY KEY AUTOINCREMENT, a TEXT NOT NULL, b REAL NOT NULL, c INTEGER)',
    );
    const insert = multiRowInsert(db, 'INSERT INTO t (a, b, c)', '(?, ?, 7)');
    for (const rows of [0, 1, MULTI_ROW_MAX - 1, MULTI_ROW_MAX, MULTI_ROW_MAX + 1, 3 * MULTI_ROW_MAX + 5]) {
      db.exec('DELETE FROM t');
      const values: unknown[] = [];
      for (let r = 0; r < rows; r++) values.push(`row${r}`, r / 3);
      insert(values, rows);
      const stored = db.prepare('SELECT a, b, c FROM t ORDER BY seq').raw().all();
      expect(stored).toEqual(Array.from({ length: rows }, (_, r) => [`row${r}`, r / 3, 7]));
    }
    db.close();
  });

  it('applies an upsert tail to every row, existing keys and new ones', () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, n INTEGER NOT NULL)');
    db.exec('INSERT INTO t VALUES (1, 10), (40, 5)');
    const upsert = multiRowInsert(
      db,
      'INSERT INTO t (k, n)',
      '(?, ?)',
      'ON CONFLICT (k) DO UPDATE SET n = n + excluded.n',
    );
    const values: unknown[] = [];
    for (let k = 0; k < MULTI_ROW_MAX + 10; k++) values.push(k, 1);
    upsert(values, MULTI_ROW_MAX + 10);
    const stored = new Map(db.prepare('SELECT k, n FROM t').raw().all() as [number, number][]);
    expect(stored.size).toBe(MULTI_ROW_MAX + 10);
    expect(stored.get(1)).toBe(11);
    expect(stored.get(40)).toBe(6);
    expect(stored.get(0)).toBe(1);
    db.close();
  });

  it('writes nothing of a chunk that breaks a constraint', () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    const insert = multiRowInsert(db, 'INSERT INTO t (k)', '(?)');
    expect(() => insert(['x', 'y', 'x'], 3)).toThrow(/UNIQUE/);
    expect(db.prepare('SELECT COUNT(*) FROM t').pluck().get()).toBe(0);
    db.close();
  });
});
