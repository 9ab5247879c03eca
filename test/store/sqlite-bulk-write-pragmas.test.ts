import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import {
  SORTER_THREADS,
  withoutForeignKeyChecks,
  withSorterThreads,
} from '../../src/store/sqlite-bulk-write-pragmas.ts';

describe('SQLite pragmas of bulk writes', () => {
  it('lets the work sort on helper threads and restores the connection setting, thrown or not', () => {
    const db = new Database(':memory:');
    db.exec(`CREATE TABLE t (k TEXT);
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
      INSERT INTO t SELECT hex(randomblob(8)) FROM n`);
    const threads = () => db.pragma('threads', { simple: true });
    expect(threads()).toBe(0);
    const seen = withSorterThreads(
      db,
      () => {
        db.exec('CREATE INDEX t_k ON t (k)');
        return threads();
      },
      2,
    );
    expect(seen).toBe(2);
    expect(threads()).toBe(0);
    expect(() =>
      withSorterThreads(
        db,
        () => {
          throw new Error('boom');
        },
        2,
      ),
    ).toThrow('boom');
    expect(threads()).toBe(0);
    // A connection set otherwise keeps its own value.
    db.pragma('threads = 3');
    withSorterThreads(db, () => expect(threads()).toBe(1), 1);
    expect(threads()).toBe(3);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });

  it('uses the cores beside this one, at most two', () => {
    expect(SORTER_THREADS).toBeGreaterThanOrEqual(0);
    expect(SORTER_THREADS).toBeLessThanOrEqual(2);
  });

  it('withoutForeignKeyChecks: off for the work and on again after it, thrown or not; inside a transaction left on', () => {
    const db = new Database(':memory:');
    db.pragma('foreign_keys = ON');
    db.exec('CREATE TABLE p (id TEXT PRIMARY KEY); CREATE TABLE c (p TEXT REFERENCES p (id))');
    const on = () => db.pragma('foreign_keys', { simple: true });
    withoutForeignKeyChecks(db, () => db.prepare('INSERT INTO c VALUES (?)').run('orphan'));
    expect(on()).toBe(1);
    expect(() =>
      withoutForeignKeyChecks(db, () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(on()).toBe(1);
    // Inside a transaction the pragma would be ignored: the rows stay checked.
    expect(() =>
      db.transaction(() =>
        withoutForeignKeyChecks(db, () => db.prepare('INSERT INTO c VALUES (?)').run('another')),
      )(),
    ).toThrow(/FOREIGN KEY/);
    expect(db.prepare('SELECT count(*) FROM c').pluck().get()).toBe(1);
    // A connection that had them off keeps them off.
    db.pragma('foreign_keys = OFF');
    withoutForeignKeyChecks(db, () => expect(on()).toBe(0));
    expect(on()).toBe(0);
    db.close();
  });
});
