// Stateless replicas in front of one Postgres archive, for `npm run bench:replicas` and the replica test
// (test/postgres/replicas.test.ts): start N `graphmemix serve --db postgres://…` processes, drive C clients
// adding and retrieving for U users across them with failover (a refused or reset connection, a 5xx, is
// retried on the next replica), SIGKILL one replica mid-load, then check every acknowledged add.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'graphmemix.js');

export interface Replica {
  url: string;
  child: ChildProcess;
  /** SIGKILL: no clean shutdown, in-flight requests die with it. */
  kill(): void;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
}

/** Starts `graphmemix serve --db <url> --open --port 0 --json` and resolves with its address. */
export function startReplica(
  db: string,
  options: { env?: NodeJS.ProcessEnv; mediaDir: string; readWorkers?: number },
): Promise<Replica> {
  const child = spawn(process.execPath, [BIN, 'serve', '--db', db, '--open', '--port', '0', '--json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      GRAPHMEMIX_MEDIA_DIR: options.mediaDir,
      GRAPHMEMIX_READ_WORKERS: String(options.readWorkers ?? 1),
      ...options.env,
    },
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`replica did not start in 120 s: ${stderr}`)), 120_000);
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (!line) return;
      clearTimeout(timer);
      const { url } = JSON.parse(line) as { url: string };
      resolve({
        url,
        child,
        kill: () => child.kill('SIGKILL'),
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`replica exited (${code}) before listening: ${stderr}`));
    });
  });
}

export interface LoadOptions {
  urls: readonly string[];
  clients: number;
  users: readonly string[];
  durationMs: number;
  /** Share of operations that are adds (the rest retrieve); default 0.5. */
  addShare?: number;
  /** Kill this replica (index into urls) after this many ms. */
  kill?: { afterMs: number; replica: number; run: () => void };
  k?: number;
}

export interface LoadReport {
  /** Completed operations (2xx) per second over the run. */
  requestsPerSecond: number;
  completed: number;
  adds: number;
  retrieves: number;
  /** Attempts that failed on one replica and were retried on another. */
  retried: number;
  /** Operations that failed on every replica (after the kill: "errors after failover"). */
  failed: number;
  failedAfterKill: number;
  /** Evidence rows of another user in a retrieve answer (must be 0). */
  crossUserRows: number;
  /** Acknowledged adds per user: ids whose POST answered 2xx. */
  acknowledged: Map<string, string[]>;
  retrieveMs: number[];
  addMs: number[];
  firstErrors: string[];
  seconds: number;
}

const QUESTIONS = [
  'When is the design review?',
  'Where does the flight go?',
  'What did the dentist say?',
  'Which class moved to Friday?',
  'What is the plan for the weekend?',
];
const TOPICS = ['design review', 'flight to Lisbon', 'dentist visit', 'ceramics class', 'weekend hike'];

/** One memory a client adds: unique id per (client, n), text on one of the question topics. */
export function addedMemory(user: string, client: number, n: number) {
  const topic = TOPICS[(client + n) % TOPICS.length]!;
  return {
    id: `${user}-c${client}-n${n}`,
    text: `${user} noted the ${topic} moved to ${['Monday', 'Friday', 'noon'][n % 3]} (client ${client}, note ${n})`,
    timestamp: new Date(Date.UTC(2024, 5, 1) + n * 60_000).toISOString(),
  };
}

/**
 * C clients, each looping over its users: add one memory or retrieve, through the replicas round-robin. A
 * failed attempt (connection refused/reset, 5xx) moves to the next replica, up to one try per replica.
 */
