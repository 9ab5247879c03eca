import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryFilter } from '../../src/store/archive-store-spec.ts';
import { FILTER_DRIVEN_BELOW, filterDriver } from '../../src/store/filter-plan.ts';
import { SqliteMemoryFilter } from '../../src/store/sqlite-memory-filter.ts';
import { createSqliteStore } from '../../src/store/sqlite-store.ts';
import { write } from './store-conformance.ts';

/**
 * What a filtered page reads, by its query plan: the conformance suite checks the rows on every backend; this
 * checks that SQLite reaches them without walking the context (no full scan of memories, and a tag's rows
 * read in the page's order, so no sort) wherever the tag's memories sit.
 */
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
        // `late`: the last 4,200 memories (more than FILTER_DRIVEN_BELOW), `few`: three of them.
        ...(i >= n - 4200 ? { agentId: 'late' } : {}),
        ...(i >= n - 3 ? { runId: 'few' } : {}),
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

  it('drives by the rarer tag, or by a small window, and never scans the memories', () => {
    const rarer = planOf({ agentId: 'late', runId: 'few' });
    expect(rarer[0]).toMatch(/^SEARCH t USING PRIMARY KEY/);
    expect(rarer.join('\n')).not.toMatch(/TEMP B-TREE|SCAN m\b/);
    // A day holds 100 memories: read through memories_by_time, sorted.
    const day = planOf({ agentId: 'late', from: '2024-02-10', to: '2024-02-10' });
    expect(day.join('\n')).toMatch(/memories_by_time/);
    expect(day.join('\n')).not.toMatch(/SCAN m\b/);
    // A window holding most of the context: the tag drives in order (the LIMIT stops the walk).
    const year = planOf({ agentId: 'late', from: '2024-01-01' });
    expect(year[0]).toMatch(/^SEARCH t USING PRIMARY KEY/);
    expect(year.join('\n')).not.toMatch(/TEMP B-TREE|SCAN m\b/);
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
    expect(filterDriver([a], { tags: [bound], window: bound })).toEqual({ kind: 'tag', tag: a });
  });
});
