/**
 * `npx tsx bench/verbs-probe.ts --db <copy.db> [--context big] [--n 30]`: what the memory verbs other than add
 * and retrieve cost on an archive of any size (issue #10: no per-request cost proportional to the archive):
 * getMemory, listMemories (first page, a page 20 pages in, a filtered page), userStats, listUsers, search,
 * updateMemory, memoryHistory and deleteMemory, each `--n` times on memories spread over the context, wall
 * p50 / p99 / max in ms. Run it on a 10k and a 1M archive (bench/retrieve-probe.ts builds them) and compare.
 * The archive is WRITTEN TO (updates, deletes): pass a copy.
 */
import { loadavg } from 'node:os';
import { openGraphmemix } from '../src/graphmemix.ts';
import { probeFlags } from './support/probe-args.ts';

const flag = probeFlags(process.argv.slice(2));
const file = flag('db', '');
if (!file) throw new Error('usage: --db <copy of an archive> [--context big] [--n 30]');
const context = flag('context', 'big');
const n = Number(flag('n', '30'));
const gm = await openGraphmemix({ db: file });
const stats = await gm.userStats(context);
if (!stats) throw new Error(`no context "${context}" in ${file}`);
const size = stats.memories;
// Ids spread over the context: bench:scale's archives name memories m0 .. m<size-1>.
const ids = Array.from({ length: n }, (_, i) => `m${Math.floor(((i + 0.5) / n) * size)}`);
const rows: string[] = [];

async function measure(name: string, run: (i: number) => Promise<unknown>): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await run(i);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
  rows.push(`| ${name} | ${at(0.5)} | ${at(0.99)} | ${times[times.length - 1]!.toFixed(2)} |`);
}

let deep: string | undefined;
{
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++)
    cursor = (await gm.listMemories(context, { limit: 50, ...(cursor ? { cursor } : {}) })).nextCursor;
  deep = cursor;
}
await measure('getMemory', (i) => gm.getMemory(context, ids[i]!));
await measure('listMemories, first page of 50', () => gm.listMemories(context, { limit: 50 }));
await measure('listMemories, page 21 (cursor)', () =>
  gm.listMemories(context, { limit: 50, ...(deep ? { cursor: deep } : {}) }),
);
await measure('listMemories, filtered (time window)', (i) =>
  gm.listMemories(context, {
    limit: 50,
    filter: { from: `2021-0${1 + (i % 9)}-01`, to: `2021-0${1 + (i % 9)}-03` },
  }),
);
// A window at the far end of the keyset order (the newest memories): a filter that scanned in (sequence, id)
// order would read the whole context before its first match.
const late = (await gm.getMemory(context, `m${size - 200}`))?.timestamp;
if (late) {
  const day = late.slice(0, 10);
  await measure('listMemories, filtered (newest day)', () =>
    gm.listMemories(context, { limit: 50, filter: { from: `${day}T00:00:00Z`, to: `${day}T23:59:59Z` } }),
  );
  await measure('listMemories, filtered (agentId none has)', () =>
    gm.listMemories(context, { limit: 50, filter: { agentId: 'nobody' } }),
  );
}
await measure('userStats', () => gm.userStats(context));
await measure('listUsers', () => gm.listUsers({ limit: 50 }));
await measure('search (k 10)', (i) => gm.search(context, `plan for the trip ${i}`, { k: 10 }));
await measure('updateMemory (text)', (i) =>
  gm.updateMemory(context, ids[i]!, { text: `corrected note number ${i}` }),
);
await measure('memoryHistory', (i) => gm.memoryHistory(context, ids[i]!));
await measure('deleteMemory', (i) => gm.deleteMemory(context, ids[i]!));
await gm.close();
process.stdout.write(
  `${file}: ${size} memories in "${context}", n ${n}, 1-min load ${loadavg()[0]!.toFixed(2)}\n\n` +
    `| verb | p50 ms | p99 ms | max ms |\n| --- | --- | --- | --- |\n${rows.join('\n')}\n`,
);