export async function runReplicaLoad(options: LoadOptions): Promise<LoadReport> {
  const live = options.urls.map(() => true);
  const report: LoadReport = {
    requestsPerSecond: 0,
    completed: 0,
    adds: 0,
    retrieves: 0,
    retried: 0,
    failed: 0,
    failedAfterKill: 0,
    crossUserRows: 0,
    acknowledged: new Map(options.users.map((user) => [user, []])),
    retrieveMs: [],
    addMs: [],
    firstErrors: [],
    seconds: 0,
  };
  const started = performance.now();
  const deadline = started + options.durationMs;
  let killed = false;
  const killTimer = options.kill
    ? setTimeout(() => {
        killed = true;
        options.kill!.run();
      }, options.kill.afterMs)
    : undefined;
  const addShare = options.addShare ?? 0.5;
  let turn = 0;

  const send = async (path: string, body: unknown): Promise<unknown> => {
    const first = turn++ % options.urls.length;
    let lastError = '';
    for (let attempt = 0; attempt < options.urls.length; attempt++) {
      const index = (first + attempt) % options.urls.length;
      if (!live[index] && attempt < options.urls.length - 1) continue;
      if (attempt > 0) report.retried++;
      try {
        const response = await fetch(`${options.urls[index]}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(60_000),
        });
        const text = await response.text();
        if (response.ok) return JSON.parse(text);
        lastError = `HTTP ${response.status} ${text.slice(0, 160)}`;
        if (response.status < 500) break;
      } catch (error) {
        // A refused connection marks the replica down for the next operations (they go elsewhere first).
        lastError = String((error as Error).cause ?? error);
        if (/ECONNREFUSED/.test(lastError)) live[index] = false;
      }
    }
    throw new Error(lastError);
  };

  const client = async (c: number) => {
    const mine = options.users.filter((_, i) => i % options.clients === c);
    let n = 0;
    while (performance.now() < deadline) {
      const user = mine[n % mine.length]!;
      const isAdd = (n * 0.618 + c * 0.31) % 1 < addShare;
      const t0 = performance.now();
      try {
        if (isAdd) {
          const memory = addedMemory(user, c, n);
          await send('/v1/memories', { user_id: user, memories: [memory] });
          report.acknowledged.get(user)!.push(memory.id);
          report.addMs.push(performance.now() - t0);
          report.adds++;
        } else {
          const answer = (await send('/v1/retrieve', {
            user_id: user,
            question: QUESTIONS[n % QUESTIONS.length],
            k: options.k ?? 8,
          })) as { evidence: Array<{ memory_id: string }> };
          report.crossUserRows += answer.evidence.filter((e) => !e.memory_id.startsWith(`${user}-`)).length;
          report.retrieveMs.push(performance.now() - t0);
          report.retrieves++;
        }
        report.completed++;
      } catch (error) {
        report.failed++;
        if (killed) report.failedAfterKill++;
        if (report.firstErrors.length < 5) report.firstErrors.push(String(error).slice(0, 300));
      }
      n++;
    }
  };
  await Promise.all(Array.from({ length: options.clients }, (_, c) => client(c)));
  if (killTimer) clearTimeout(killTimer);
  report.seconds = (performance.now() - started) / 1000;
  report.requestsPerSecond = report.completed / report.seconds;
  return report;
}

/**
 * Every acknowledged add is readable afterwards (GET /v1/memories/:id on a surviving replica), and never
 * under another user (404 there). Returns the ids lost and the foreign reads.
 */
export async function verifyAcknowledged(
  url: string,
  acknowledged: ReadonlyMap<string, readonly string[]>,
): Promise<{ checked: number; lost: string[]; foreignReads: number }> {
  const lost: string[] = [];
  let checked = 0;
  let foreignReads = 0;
  const users = [...acknowledged.keys()];
  const jobs = [...acknowledged].flatMap(([user, ids]) => ids.map((id) => ({ user, id })));
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const { user, id } = jobs[next++]!;
      const own = await fetch(
        `${url}/v1/memories/${encodeURIComponent(id)}?user_id=${encodeURIComponent(user)}`,
      );
      await own.text();
      if (own.status !== 200) lost.push(`${user}/${id} (${own.status})`);
      // The same id asked for as the next user must not be found.
      const other = users[(users.indexOf(user) + 1) % users.length]!;
      const foreign = await fetch(
        `${url}/v1/memories/${encodeURIComponent(id)}?user_id=${encodeURIComponent(other)}`,
      );
      await foreign.text();
      if (other !== user && foreign.status !== 404) foreignReads++;
      checked++;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return { checked, lost, foreignReads };
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
