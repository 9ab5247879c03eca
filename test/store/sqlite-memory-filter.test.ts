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
  function planOf(
    filter: MemoryFilter,
    page: { afterSequence?: number; afterId?: string } = {},
    work?: number,
  ): string[] {
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
              raw: () => recorded,
              all: (...params: unknown[]) => {
                runs.push({ sql, params });
                return statement.pluck().all(...params);
              },
              iterate: (...params: unknown[]) => {
                runs.push({ sql, params });
                return statement.raw().iterate(...params);
              },
              get: (...params: unknown[]) => statement.pluck().get(...params),
            };
            return recorded;
          };
        },
      });
      new SqliteMemoryFilter(spy as unknown as Database.Database).list('ctx', filter, {
        ...page,
        limit: 50,
        ...(work === undefined ? {} : { work }),
      });
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
      const ids = new SqliteMemoryFilter(spy as unknown as Database.Database).matchPage('ctx', filter, {
        limit: 50,
      }).items;
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
    // A window with no tag: the same rule (the last day, 100 memories, through memories_by_time).
    expect(planOf({ from: '2024-02-14' }).join('\n')).toMatch(/memories_by_time/);
  });

  it('walks a tag or the order under the work bound, and says where it stopped', () => {
    const db = new Database(file, { readonly: true });
    try {
      const filter = new SqliteMemoryFilter(db);
      // `late` (4,200) with a window of its last 1,000 memories: more than the page's work (100), so the tag is
      // walked in order and checked per row; its first 100 rows all lie before the window.
      const window = { agentId: 'late', from: '2024-02-05' };
      const stopped = filter.matchPage('ctx', window, { limit: 50, work: 100 });
      expect(stopped).toEqual({
        items: [],
        stoppedAfter: { sequence: n - 4200 + 99, id: `m${n - 4200 + 99}` },
      });
      // Walking on from each stop reaches the window's memories: the same as one page with the default bound.
      const whole = filter.matchPage('ctx', window, { limit: 50 });
      expect(whole.items).toEqual(range(n - 1000, n - 950).map((i) => `m${i}`));
      expect(whole.stoppedAfter).toBeUndefined();
      let after = stopped.stoppedAfter!;
      let page = stopped;
      for (let pages = 0; page.items.length === 0 && pages < 100; pages++) {
        page = filter.matchPage('ctx', window, {
          limit: 50,
          work: 100,
          afterSequence: after.sequence,
          afterId: after.id,
        });
        if (page.stoppedAfter) after = page.stoppedAfter;
      }
      expect(page.items[0]).toBe(`m${n - 1000}`);
      // No tag: the order's walk, the same bound (a window of the last 1,000 memories, over work 100).
      const order = filter.matchPage('ctx', { from: '2024-02-05' }, { limit: 50, work: 100 });
      expect(order).toEqual({ items: [], stoppedAfter: { sequence: 99, id: 'm99' } });
      // A page stops at its limit or when its work runs out, whichever comes first.
      expect(filter.matchPage('ctx', { agentId: 'late' }, { limit: 3, work: 2 })).toEqual({
        items: [`m${n - 4200}`, `m${n - 4199}`],
        stoppedAfter: { sequence: n - 4199, id: `m${n - 4199}` },
      });
      expect(filter.matchPage('ctx', { agentId: 'late' }, { limit: 2, work: 100 })).toEqual({
        items: [`m${n - 4200}`, `m${n - 4199}`],
      });
      // The walks read their index in page order: nothing sorted, no scan.
      const tagWalk = planOf({ agentId: 'late', from: '2024-02-05' }, {}, 100);
      expect(tagWalk[0]).toMatch(/^SEARCH t USING PRIMARY KEY \(context_id=\? AND name=\? AND value=\?/);
      expect(tagWalk.join('\n')).not.toMatch(/TEMP B-TREE|SCAN m\b/);
      const orderWalk = planOf({ from: '2024-02-05' }, { afterSequence: 10, afterId: 'm10' }, 100);
      expect(orderWalk.join('\n')).toMatch(
        /memories_by_sequence \(context_id=\? AND \(sequence,id\)>\(\?,\?\)\)/,
      );
      expect(orderWalk.join('\n')).not.toMatch(/TEMP B-TREE/);
    } finally {
      db.close();
    }
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
    // No tag: a small window is sorted, a larger one walks the order under the work bound.
    expect(filterDriver([], { tags: [], window: 10 })).toEqual({ kind: 'window' });
    expect(filterDriver([], { tags: [], window: WINDOW_SORTED_BELOW })).toEqual({ kind: 'order' });
    // A page allowed less work sorts only windows below it.
    expect(filterDriver([a], { tags: [bound], window: 100 }, 64)).toEqual({ kind: 'tag', tag: a });
    expect(filterDriver([a], { tags: [3000], window: 2000 }, 64)).toEqual({ kind: 'tag', tag: a });
    expect(filterDriver([a], { tags: [3000], window: 20 }, 64)).toEqual({ kind: 'window' });
    expect(filterDriver([], { tags: [], window: 64 }, 64)).toEqual({ kind: 'order' });
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
      const unbounded = { limit: Number.POSITIVE_INFINITY, work: Number.POSITIVE_INFINITY };
      const bounds = (limit: number) => ({ limit, work: Number.POSITIVE_INFINITY });
      expect(intersectTags(seeks, 'c', tags, {}, unbounded, accept)).toEqual({
        items: accepted.map((m) => m.id),
      });
      // Under a work bound pages stop at a decided position and go on from it: the same memories, and no page
      // makes more than work + tags - 1 seeks (counted by a wrapped statement).
      for (const work of [1, 3, 10, 40]) {
        const out: string[] = [];
        let after: { sequence?: number; id?: string } = {};
        for (let pages = 0; ; pages++) {
          expect(pages).toBeLessThan(2000);
          let spent = 0;
          const counted = Object.fromEntries(
            Object.entries(seeks).map(([key, statement]) => [
              key,
              {
                get: (...params: unknown[]) => {
                  spent++;
                  return statement.get(...params);
                },
              },
            ]),
          ) as unknown as typeof seeks;
          const page = intersectTags(counted, 'c', tags, after, { limit: 7, work }, accept);
          expect(spent).toBeLessThanOrEqual(work + tags.length);
          out.push(...page.items);
          if (page.stoppedAfter) after = page.stoppedAfter;
          else if (page.items.length === 7) {
            const last = order.find((m) => m.id === page.items[6])!;
            after = { sequence: last.sequence, id: last.id };
          } else break;
        }
        expect(out, `${names} work ${work}`).toEqual(accepted.map((m) => m.id));
      }
      for (const at of [0, 17, accepted.length - 1]) {
        const from = accepted[at]!;
        const later = accepted.slice(at + 1).map((m) => m.id);
        expect(
          intersectTags(seeks, 'c', tags, { sequence: from.sequence, id: from.id }, bounds(5), accept),
        ).toEqual({
          items: later.slice(0, 5),
        });
        const bySequence = accepted.filter((m) => m.sequence > from.sequence).map((m) => m.id);
        expect(intersectTags(seeks, 'c', tags, { sequence: from.sequence }, bounds(4), accept)).toEqual({
          items: bySequence.slice(0, 4),
        });
      }
      expect(intersectTags(seeks, 'c', tags, {}, bounds(0), accept)).toEqual({ items: [] });
      expect(intersectTags(seeks, 'none', tags, {}, bounds(10), accept)).toEqual({ items: [] });
    }
    db.close();
  });
});
