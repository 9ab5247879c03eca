// `npm run bench:serve`: HTTP load on loopback. Builds (or reuses) a generated archive of N memories, starts
// the API in open local mode, runs C concurrent clients calling POST /v1/retrieve (offline verifiers) for a
// bounded duration, and reports throughput, p50/p95/p99 latency and errors (table, or --json).
//   npm run bench:serve -- [--memories 10000] [--clients 16] [--duration 30] [--db file] [--json]
//     [--import-during 10000] [--no-worker]
// With --import-during N, a second phase repeats the load while N memories are imported into another user
// through POST /v1/memories (batches of 1,000) and a prober calls GET /v1/health every 20 ms: the figures
// say whether writes stall reads (target, issue #10: health p99 <= 50 ms, retrieve p95 within 2x of idle).
// Writes run in the write worker as in `graphmemix serve`; --no-worker runs them on the event loop.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openGraphmemix } from '../src/graphmemix.ts';
import type { MemoryRecordInput } from '../src/graphmemix-api.ts';
import { startServer } from '../src/server/start-server.ts';

const USER = 'bench';
const { values } = parseArgs({
  options: {
    memories: { type: 'string', default: '10000' },
    clients: { type: 'string', default: '16' },
    duration: { type: 'string', default: '30' },
    k: { type: 'string', default: '10' },
    db: { type: 'string' },
    json: { type: 'boolean', default: false },
    'import-during': { type: 'string', default: '0' },
    'no-worker': { type: 'boolean', default: false },
  },
});
const memories = positive(values.memories, 'memories');
const clients = positive(values.clients, 'clients');
const durationS = positive(values.duration, 'duration');
const k = positive(values.k, 'k');
const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);

async function main(): Promise<void> {
  const tempDir = values.db ? undefined : await mkdtemp(join(tmpdir(), 'graphmemix-serve-bench-'));
  const dbPath = values.db ?? join(tempDir!, 'bench.db');
  const graphmemix = await openGraphmemix({ db: dbPath, writeWorker: !values['no-worker'] });
  const importDuring = Number(values['import-during']);
  try {
    const existing = existsSync(dbPath) ? await graphmemix.store.countMemories(USER) : 0;
    if (existing < memories) {
      const started = performance.now();
      const records = generateArchive(memories);
      for (let i = 0; i < records.length; i += 1000)
        await graphmemix.addMemories(USER, records.slice(i, i + 1000));
      log(
        `built archive: ${memories} memories in ${((performance.now() - started) / 1000).toFixed(1)} s (${dbPath})`,
      );
    } else log(`reusing archive: ${existing} memories (${dbPath})`);

    const server = await startServer({ graphmemix, open: true, port: 0, host: '127.0.0.1' });
    const questions = QUESTION_TEMPLATES;
    // One warm-up call per client size so lazy index loads do not count as latency.
    await retrieveOnce(server.url, questions[0]!, k);
    const idle = await load(server.url, questions, durationS * 1000);
    const busy = importDuring > 0 ? await loadWhileImporting(server.url, questions, importDuring) : undefined;
    await server.close();

    const rows = [summary('idle', idle), ...(busy ? [summary(`import ${importDuring}`, busy)] : [])];
    if (values.json) process.stdout.write(`${JSON.stringify({ memories, clients, k, rows })}\n`);
    else {
      log('');
      log(
        '| phase | memories | clients | seconds | requests | req/s | p50 ms | p95 ms | p99 ms | max ms | errors | health p99 ms | import s |',
      );
      log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
      for (const row of rows) {
        log(
          `| ${row.phase} | ${memories} | ${clients} | ${row.durationS} | ${row.requests} | ${row.throughputRps} | ` +
            `${row.p50Ms} | ${row.p95Ms} | ${row.p99Ms} | ${row.maxMs} | ${row.errors} | ${row.healthP99Ms} | ${row.importS ?? ''} |`,
        );
        for (const problem of row.firstErrors) log(`error: ${problem}`);
      }
    }
  } finally {
    await graphmemix.close();
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
  }
}

interface LoadResult {
  latencies: number[];
  elapsed: number;
  errors: number;
  firstErrors: string[];
  health: number[];
  importS?: number;
}

/** C clients retrieving until the deadline (or until `until` settles), with a health prober every 20 ms. */
async function load(
  url: string,
  questions: readonly string[],
  durationMs: number,
  until?: Promise<unknown>,
): Promise<LoadResult> {
  const latencies: number[] = [];
  const health: number[] = [];
  let errors = 0;
  const firstErrors: string[] = [];
  let done = false;
  void until?.finally(() => {
    done = true;
  });
  const deadline = performance.now() + durationMs;
  const running = () => !done && (until !== undefined || performance.now() < deadline);
  const started = performance.now();
  const prober = (async () => {
    while (running()) {
      const t0 = performance.now();
      await fetch(`${url}/v1/health`).then((r) => r.text());
      health.push(performance.now() - t0);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      let n = client;
      while (running()) {
        const question = questions[n++ % questions.length]!;
        const t0 = performance.now();
        const problem = await retrieveOnce(url, question, k);
        latencies.push(performance.now() - t0);
        if (problem) {
          errors++;
          if (firstErrors.length < 3) firstErrors.push(problem);
        }
      }
    }),
  );
  await prober;
  return { latencies, elapsed: (performance.now() - started) / 1000, errors, firstErrors, health };
}

