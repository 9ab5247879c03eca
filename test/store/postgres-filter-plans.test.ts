import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { MemoryFilter } from '../../src/store/archive-store-spec.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { write } from './store-conformance.ts';

/**
 * What a filtered page reads on PostgreSQL, by its executed plan (the statement the store sent, run again as a
 * generic plan with EXPLAIN ANALYZE): rows read from `memories` stay within the page's work bound whatever the
 * walk. The conformance suite checks the rows; this catches a plan that finds them by reading the context (a
 * probe of each walked memory without its LIMIT 1 was pulled up into a merge join over every memory).
 */
afterAll(dropTestDatabases);
if (PG_SKIP) console.warn(`[postgres filter plans skipped] ${PG_SKIP}`);

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** Rows each relation's scans read (returned plus filtered out, over all loops). */
function rowsRead(node: PlanNode, into = new Map<string, number>()): Map<string, number> {
  const relation = node['Relation Name'];
  if (relation !== undefined) {
    const read = (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0)) * node['Actual Loops'];
    into.set(relation, (into.get(relation) ?? 0) + read);
  }
  for (const child of node.Plans ?? []) rowsRead(child, into);
  return into;
}

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL filtered pages', () => {
  it('read at most their work bound of memories, in every walk shape', async () => {
    const sent: { text: string; values: unknown[] }[] = [];
    const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
    const setQuery = (query: (...args: unknown[]) => unknown) => {
      (pg.Client.prototype as unknown as { query: unknown }).query = query;
    };
    // The filtered pages' statements as sent (text and parameters), to run again under EXPLAIN.
    const capture = function (this: unknown, ...args: unknown[]) {
      const first = args[0] as string | { text?: string; values?: unknown[] } | undefined;
      const text = typeof first === 'string' ? first : first?.text;
      const values = (typeof first === 'string' ? args[1] : first?.values) as unknown[] | undefined;
      if (typeof text === 'string' && /WITH (RECURSIVE leap|walk)/.test(text))
        sent.push({ text, values: values ?? [] });
      return original.apply(this, args);
    };
    // Before the store opens: each connection binds the driver's query when it is made.
    setQuery(capture);
    const url = await createTestDatabase();
    const store = await openPostgresStore({ url, maxConnections: 1 });
    try {
      const n = 6000;
      const day = (i: number) =>
        new Date(Date.UTC(2024, 0, 1 + Math.floor(i / 100))).toISOString().slice(0, 10);
      for (let at = 0; at < n; at += 1000) {
        await store.writeMemories(
          'ctx',
          Array.from({ length: 1000 }, (_, k) => {
            const i = at + k;
            const base = write('ctx', `m${i}`, `note ${i}`, i);
            return {
              ...base,
              record: {
                ...base.record,
                timestamp: day(i),
                ...(i % 2 ? { agentId: 'odd' } : {}),
                metadata: { even: i % 2 === 0 },
              },
            };
          }),
        );
      }
      // As autovacuum would have by now (the store's role may not analyze): without statistics the planner
      // takes the context for a few rows and read all 6,000 by memories_by_time, then sorted them.
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query('ANALYZE memories; ANALYZE memory_tags');
      await admin.end();
      const work = 500;
      const literal = (v: unknown) =>
        v === null ? 'NULL' : typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`;
      const cases: [string, MemoryFilter][] = [
        // No tag, a window larger than the work bound, late in the order: the order's walk.
        ['order', { from: day(n - 1000) }],
        // A tag with such a window: the tag's walk, a probe of each memory.
        ['tag', { agentId: 'odd', from: day(n - 1000) }],
        // Interleaved tags, none in common: the intersection's seeks.
        ['intersection', { agentId: 'odd', metadata: { even: true } }],
      ];
      for (const [index, [shape, filter]] of cases.entries()) {
        sent.length = 0;
        const page = await store.listFiltered('ctx', filter, { limit: 50, work });
        expect(page.items, shape).toEqual([]);
        expect(page.stoppedAfter, shape).toBeDefined();
        const statement = sent[sent.length - 1]!;
        await store.queryInContext('ctx', `PREPARE filter_page_${index} AS ${statement.text}`);
        const [row] = await store.queryInContext(
          'ctx',
          `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE filter_page_${index}(${statement.values.map(literal).join(', ')})`,
        );
        const plan = (Object.values(row!)[0] as { Plan: PlanNode }[])[0]!.Plan;
        const read = rowsRead(plan);
        // The walk's own rows and a probe per walked row: about twice the bound, never the context.
        expect(read.get('memories') ?? 0, `${shape}: ${JSON.stringify([...read])}`).toBeLessThanOrEqual(
          2 * work + 2,
        );
        expect(read.get('memory_tags') ?? 0, shape).toBeLessThanOrEqual(2 * work + 2);
      }
    } finally {
      setQuery(original);
      await store.close();
    }
  });
});
