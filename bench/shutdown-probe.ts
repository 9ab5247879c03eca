/**
 * How long `graphmemix serve` takes to exit on SIGTERM while an automatic compaction runs (issue #10, round 23):
 *
 *   npx tsx bench/shutdown-probe.ts <archive.db> [--context big] [--after-ms 2000] [--checkout dir]
 *
 * <archive.db>: a SQLite archive with one large context (e.g. bench/retrieve-probe.ts's 100k build); it is
 * copied, never written. The copy's snapshot change count is set one below the 5% rule, `graphmemix serve
 * --open` (of `--checkout`, default this tree) starts on it, one POST /v1/memories reaches the rule, and
 * `--after-ms` later the server gets SIGTERM. Prints the add's latency, the time from SIGTERM to the process's
 * exit, and the compaction mark the shutdown left (none: the run finished before exit; `stoppedAt`: stopped).
 * Then reopens the copy, adds one memory to the context and waits for its compaction: the time until it is over.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { readCompactionMark } from '../src/digest/incremental/semantic-compaction-mark.ts';
import { openGraphmemix } from '../src/graphmemix.ts';
import { probeFlags } from './support/probe-args.ts';

const source = process.argv[2];
if (!source || source.startsWith('--') || !existsSync(source)) {
  throw new Error('usage: shutdown-probe.ts <archive.db> [--context big] [--after-ms 2000] [--checkout dir]');
}
const flag = probeFlags();
const contextId = flag('context', 'big');
const afterMs = Number(flag('after-ms', '2000'));
const checkout = resolve(flag('checkout', '.'));
const db = `${source}.shutdown-probe`;
for (const suffix of ['', '-wal', '-shm']) rmSync(`${db}${suffix}`, { force: true });
copyFileSync(source, db);
try {
  const raw = new Database(db);
  const { documents } = raw
    .prepare('SELECT documents FROM semantic_snapshots WHERE context_id = ?')
    .get(contextId) as { documents: number };
  raw
    .prepare('UPDATE semantic_snapshots SET changes = ? WHERE context_id = ?')
    .run(Math.ceil(0.05 * documents) - 1, contextId);
  raw.close();

  const server = spawn(
    process.execPath,
    [join(checkout, 'bin/graphmemix.js'), 'serve', '--db', db, '--open', '--port', '0', '--json'],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, GRAPHMEMIX_READ_WORKERS: '0' } },
  );
  const exited = new Promise<number | null>((done) => server.once('exit', (code) => done(code)));
  const url = await new Promise<string>((done, fail) => {
    let out = '';
    server.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) done((JSON.parse(line) as { url: string }).url);
    });
    void exited.then(() => fail(new Error('the server exited before listening')));
  });
  const added = performance.now();
  const response = await fetch(`${url}/v1/memories`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      user_id: contextId,
      memories: [{ id: 'shutdown-probe-trigger', text: 'the memory that reaches the compaction rule' }],
    }),
  });
  if (!response.ok) throw new Error(`add failed: ${response.status} ${await response.text()}`);
  const addMs = performance.now() - added;
  await new Promise((done) => setTimeout(done, afterMs));
  const signalled = performance.now();
  server.kill('SIGTERM');
  const code = await exited;
  const exitMs = performance.now() - signalled;

  const gm = await openGraphmemix({ db, readWorkers: false });
  try {
    const mark = await readCompactionMark(gm.store, contextId);
    console.log(
      `${documents} memories: add ${addMs.toFixed(0)} ms; SIGTERM ${afterMs} ms after it -> exit (code ${code}) ` +
        `in ${exitMs.toFixed(0)} ms; mark left: ${mark === undefined ? 'none' : JSON.stringify(mark)}`,
    );
    const again = performance.now();
    await gm.addMemories(contextId, [
      { id: 'shutdown-probe-after', text: 'the first memory after the restart' },
    ]);
    await gm.waitForCompactions();
    const left = await readCompactionMark(gm.store, contextId);
    console.log(
      `after the restart: one add and its compaction over in ${((performance.now() - again) / 1000).toFixed(1)} s; ` +
        `mark ${left === undefined ? 'cleared' : 'still there'}`,
    );
  } finally {
    await gm.close();
  }
} finally {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${db}${suffix}`, { force: true });
}