/** The same load while `count` memories go into another user through the HTTP add route. */
async function loadWhileImporting(
  url: string,
  questions: readonly string[],
  count: number,
): Promise<LoadResult> {
  const records = generateArchive(count).map((record) => ({ ...record, id: `w${record.id}` }));
  const started = performance.now();
  const importing = (async () => {
    for (let i = 0; i < records.length; i += 1000) {
      const response = await fetch(`${url}/v1/memories`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user_id: `${USER}-writer`, memories: records.slice(i, i + 1000) }),
      });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`import: ${response.status} ${body.slice(0, 200)}`);
    }
    return (performance.now() - started) / 1000;
  })();
  const result = await load(url, questions, Number.POSITIVE_INFINITY, importing);
  result.importS = await importing;
  return result;
}

function summary(phase: string, result: LoadResult) {
  const latencies = [...result.latencies].sort((a, b) => a - b);
  const health = [...result.health].sort((a, b) => a - b);
  return {
    phase,
    durationS: Number(result.elapsed.toFixed(2)),
    requests: latencies.length,
    throughputRps: Number((latencies.length / result.elapsed).toFixed(1)),
    p50Ms: round(percentile(latencies, 0.5)),
    p95Ms: round(percentile(latencies, 0.95)),
    p99Ms: round(percentile(latencies, 0.99)),
    maxMs: round(latencies[latencies.length - 1] ?? 0),
    errors: result.errors,
    firstErrors: result.firstErrors,
    healthP99Ms: round(percentile(health, 0.99)),
    ...(result.importS === undefined ? {} : { importS: round(result.importS) }),
  };
}

async function retrieveOnce(url: string, question: string, k: number): Promise<string | undefined> {
  try {
    const response = await fetch(`${url}/v1/retrieve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: USER, question, k, verifiers: 'offline' }),
    });
    const body = await response.text();
    if (response.status !== 200) return `${response.status} ${body.slice(0, 200)}`;
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * A deterministic synthetic life log: sessions of a few rounds each over ~2 years, drawn from topic
 * vocabularies so that questions hit a few hundred candidates, like a real archive.
 */
function generateArchive(n: number): MemoryRecordInput[] {
  let seed = 42;
  const random = () => {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const out: MemoryRecordInput[] = [];
  const start = Date.UTC(2023, 0, 1);
  for (let i = 0; i < n; i++) {
    const session = Math.floor(i / 8);
    const round = Math.floor((i % 8) / 2);
    const topic = TOPICS[session % TOPICS.length]!;
    const time = new Date(start + session * 3 * 3600_000 + (i % 8) * 60_000).toISOString();
    const text =
      `${pick(PEOPLE)} ${pick(topic.verbs)} the ${pick(topic.nouns)} ${pick(PLACES)} ` +
      `${pick(['on Monday', 'next week', 'after work', 'in the morning', 'at 6pm', 'tomorrow'])}; ` +
      `${pick(topic.nouns)} ${pick(['costs', 'needs', 'was', 'looks'])} ${pick(DETAILS)}.`;
    out.push({
      id: `m${i}`,
      text,
      timestamp: time,
      sessionId: `s${session}`,
      roundId: `s${session}:r${round}`,
      role: i % 2 === 0 ? 'user' : 'assistant',
      speaker: i % 2 === 0 ? 'Sam' : 'assistant',
    });
  }
  return out;
}

function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function round(value: number): number {
  return Number(value.toFixed(1));
}

function positive(value: string | undefined, name: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number`);
  return n;
}

const PEOPLE = ['Sam', 'Marta', 'Joao', 'Priya', 'Leo', 'Ana', 'Chen', 'Omar'];
const PLACES = [
  'in Lisbon',
  'in Porto',
  'at home',
  'at the office',
  'in Sintra',
  'near the river',
  'downtown',
];
const DETAILS = [
  'about 40 euros',
  'two more days',
  'great',
  'a new battery',
  'blue paint',
  'the red folder',
  'a refund',
];
const TOPICS = [
  { verbs: ['booked', 'cancelled', 'moved'], nouns: ['flight', 'hotel', 'train', 'dinner table'] },
  { verbs: ['fixed', 'bought', 'returned'], nouns: ['bike', 'laptop', 'phone', 'kettle'] },
  { verbs: ['planned', 'reviewed', 'presented'], nouns: ['design review', 'budget', 'roadmap', 'offsite'] },
  { verbs: ['cooked', 'tried', 'shared'], nouns: ['recipe', 'soup', 'curry', 'cake'] },
  {
    verbs: ['ran', 'trained', 'signed up for'],
    nouns: ['half marathon', 'yoga class', 'swim lesson', 'hike'],
  },
] as const;
const QUESTION_TEMPLATES = [
  'When did Sam book the flight to Lisbon?',
  'What did Marta say about the design review budget?',
  'Where was the bike fixed and how much did it cost?',
  'Which recipe did Priya share after work?',
  'When is the half marathon and who signed up?',
  'What happened to the hotel booking in Porto?',
  'Who presented the roadmap at the office?',
  'What needs a new battery?',
];

await main();
