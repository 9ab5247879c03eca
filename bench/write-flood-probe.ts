/**
 * `npx tsx bench/write-flood-probe.ts [--code dir] [--clients 60] [--body-mib 0.2] [--requests 600]
 * [--record-kb 2] [--flood-users 1]`: one API key floods `graphmemix serve` with adds while another key adds one
 * small memory every 200 ms. With `--flood-users n` the flooding key is bound to n users and its adds go to
 * them in turn (a key that writes to many users at once). Starts `serve` from `--code`'s sources on a fresh SQLite file (write worker and read workers,
 * as a deployment runs), sends `--requests` POST /v1/memories of about `--body-mib` each (records of
 * `--record-kb` of text) from `--clients` concurrent connections, then SIGTERMs the server. Prints the
 * flooder's answers by status, the other key's add latency (count, p50 / p95 / longest), the server's peak
 * RSS (VmHWM, all threads), how long the server took to exit after SIGTERM (given up after 120 s), the
 * flooder's own add latency, and the ids its writes left undigested in a compaction's backlog at exit.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { probeFlags, rankPercentile } from './support/probe-args.ts';

const flag = probeFlags();
const code = resolve(flag('code', join(import.meta.dirname, '..')));
const clients = Number(flag('clients', '60'));
const bodyMib = Number(flag('body-mib', '0.2'));
const requests = Number(flag('requests', '600'));
const recordBytes = Number(flag('record-kb', '2')) * 1024;
const floodUsers = Number(flag('flood-users', '1'));
const floodUser = (i: number) => (floodUsers === 1 ? 'hannah' : `hannah${i % floodUsers}`);
const floodGrant = Array.from({ length: floodUsers }, (_, i) => floodUser(i)).join('|');

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-flood-'));
const port = 18_000 + Math.floor(Math.random() * 1_000);
const server = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    join(code, 'src/cli/main.ts'),
    'serve',
    '--db',
    join(dir, 'a.db'),
    '--port',
    String(port),
  ],
  {
    env: { ...process.env, GRAPHMEMIX_API_KEYS: `kflood=${floodGrant},kother=olga` },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
await new Promise<void>((ready) => server.stdout!.once('data', () => ready()));
const peakRssMb = () =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]) / 1024;

const url = `http://127.0.0.1:${port}/v1/memories`;
const perBody = Math.max(1, Math.floor((bodyMib * 1024 * 1024) / recordBytes));
const words = 'lake house pier boat summer winter garden train ticket pottery'.split(' ');
const body = (i: number) =>
  JSON.stringify({
    user_id: floodUser(i),
    memories: Array.from({ length: perBody }, (_, r) => {
      let text = '';
      while (text.length < recordBytes)
        text += `${words[(i * 7 + r + text.length) % words.length]} w${(text.length * 31 + i) % 5000} `;
      return { id: `h${i}-${r}`, text };
    }),
  });
const post = async (key: string, payload: string) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: payload,
  });
  await response.text();
  return response.status;
};

const statuses: Record<string, number> = {};
const count = (name: string) => {
  statuses[name] = (statuses[name] ?? 0) + 1;
};
const otherMs: number[] = [];
let flooding = true;
const other = (async () => {
  for (let i = 0; flooding; i++) {
    const at = performance.now();
    const status = await post(
      'kother',
      JSON.stringify({ user_id: 'olga', memories: [{ id: `o${i}`, text: 'olga met anna at the pier' }] }),
    );
    otherMs.push(performance.now() - at);
    count(`other ${status}`);
    await new Promise((next) => setTimeout(next, 200));
  }
})();
const started = performance.now();
let sent = 0;
const floodMs: number[] = [];
await Promise.all(
  Array.from({ length: clients }, async () => {
    while (sent < requests) {
      const at = performance.now();
      count(`flood ${await post('kflood', body(sent++))}`);
      floodMs.push(performance.now() - at);
    }
  }),
);
const wall = (performance.now() - started) / 1000;
flooding = false;
await other;
const rss = peakRssMb();
const stopAt = performance.now();
server.kill('SIGTERM');
const exited = await Promise.race([
  new Promise<boolean>((done) => server.once('exit', () => done(true))),
  new Promise<boolean>((done) => setTimeout(() => done(false), 120_000)),
]);
const exitS = (performance.now() - stopAt) / 1000;
if (!exited) {
  server.kill('SIGKILL');
  await new Promise((done) => server.once('exit', done));
}
// The flooding user's semantic debt: the ids its writes left in a running compaction's backlog, not digested
// into semantic_knn yet (a stopped run keeps them for the next one).
const db = new Database(join(dir, 'a.db'), { readonly: true });
const backlogRows = db
  .prepare("SELECT value FROM meta WHERE key >= 'semantic-backlog:' AND key < 'semantic-backlog;'")
  .all() as Array<{ value: string }>;
const backlogIds = backlogRows.reduce((sum, row) => sum + (JSON.parse(row.value) as unknown[]).length, 0);
db.close();
rmSync(dir, { recursive: true, force: true });
console.log(
  JSON.stringify({
    code,
    clients,
    requests,
    floodUsers,
    recordsPerBody: perBody,
    floodWallS: Number(wall.toFixed(1)),
    statuses,
    floodAddMs: {
      p50: Math.round(rankPercentile(floodMs, 0.5)),
      p95: Math.round(rankPercentile(floodMs, 0.95)),
      longest: Math.round(Math.max(0, ...floodMs)),
    },
    backlogIdsAtExit: backlogIds,
    otherAddMs: {
      n: otherMs.length,
      p50: Math.round(rankPercentile(otherMs, 0.5)),
      p95: Math.round(rankPercentile(otherMs, 0.95)),
      longest: Math.round(Math.max(0, ...otherMs)),
    },
    serverPeakRssMb: Math.round(rss),
    exitAfterSigtermS: exited ? Number(exitS.toFixed(1)) : '>120 (killed)',
    load: loadavg()[0]!.toFixed(2),
  }),
);
