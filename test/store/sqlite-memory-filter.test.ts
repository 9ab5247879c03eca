import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryFilter } from '../../src/store/archive-store-spec.ts';
import { FILTER_DRIVEN_BELOW, filterDriver, WINDOW_SORTED_BELOW } from '../../src/store/filter-plan.ts';
import { SqliteMemoryFilter } from '../../src/store/sqlite-memory-filter.ts';
import { createSqliteStore } from '../../src/store/sqlite-store.ts';
import { prepareSqliteStoreStatements } from '../../src/store/sqlite-store-statements.ts';
import { intersectTags, prepareTagSeeks } from '../../src/store/sqlite-tag-intersection.ts';
import { write } from './store-conformance.ts';

/**
 * What a filtered page reads, by its query plan: the conformance suite checks the rows on every backend; this
 * checks that SQLite reaches them without walking the context (no full scan of memories, and a tag's rows
 * read in the page's order, so no sort) wherever the tag's memories sit.
 */
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('SQLite filtered pages', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gmx-filter-'));
  const file = join(dir, 'a.db');
  const n = 4500;

  beforeAll(async () => {
    const store = createSqliteStore(file, { checkpointer: false });
    const writes = Array.from({ length: n }, (_, i) => {
      const base = write('ctx', `m${i}`, `note ${i}`, i);
      const record = {
        ...base.record,
        timestamp: new Date(Date.UTC(2024, 0, 1 + Math.floor(i / 100))).toISOString().slice(0, 10),
        // `late`: the last 4,200 memories (more than FILTER_DRIVEN_BELOW), `few`: three of them, `app`: 1,000.
        ...(i >= n - 4200 ? { agentId: 'late' } : {}),
        ...(i >= n - 3 ? { runId: 'few' } : {}),
        ...(i >= n - 1000 ? { metadata: { app: 'new' } } : {}),
      };
      return { ...base, record };
    });
    for (let at = 0; at < n; at += 500) await store.writeMemories('ctx', writes.slice(at, at + 500));
    await store.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The plan lines of the statement a fresh SqliteMemoryFilter runs for one page of `filter`. */
  function planOf(filter: MemoryFilter, page: { afterSequence?: number; afterId?: string } = {}): string[] {
    const db = new Database(file, { readonly: true });
    try {
      const runs: { sql: string; params: unknown[] }[] = [];
      const spy = new Proxy(db, {
        get(target, key) {
          if (key !== 'prepare') return Reflect.get(target, key, target);
          return (sql: string) => {
            const statement = target.prepare(sql);
            const recorded = {
              pluck: () => recorded,
              all: (...params: unknown[]) => {
                runs.push({ sql, params });
                return statement.pluck().all(...params);
              },
              get: (...params: unknown[]) => statement.pluck().get(...params),
            };
            return recorded;
          };
        },
      });
      new SqliteMemoryFilter(spy as unknown as Database.Database).list('ctx', filter, { ...page, limit: 50 });
      const run = runs[runs.length - 1]!;
      return (db.prepare(`EXPLAIN QUERY PLAN ${run.sql}`).all(...run.params) as { detail: string }[]).map(
        (row) => row.detail,
      );
    } finally {
      db.close();
    }
  }

  it('walks a tag held late in the order from its own rows, in order, whatever its size', () => {
    for (const page of [{}, { afterSequence: 3000, afterId: 'm3000' }, { afterSequence: 3000 }]) {
      const plan = planOf({ agentId: 'late' }, page);
      expect(plan[0]).toMatch(/^SEARCH t USING PRIMARY KEY \(context_id=\? AND name=\? AND value=\?/);
      if (page.afterSequence !== undefined) expect(plan[0]).toMatch(/sequence/);
      expect(plan.join('\n')).not.toMatch(/TEMP B-TREE|SCAN m\b/);
    }
  });

  it('intersects two tags by seeks in page order: a page costs seeks per match, not a walk', () => {
    for (const filter of [
      { agentId: 'late', metadata: { app: 'new' } },
      { agentId: 'late', runId: 'few' },
    ]) {
      const db = new Database(file, { readonly: true });
      let seeks = 0;
      const spy = new Proxy(db, {
        get(target, key) {
          if (key !== 'prepare') return Reflect.get(target, key, target);
          return (sql: string) => {
            const statement = target.prepare(sql);
            if (!sql.startsWith('SELECT sequence, memory_id FROM memory_tags')) return statement;
            return new Proxy(statement, {
              get(inner, name) {
                if (name === 'raw') return () => spyStatement(inner.raw());
                return Reflect.get(inner, name, inner);
              },
            });
          };
        },
      });
      const spyStatement = (statement: Database.Statement) =>
        new Proxy(statement, {
          get(inner, name) {
            if (name !== 'get') return Reflect.get(inner, name, inner);
            return (...params: unknown[]) => {
              seeks++;
              return inner.get(...params);
            };
          },
        });
      const ids = new SqliteMemoryFilter(spy as unknown as Database.Database).match('ctx', filter, {
        limit: 50,
      });
      db.close();
      // The memories of `app: new` (the last 1,000) that are `late`, or the three `few`.
      const expected = filter.runId === 'few' ? [n - 3, n - 2, n - 1] : range(n - 1000, n - 950);
      expect(ids).toEqual(expected.map((i) => `m${i}`));
      expect(seeks).toBeGreaterThan(0);
      expect(seeks).toBeLessThan(3 * expected.length + 10);
    }
  });

  it('drives by a window under WINDOW_SORTED_BELOW when the tag is larger, and never scans the memories', () => {
    // A day holds 100 memories: read through memories_by_time, sorted.
    const day = planOf({ agentId: 'late', from: '2024-02-10', to: '2024-02-10' });
    expect(day.join('\n')).toMatch(/memories_by_time/);
    expect(day.join('\n')).not.toMatch(/SCAN m\b/);
    // The last five days (500 memories) with a tag held by 4,200 late ones: the window, not the tag's walk.
    const days = planOf({ agentId: 'late', from: '2024-02-10' });
    expect(days.join('\n')).toMatch(/memories_by_time/);
    expect(days.join('\n')).not.toMatch(/SCAN m\b/);
    // A window of the whole context (4,500, under WINDOW_SORTED_BELOW) is read and sorted too: bounded.
    const all = planOf({ agentId: 'late', from: '2024-01-01' });
    expect(all.join('\n')).toMatch(/memories_by_time/);
  });

  it('unfiltered keyset pages of memories and of contexts seek to their position (no walk from the start)', () => {
    const db = new Database(file, { readonly: true });
    try {
      let prepared = '';
      const spy = new Proxy(db, {
        get(target, key) {
          if (key !== 'prepare') return Reflect.get(target, key, target);
          return (sql: string) => {
            prepared = sql;
            return target.prepare(sql);
          };
        },
      });
      const statements = prepareSqliteStoreStatements(spy as unknown as Database.Database);
      for (const [name, params] of [
        ['listRecordsAfter', { contextId: 'ctx', after: 4000, limit: 50 }],
        ['listRecordsAfterId', { contextId: 'ctx', after: 4000, afterId: 'm4000', limit: 50 }],
      ] as const) {
        expect(statements[name].all(params)).toHaveLength(50);
        const plan = (db.prepare(`EXPLAIN QUERY PLAN ${prepared}`).all(params) as { detail: string }[]).map(
          (row) => row.detail,
        );
        expect(plan.join('\n'), name).toMatch(
          /memories_by_sequence \(context_id=\? AND (sequence>\?|\(sequence,id\)>\(\?,\?\))\)/,
        );
        expect(plan.join('\n'), name).not.toMatch(/TEMP B-TREE/);
      }
      // Pages of contexts (users) by cursor: a range of the primary key, not a scan.
      statements.listContextPage.all('a', 10);
      const contexts = (
        db.prepare(`EXPLAIN QUERY PLAN ${prepared}`).all('a', 10) as { detail: string }[]
      ).map((row) => row.detail);
      expect(contexts[0]).toMatch(/^SEARCH c USING .*\(id>\?\)/);
    } finally {
      db.close();
    }
  });

  it('filterDriver: the smallest path under the bound; the first tag when all are at it', () => {
    const a = { name: 'agent_id', value: '"a"' };
    const b = { name: 'run_id', value: '"b"' };
    const bound = FILTER_DRIVEN_BELOW;
    expect(filterDriver([])).toEqual({ kind: 'order' });
    expect(filterDriver([a])).toEqual({ kind: 'tag', tag: a });
    expect(filterDriver([a, b], { tags: [bound, 10] })).toEqual({ kind: 'tag', tag: b });
    expect(filterDriver([a, b], { tags: [bound, bound] })).toEqual({ kind: 'tag', tag: a });
    expect(filterDriver([a], { tags: [bound], window: 100 })).toEqual({ kind: 'window' });
    expect(filterDriver([a], { tags: [100], window: 100 })).toEqual({ kind: 'tag', tag: a });
    // A tag counted up to the window's count + 1: at least that many, so the window drives.
    expect(filterDriver([a], { tags: [101], window: 100 })).toEqual({ kind: 'window' });
    // Every tag at its bound: a window below WINDOW_SORTED_BELOW is read and sorted, a larger one is not.
    expect(filterDriver([a], { tags: [bound], window: bound })).toEqual({ kind: 'window' });
    expect(filterDriver([a, b], { tags: [bound, bound], window: WINDOW_SORTED_BELOW - 1 })).toEqual({
      kind: 'window',
    });
    expect(filterDriver([a], { tags: [bound], window: WINDOW_SORTED_BELOW })).toEqual({
      kind: 'tag',
      tag: a,
    });
  });

  it('intersectTags equals the brute-force intersection for 2-3 tags, runs and scatter, keysets and limits', () => {
    const db = new Database(':memory:');
    db.exec(`CREATE TABLE memory_tags (context_id TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL,
      sequence INTEGER NOT NULL, memory_id TEXT NOT NULL,
      PRIMARY KEY (context_id, name, value, sequence, memory_id)) WITHOUT ROWID`);
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    // 600 memories, two per sequence number; tag x in runs, y scattered, z on most.
    const memories = range(0, 600).map((i) => ({ id: `k${(i * 7919) % 600}`, sequence: Math.floor(i / 2) }));
    const holds = {
      x: (i: number) => Math.floor(i / 50) % 3 !== 1,
      y: () => random() < 0.3,
      z: () => random() < 0.8,
    };
    const insert = db.prepare('INSERT INTO memory_tags VALUES (?, ?, ?, ?, ?)');
    const held = new Map<string, Set<string>>();
    for (const [name, has] of Object.entries(holds)) {
      held.set(name, new Set());
      memories.forEach((m, i) => {
        if (!has(i)) return;
        insert.run('c', name, 'v', m.sequence, m.id);
        held.get(name)!.add(m.id);
      });
    }
    insert.run('other', 'x', 'v', 5, 'k1');
    const seeks = prepareTagSeeks((sql) => db.prepare(sql));
    const order = [...memories].sort(
      (a, b) => a.sequence - b.sequence || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );
    for (const names of [
      ['x', 'y'],
      ['y', 'x'],
      ['x', 'z', 'y'],
      ['z', 'x'],
    ]) {
      const tags = names.map((name) => ({ name, value: 'v' }));
      const all = order.filter((m) => names.every((name) => held.get(name)!.has(m.id)));
      const rejected = new Set(all.filter((_, i) => i % 5 === 2).map((m) => m.id));
      const accepted = all.filter((m) => !rejected.has(m.id));
      const accept = (id: string) => (rejected.has(id) ? undefined : id);
      expect(intersectTags(seeks, 'c', tags, {}, Number.POSITIVE_INFINITY, accept)).toEqual(
        accepted.map((m) => m.id),
      );
      for (const at of [0, 17, accepted.length - 1]) {
        const from = accepted[at]!;
        const later = accepted.slice(at + 1).map((m) => m.id);
        expect(intersectTags(seeks, 'c', tags, { sequence: from.sequence, id: from.id }, 5, accept)).toEqual(
          later.slice(0, 5),
        );
        const bySequence = accepted.filter((m) => m.sequence > from.sequence).map((m) => m.id);
        expect(intersectTags(seeks, 'c', tags, { sequence: from.sequence }, 4, accept)).toEqual(
          bySequence.slice(0, 4),
        );
      }
      expect(intersectTags(seeks, 'c', tags, {}, 0, accept)).toEqual([]);
      expect(intersectTags(seeks, 'none', tags, {}, 10, accept)).toEqual([]);
    }
    db.close();
  });
});
