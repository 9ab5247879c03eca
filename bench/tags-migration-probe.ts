/**
 * `npx tsx bench/tags-migration-probe.ts <copy of an archive at SQLite schema 12> [--context <id>] [--late 5000]
 * [--pages 40]`: what SQLite migration 13 (scope tags keyed in page order) costs on a big archive, and what a
 * filtered page costs after it. The file is CHANGED: every memory of the context gets an agent id (`all`) and
 * the last `--late` in (sequence, id) order a metadata tag (`app: "new"`), written as schema 12 wrote them
 * (no sequence); then the archive is opened (the migration runs; timed) and first pages of 50 are timed for
 * the late tag, both tags together, and pages by cursor at the start and the end of the late tag. Use a copy:
 * `cp /work/data/f1m.db /tmp/t.db && npx tsx bench/tags-migration-probe.ts /tmp/t.db`.
 */
import Database from 'better-sqlite3';
import { openGraphmemix } from '../src/graphmemix.ts';
import { parseCount, probeFlags } from './support/probe-args.ts';

const file = process.argv[2];
if (file === undefined || file.startsWith('--')) {
  process.stderr.write(
    'usage: tags-migration-probe.ts <copy of a schema-12 archive> [--context id] [--late n]\n',
  );
  process.exit(2);
}
const flag = probeFlags(process.argv.slice(3));
const late = parseCount(flag('late', '5000'));
const pages = parseCount(flag('pages', '40'));

const raw = new Database(file);
const version = raw.prepare('SELECT version FROM schema_version').pluck().get() as number;
if (version !== 12) {
  process.stderr.write(
    `schema ${version}: this probe writes tags as schema 12 did; give it a schema-12 file\n`,
  );
  process.exit(2);
}
const context = flag(
  'context',
  raw.prepare('SELECT id FROM contexts ORDER BY memories DESC LIMIT 1').pluck().get() as string,
);
const memories = raw
  .prepare('SELECT count(*) FROM memories WHERE context_id = ?')
  .pluck()
  .get(context) as number;
let started = performance.now();
raw.transaction(() => {
  raw
    .prepare(
      `INSERT OR IGNORE INTO memory_tags (context_id, name, value, memory_id)
       SELECT context_id, 'agent_id', '"all"', id FROM memories WHERE context_id = ?`,
    )
    .run(context);
  raw
    .prepare(
      `INSERT OR IGNORE INTO memory_tags (context_id, name, value, memory_id)
       SELECT context_id, 'metadata.app', '"new"', id FROM memories WHERE context_id = ?
       ORDER BY sequence DESC, id DESC LIMIT ?`,
    )
    .run(context, late);
})();
const tagged = raw.prepare('SELECT count(*) FROM memory_tags').pluck().get() as number;
raw.close();
process.stdout.write(
  `context ${context}: ${memories} memories; ${tagged} tag rows written as schema 12 (${((performance.now() - started) / 1000).toFixed(1)} s)\n`,
);

started = performance.now();
const gm = await openGraphmemix({ db: file });
process.stdout.write(`open with migration 13: ${((performance.now() - started) / 1000).toFixed(2)} s\n`);

async function report(label: string, options: Parameters<typeof gm.listMemories>[1]): Promise<number> {
  const times: number[] = [];
  let count = 0;
  for (let r = 0; r < pages; r++) {
    const t = performance.now();
    count = (await gm.listMemories(context, options)).memories.length;
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(3);
  process.stdout.write(`${label}: ${count} memories, p50 ${at(0.5)} ms, p90 ${at(0.9)} ms\n`);
  return count;
}
await report('first page of 50, app "new"', { limit: 50, filter: { metadata: { app: 'new' } } });
await report('first page of 50, agent "all" + app "new"', {
  limit: 50,
  filter: { agentId: 'all', metadata: { app: 'new' } },
});
await report('first page of 50, agent "all"', { limit: 50, filter: { agentId: 'all' } });
// The late tag's last page: walk its cursors (pages of 200), then time the page after the last one.
let cursor: string | undefined;
let last: string | undefined;
do {
  const page = await gm.listMemories(context, {
    limit: 200,
    filter: { metadata: { app: 'new' } },
    ...(cursor === undefined ? {} : { cursor }),
  });
  last = cursor;
  cursor = page.nextCursor;
} while (cursor !== undefined);
if (last !== undefined) {
  await report('app "new", page of 50 after its last cursor', {
    limit: 50,
    filter: { metadata: { app: 'new' } },
    cursor: last,
  });
}
await gm.close();
