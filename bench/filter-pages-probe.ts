/**
 * `npx tsx bench/filter-pages-probe.ts [--memories 20000] [--pages 60]`: first filtered pages of 50
 * (`gm.listMemories`) on a fresh SQLite context where an agent id is on half the memories, a run id on the
 * last four and one agent id on none; p50 / p90 ms per filter, and unfiltered for scale. Run it from two
 * checkouts to compare the statement a filter compiles to (src/store/sqlite-memory-filter.ts).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openGraphmemix } from '../src/graphmemix.ts';
import { parseCount, probeFlags } from './support/probe-args.ts';

const flag = probeFlags(process.argv.slice(2));
const n = parseCount(flag('memories', '20000'));
const pages = parseCount(flag('pages', '60'));
const gm = await openGraphmemix({ db: join(mkdtempSync(join(tmpdir(), 'gm-filter-')), 'a.db') });
await gm.addMemories(
  'u',
  Array.from({ length: n }, (_, i) => ({
    id: `m${i}`,
    text: `note ${i} w${i % 997}`,
    agentId: i % 2 ? 'planner' : 'writer',
    ...(i > n - 5 ? { runId: 'late' } : {}),
  })),
);
for (const filter of [{ agentId: 'planner' }, { runId: 'late' }, { agentId: 'nobody' }, {}]) {
  const times: number[] = [];
  for (let r = 0; r < pages; r++) {
    const started = performance.now();
    await gm.listMemories('u', { limit: 50, filter });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(3);
  process.stdout.write(`${JSON.stringify(filter)}: p50 ${at(0.5)} ms, p90 ${at(0.9)} ms\n`);
}
await gm.close();
