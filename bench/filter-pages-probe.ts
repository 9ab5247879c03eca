/**
 * `npx tsx bench/filter-pages-probe.ts [--memories 20000] [--pages 60] [--db <postgres url>]`: first filtered pages of 50
 * (`gm.listMemories`) on a fresh SQLite context where an agent id is on half the memories, a run id on the
 * last four, one agent id on none, and a metadata tag (`app: "new"`) on the last 5,000 only (a tag many
 * memories hold, all late in the order: a new app's memories after years of others), `half` (0 / 1) alternating
 * with the agent ids (an empty, finely interleaved intersection); event times advance one
 * day per 1,000 memories. p50 / p90 ms per filter, and unfiltered for scale; then pages of 50 by cursor at the
 * start, middle and end of the order, unfiltered and for the late tag; and every page, by cursor to the end, of two
 * filters no index answers (the interleaved intersection, a tag with a window late in its order). Run it from two checkouts to
 * compare the statement a filter compiles to (src/store/sqlite-memory-filter.ts, src/store/filter-plan.ts);
 * `--db` runs it on an empty PostgreSQL database instead of a fresh SQLite file (postgres-scopes.ts).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openGraphmemix } from '../src/graphmemix.ts';
import { parseCount, probeFlags } from './support/probe-args.ts';

const flag = probeFlags(process.argv.slice(2));
const n = parseCount(flag('memories', '20000'));
const pages = parseCount(flag('pages', '60'));
/** ISO day of memory i: one day per 1,000 memories from 2020-01-01. */
function dayOf(i: number): string {
  return new Date(Date.UTC(2020, 0, 1 + Math.floor(i / 1000))).toISOString().slice(0, 10);
}
const gm = await openGraphmemix({ db: flag('db', join(mkdtempSync(join(tmpdir(), 'gm-filter-')), 'a.db')) });
await gm.addMemories(
  'u',
  Array.from({ length: n }, (_, i) => ({
    id: `m${i}`,
    text: `note ${i} w${i % 997}`,
    agentId: i % 2 ? 'planner' : 'writer',
    ...(i > n - 5 ? { runId: 'late' } : {}),
    metadata: { half: i % 2, ...(i >= n - 5000 ? { app: 'new' } : {}) },
    timestamp: dayOf(i),
  })),
);
const lastDay = dayOf(n - 1);
const filters = [
  { agentId: 'planner' },
  { runId: 'late' },
  { agentId: 'nobody' },
  { metadata: { app: 'new' } },
  { agentId: 'planner', metadata: { app: 'new' } },
  { metadata: { app: 'new' }, from: lastDay },
  { agentId: 'planner', from: dayOf(0), to: dayOf(0) },
  { agentId: 'planner', from: dayOf(n - 5000) },
  // Finely interleaved and disjoint (planner is on odd memories, half 0 on even ones): the intersection's worst.
  { agentId: 'planner', metadata: { half: 0 } },
  {},
  // A window with no tag: the last day (small, sorted), the later half (walked in order, work-bound).
  { from: lastDay },
  { from: dayOf(Math.floor(n / 2)) },
  // A tag on half the memories with the last 35% of the days: its walk reaches them late.
  { agentId: 'writer', from: dayOf(Math.floor(n * 0.65)) },
];
async function report(label: string, options: Parameters<typeof gm.listMemories>[1]): Promise<void> {
  const times: number[] = [];
  for (let r = 0; r < pages; r++) {
    const started = performance.now();
    await gm.listMemories('u', options);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(3);
  process.stdout.write(`${label}: p50 ${at(0.5)} ms, p90 ${at(0.9)} ms\n`);
}
for (const filter of filters) await report(JSON.stringify(filter), { limit: 50, filter });
// Every page of a filter no index answers, by cursor to the end: a page does at most FILTER_PAGE_WORK units of
// work and says where it stopped, so the slowest page stays bounded while the walk as a whole is linear.
for (const filter of [
  { agentId: 'planner', metadata: { half: 0 } },
  { agentId: 'writer', from: dayOf(Math.floor(n * 0.65)) },
]) {
  let cursor: string | undefined;
  let count = 0;
  let empty = 0;
  let found = 0;
  let slowest = 0;
  const started = performance.now();
  do {
    const at = performance.now();
    const page = await gm.listMemories('u', {
      limit: 50,
      filter,
      ...(cursor === undefined ? {} : { cursor }),
    });
    slowest = Math.max(slowest, performance.now() - at);
    count++;
    if (page.memories.length === 0) empty++;
    found += page.memories.length;
    cursor = page.nextCursor;
  } while (cursor !== undefined && count < 100_000);
  const total = performance.now() - started;
  process.stdout.write(
    `${JSON.stringify(filter)} to the end: ${count} pages (${empty} empty), ${found} memories, ${total.toFixed(0)} ms in all, slowest page ${slowest.toFixed(1)} ms\n`,
  );
}
// A filtered search (flat retrieval) finds its candidates with one bounded filtered read: a filter that read
// stops on is searched as a broad one (deeper indexed search checked by id), never a walk of the context.
for (const filter of [{}, { agentId: 'planner' }, { agentId: 'planner', metadata: { half: 0 } }]) {
  const times: number[] = [];
  for (let r = 0; r < Math.min(pages, 20); r++) {
    const started = performance.now();
    await gm.search('u', `note w${r * 37}`, { k: 10, filter });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  process.stdout.write(
    `search ${JSON.stringify(filter)}: p50 ${times[Math.floor(times.length / 2)]!.toFixed(3)} ms\n`,
  );
}
// Pages by cursor at the start, the middle and the end of the order (a page's cost must not grow with its
// position): the cursors are those of a walk through every page of 200.
for (const filter of [{}, { metadata: { app: 'new' } }]) {
  const cursors: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await gm.listMemories('u', {
      limit: 200,
      filter,
      ...(cursor === undefined ? {} : { cursor }),
    });
    cursor = page.nextCursor;
    if (cursor !== undefined) cursors.push(cursor);
  } while (cursor !== undefined);
  for (const [where, at] of [
    ['first', 0],
    ['middle', Math.floor(cursors.length / 2)],
    ['last', cursors.length - 1],
  ] as const) {
    await report(`${JSON.stringify(filter)} page of 50 after the ${where} cursor of ${cursors.length}`, {
      limit: 50,
      filter,
      cursor: cursors[at]!,
    });
  }
}
await gm.close();
