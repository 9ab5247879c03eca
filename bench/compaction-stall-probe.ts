/**
 * `npx tsx bench/compaction-stall-probe.ts [--records 100k] [--worker] [--inline]`: what the
 * automatic (5%-rule) compaction that a write triggers costs the writes around it. Imports realistic chat
 * (bench/support/realistic-chat.ts, seeded) into user `ann` of a fresh archive, sets the snapshot's change
 * count one below the rule (the compaction's cost does not depend on how the drift came), reopens, and then,
 * while user `bob` adds one memory every 50 ms and `ann` one every 200 ms, adds the memory that reaches the
 * rule. Prints that add's latency, the time until the compaction is over, and the other adds' waits meanwhile
 * (count, p50, p99, longest; from when each add was due, so a blocked event loop counts). `--inline` opens with `compaction: 'inline'` (the compaction inside
 * the write, as before round 22).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openGraphmemix } from '../src/graphmemix.ts';
import { parseCount, probeFlags, rankPercentile } from './support/probe-args.ts';
import { writeChatJsonl } from './support/realistic-chat.ts';

const flag = probeFlags();
const count = parseCount(flag('records', '100k'));
const worker = process.argv.includes('--worker');
const inline = process.argv.includes('--inline');

const dir = mkdtempSync(join(tmpdir(), 'gm-compaction-stall-'));
const f = (v: number) => v.toFixed(0);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
try {
  const db = join(dir, 'a.db');
  const file = join(dir, 'ann.jsonl');
  writeChatJsonl(file, count, 4242);
  const built = performance.now();
  const setup = await openGraphmemix({ db, readWorkers: false });
  await setup.ingest(file, { format: 'unified', contextId: 'ann' });
  await setup.addMemories('bob', [{ id: 'warm', text: 'a first memory of the other user' }]);
  await setup.close();
  const raw = new Database(db);
  const { documents } = raw
    .prepare("SELECT documents FROM semantic_snapshots WHERE context_id = 'ann'")
    .get() as {
    documents: number;
  };
  const limit = Math.max(16, Math.ceil(0.05 * documents));
  // Two below: the warm-up add below makes it one below, the trigger reaches it.
  raw.prepare("UPDATE semantic_snapshots SET changes = ? WHERE context_id = 'ann'").run(limit - 2);
  raw.close();
  console.log(`archive: ${documents} memories in ann, built in ${f((performance.now() - built) / 1000)} s`);

  const gm = await openGraphmemix({
    db,
    writeWorker: worker,
    readWorkers: false,
    ...(inline ? { compaction: 'inline' as const } : {}),
  });
  await gm.addMemories('ann', [{ id: 'warm-ann', text: 'ann warms the handle before the trigger' }]);
  let done = false;
  // A wait counts from when the add was due (its timer's time), so time the event loop was blocked before it
  // could even be issued (a synchronous stretch of the compaction on this thread) counts too.
  const loop = async (user: string, every: number, waits: number[]) => {
    let due = performance.now();
    for (let n = 0; !done; n++) {
      await gm.addMemories(user, [
        { id: `${user}-${n}`, text: `${user} writes note ${n} during the compaction` },
      ]);
      waits.push(performance.now() - due);
      due = performance.now() + every;
      await sleep(every);
    }
  };
  const started = performance.now();
  const trigger = gm.addMemories('ann', [
    { id: 'trigger', text: 'the memory that reaches the compaction rule' },
  ]);
  const bob: number[] = [];
  const ann: number[] = [];
  const loops = Promise.all([loop('bob', 50, bob), sleep(5).then(() => loop('ann', 200, ann))]);
  await trigger;
  const triggerMs = performance.now() - started;
  await gm.waitForCompactions();
  const over = performance.now() - started;
  done = true;
  await loops;
  const snapshot = await gm.store.semantic.getSnapshot('ann');
  console.log(
    `${worker ? 'write worker' : 'in process'}, ${inline ? 'compaction in the write' : 'compaction in steps'}: trigger add ${f(triggerMs)} ms, compaction over after ${f(over)} ms, load ${loadavg()[0]!.toFixed(2)}`,
  );
  console.log(`snapshot after: ${snapshot?.documents} documents, ${snapshot?.changes} changes`);
  for (const [who, waits] of [
    ['bob (another user, every 50 ms)', bob],
    ['ann (the same user, every 200 ms)', ann],
  ] as const) {
    console.log(
      `${who}: ${waits.length} adds, p50 ${f(rankPercentile(waits, 0.5))} ms, p99 ${f(rankPercentile(waits, 0.99))} ms, longest ${f(Math.max(0, ...waits))} ms`,
    );
  }
  await gm.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
