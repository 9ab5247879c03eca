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

  it('writes nothing of a chunk that breaks a constraint', () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    const insert = multiRowInsert(db, 'INSERT INTO t (k)', '(?)');
    expect(() => insert(['x', 'y', 'x'], 3)).toThrow(/UNIQUE/);
    expect(db.prepare('SELECT COUNT(*) FROM t').pluck().get()).toBe(0);
    db.close();
  });
});
