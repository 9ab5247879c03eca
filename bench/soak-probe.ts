/**
 * `npx tsx bench/soak-probe.ts [--users 200] [--per-user 500] [--minutes 10] [--clients 12] [--db file|postgres://…] [--json out] [--server-cpu-prof dir] [--heavy-users 0] [--heavy-share 0.5]`
 *
 * A long-running server under mixed traffic, to see whether anything grows with its uptime instead of with
 * its archive: builds (or reuses) an archive of `users` contexts of `per-user` memories each (bench:scale's
 * chat text, one seed per user), starts `graphmemix serve --open` on it as a child process (its own write
 * worker and read workers, as deployed), and runs `clients` concurrent clients for `minutes`: per request a
 * random user and, by share, a retrieve (78%), a conversation of two messages added (12%), a listing page
 * (4%), the user's stats (2%), an update (2%) or a delete (2%) of a memory this probe added. Every 5 s it
 * samples the server process's RSS (/proc, main thread and workers together); every minute it prints the
 * requests and latency percentiles per kind, errors, 503s and the RSS, and at the end the RSS slope over the
 * second half of the run (MiB per minute: ~0 when nothing accumulates) and the archive's integrity.
 * `--server-cpu-prof dir` runs the server under `node --cpu-prof` (one profile per thread, written at its exit).
 * `--heavy-users n` sends `--heavy-share` of the adds, updates and deletes to the first n users (a few users
 * who write all day beside many who write now and then); their writes are counted apart (`add@heavy`, ...).
 * With a PostgreSQL URL the minute lines add the database side (pg-side-sampler.ts): the server's connections
 * by state, the longest open transaction, and the RSS of every postgres process of the host (the cluster
 * should be this probe's own, e.g. `scripts/pg-cluster.sh start DIR PORT`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { ingestItems } from '../src/digest/ingest.ts';
import { mulberry32 } from '../src/digest/semantic/seeded-random.ts';
import { openGraphmemix } from '../src/graphmemix.ts';
import type { ImportItem } from '../src/importers/importer-spec.ts';
import { type PgSample, pgSideSampler } from './support/pg-side-sampler.ts';
import { parseCount, probeFlags } from './support/probe-args.ts';
import { chatArchive, chatQuestions } from './support/realistic-chat.ts';

const args = process.argv.slice(2);
const flag = probeFlags(args);
const users = parseCount(flag('users', '200'));
const perUser = parseCount(flag('per-user', '500'));
const minutes = Number(flag('minutes', '10'));
const clients = parseCount(flag('clients', '12'));
const file = flag('db', `/tmp/graphmemix-soak-${users}x${perUser}.db`);
const jsonOut = args.includes('--json') ? flag('json', '') : undefined;
const profileDir = args.includes('--server-cpu-prof') ? flag('server-cpu-prof', '') : undefined;
const heavyUsers = parseCount(flag('heavy-users', '0'));
const heavyShare = Number(flag('heavy-share', '0.5'));
const root = resolve(import.meta.dirname, '..');
const onPostgres = /^postgres(ql)?:\/\//.test(file);

const userId = (i: number) => `soak${String(i).padStart(4, '0')}`;

/** Builds the archive once: one bulk import per user (relations included), skipped when it is there. */
async function buildArchive(): Promise<void> {
  const gm = await openGraphmemix({ db: file });
  try {
    const started = performance.now();
    for (let i = 0; i < users; i++) {
      if ((await gm.store.countMemories(userId(i))) >= perUser) continue;
      await ingestItems(
        gm.store,
        chatArchive({ contextId: userId(i), count: perUser, seed: 1000 + i }) as Iterable<ImportItem>,
      );
    }
    console.log(
      `archive ${file}: ${users} users x ${perUser} memories ready in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  } finally {
    await gm.close();
  }
}

async function startServer(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${resolve(profileDir)}`] : []),
      resolve(root, 'bin/graphmemix.js'),
      'serve',
      '--db',
      file,
      '--open',
      '--port',
      '0',
      '--json',
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((done, fail) => {
    child.once('exit', (code) => fail(new Error(`server exited with ${code} before listening`)));
    lines.once('line', (line) => done((JSON.parse(line) as { url: string }).url));
  });
  return { child, url };
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

type Kind = 'retrieve' | 'add' | 'list' | 'stats' | 'update' | 'delete';
const SHARES: [Kind, number][] = [
  ['retrieve', 0.78],
  ['add', 0.12],
  ['list', 0.04],
  ['stats', 0.02],
  ['update', 0.02],
  ['delete', 0.02],
];

/** The request kind whose share holds `roll` (0 <= roll < 1). */
function pickKind(roll: number): Kind {
  let below = 0;
  for (const [kind, share] of SHARES) {
    below += share;
    if (roll < below) return kind;
  }
  return 'retrieve';
}

const WRITES = new Set<Kind>(['add', 'update', 'delete']);
const isHeavy = (user: string) => Number(user.slice('soak'.length)) < heavyUsers;

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

interface Minute {
  minute: number;
  load: number;
  rssMiB: number;
  errors: number;
  busy: number;
  pg?: PgSample;
  kinds: Record<string, { n: number; p50: number; p95: number; p99: number }>;
}

async function main(): Promise<void> {
  await buildArchive();
  const { child, url } = await startServer();
  const pgSide = onPostgres ? pgSideSampler(file) : undefined;
  const questions = chatQuestions(2000, 5, { contextId: 'q', count: 5000, seed: 1000 });
  const words = questions.flatMap((q) => q.split(' ').slice(4));
  /** Ids this probe added, per user: the ones it may update or delete. */
  const added = new Map<string, string[]>();
  let latencies = new Map<string, number[]>();
  let errors = 0;
  let busy = 0;
  const firstErrors: string[] = [];
  /** The slowest answered requests of the run (kind, user, start as wall clock, ms), longest first. */
  const slowest: { kind: Kind; user: string; at: string; ms: number }[] = [];
  const rss: { t: number; mib: number }[] = [];
  const perMinute: Minute[] = [];
  const started = performance.now();
  const deadline = started + minutes * 60_000;
  const sampler = setInterval(
    () => rss.push({ t: (performance.now() - started) / 60_000, mib: rssMiB(child.pid!) }),
    5000,
  );
  rss.push({ t: 0, mib: rssMiB(child.pid!) });
  let minute = 0;
  const reporter = setInterval(async () => {
    minute++;
    // The minute's counters taken and reset first: the database sample below awaits.
    const [ofMinute, errorsOfMinute, busyOfMinute] = [latencies, errors, busy];
    latencies = new Map();
    errors = 0;
    busy = 0;
    const kinds: Minute['kinds'] = {};
    for (const [kind, values] of ofMinute) {
      const sorted = values.sort((a, b) => a - b);
      kinds[kind] = {
        n: sorted.length,
        p50: percentile(sorted, 0.5),
        p95: percentile(sorted, 0.95),
        p99: percentile(sorted, 0.99),
      };
    }
    const pg = await pgSide?.sample();
    const row: Minute = {
      minute,
      load: loadavg()[0]!,
      rssMiB: rss.at(-1)!.mib,
      errors: errorsOfMinute,
      busy: busyOfMinute,
      ...(pg === undefined ? {} : { pg }),
      kinds,
    };
    perMinute.push(row);
    const cells = Object.entries(kinds)
      .map(([k, v]) => `${k} ${v.n} ${v.p50.toFixed(1)}/${v.p95.toFixed(1)}/${v.p99.toFixed(1)}`)
      .join(', ');
    console.log(
      `min ${minute}: rss ${row.rssMiB.toFixed(0)} MiB, load ${row.load.toFixed(2)}, errors ${row.errors}, 503 ${row.busy}; ${cells} (ms p50/p95/p99)${pg === undefined ? '' : `; pg ${JSON.stringify(pg)}`}`,
    );
  }, 60_000);

  async function call(
    kind: Kind,
    user: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<unknown> {
    const t0 = performance.now();
    const at = new Date().toISOString();
    try {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (response.status === 503) {
        busy++;
        await new Promise((r) => setTimeout(r, 50));
        return undefined;
      }
      // A delete or update of an id another client deleted first: 404 is an answer, not a failure.
      if (response.status !== 200 && !(response.status === 404 && (kind === 'update' || kind === 'delete'))) {
        errors++;
        if (firstErrors.length < 5) firstErrors.push(`${kind} ${response.status} ${text.slice(0, 200)}`);
        return undefined;
      }
      const ms = performance.now() - t0;
      const label = WRITES.has(kind) && isHeavy(user) ? `${kind}@heavy` : kind;
      const list = latencies.get(label) ?? [];
      list.push(ms);
      latencies.set(label, list);
      if (slowest.length < 10 || ms > slowest.at(-1)!.ms) {
        slowest.push({ kind, user, at, ms: Math.round(ms) });
        slowest.sort((a, b) => b.ms - a.ms);
        slowest.length = Math.min(slowest.length, 10);
      }
      return text === '' ? undefined : JSON.parse(text);
    } catch (error) {
      errors++;
      if (firstErrors.length < 5) firstErrors.push(`${kind} ${(error as Error).message}`);
      return undefined;
    }
  }

  const day = Date.UTC(2027, 0, 1);
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const next = mulberry32(77 + c);
      let n = 0;
      while (performance.now() < deadline) {
        let user = userId(Math.floor(next() * users));
        const kind = pickKind(next());
        // Without heavy users no extra draw: the same requests as before the option existed.
        if (heavyUsers > 0 && WRITES.has(kind) && next() < heavyShare)
          user = userId(Math.floor(next() * heavyUsers));
        const mine = added.get(user) ?? [];
        const say = () =>
          Array.from(
            { length: 8 + Math.floor(next() * 16) },
            () => words[Math.floor(next() * words.length)],
          ).join(' ');
        if (kind === 'retrieve') {
          await call(kind, user, 'POST', '/v1/retrieve', {
            user_id: user,
            question: questions[Math.floor(next() * questions.length)],
            k: 10,
            verifiers: 'offline',
          });
        } else if (kind === 'add') {
          const at = new Date(day + (c * 1e6 + n++) * 60_000).toISOString();
          const result = (await call(kind, user, 'POST', '/v1/memories', {
            user_id: user,
            messages: [
              { role: 'user', content: say(), timestamp: at },
              { role: 'assistant', content: say(), timestamp: at },
            ],
          })) as { memory_ids?: string[] } | undefined;
          if (result?.memory_ids) added.set(user, [...mine, ...result.memory_ids]);
        } else if (kind === 'list') {
          await call(kind, user, 'GET', `/v1/memories?user_id=${user}&limit=50`);
        } else if (kind === 'stats') {
          await call(kind, user, 'GET', `/v1/users/${user}`);
        } else if (mine.length > 0) {
          const id = mine[Math.floor(next() * mine.length)]!;
          if (kind === 'update')
            await call(kind, user, 'PATCH', `/v1/memories/${encodeURIComponent(id)}`, {
              user_id: user,
              text: say(),
            });
          else {
            mine.splice(mine.indexOf(id), 1);
            await call(kind, user, 'DELETE', `/v1/memories/${encodeURIComponent(id)}?user_id=${user}`);
          }
        }
      }
    }),
  );
  clearInterval(reporter);
  clearInterval(sampler);
  rss.push({ t: (performance.now() - started) / 60_000, mib: rssMiB(child.pid!) });
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  // After the server's exit: every connection it held should be gone.
  const pgAfterExit = await pgSide?.sample();
  await pgSide?.close();
  if (pgAfterExit !== undefined) console.log(`pg after the server's exit: ${JSON.stringify(pgAfterExit)}`);

  // Least-squares slope of RSS over the second half (the first minutes include warm-up and caches filling).
  const half = rss.filter((s) => s.t >= minutes / 2);
  const mt = half.reduce((s, x) => s + x.t, 0) / half.length;
  const mm = half.reduce((s, x) => s + x.mib, 0) / half.length;
  const slope =
    half.reduce((s, x) => s + (x.t - mt) * (x.mib - mm), 0) / half.reduce((s, x) => s + (x.t - mt) ** 2, 0);
  const gm = await openGraphmemix({ db: file, readonly: true });
  const integrity = await gm.store.integrityCheck();
  await gm.close();
  const summary = {
    users,
    perUser,
    minutes,
    clients,
    rssStartMiB: rss[0]!.mib,
    rssPeakMiB: Math.max(...rss.map((s) => s.mib)),
    rssEndMiB: rss.at(-1)!.mib,
    rssSlopeSecondHalfMiBPerMin: slope,
    firstErrors,
    slowest,
    integrity,
    ...(pgAfterExit === undefined ? {} : { pgAfterExit }),
    perMinute,
  };
  console.log(
    `rss start ${summary.rssStartMiB.toFixed(0)} MiB, peak ${summary.rssPeakMiB.toFixed(0)}, end ${summary.rssEndMiB.toFixed(0)}; second-half slope ${slope.toFixed(2)} MiB/min; integrity ${JSON.stringify(integrity)}`,
  );
  if (firstErrors.length > 0) console.log(`first errors: ${firstErrors.join(' | ')}`);
  console.log(`slowest: ${slowest.map((s) => `${s.kind} ${s.user} ${s.at} ${s.ms} ms`).join(' | ')}`);
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(summary, null, 2));
}

if (!existsSync(resolve(root, 'bin/graphmemix.js'))) throw new Error('run from a graphmemix checkout');
await main();
