// `npm run bench:serve`: HTTP load on loopback. Builds (or reuses) a generated archive of N memories, starts
// the API in open local mode, runs C concurrent clients calling POST /v1/retrieve (offline verifiers) for a
// bounded duration, and reports throughput, p50/p95/p99 latency and errors (table, or --json).
//   npm run bench:serve -- [--memories 10000] [--clients 16] [--duration 30] [--db file] [--json]
//     [--import-during 10000] [--no-worker] [--read-workers N]
// With --import-during N, a second phase repeats the load while N memories are imported into another user
// through POST /v1/memories (batches of 1,000) and a prober calls GET /v1/health every 20 ms: the figures
// say whether writes stall reads (target, issue #10: health p99 <= 50 ms, retrieve p95 within 2x of idle).
// Writes run in the write worker and questions in the read worker pool, as in `graphmemix serve`
// (--read-workers N sizes the pool, default one per core but one, at most 8); --no-worker runs both on the event loop.
// 503s (BUSY: the question queue is full) are counted apart from errors; "resets" are failed connections.
// Each phase's clients, prober and importer run in a child process (bench/support/serve-load-client.ts), so
// the server's event loop carries only the server's work (the cores are still shared).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openGraphmemix } from '../src/graphmemix.ts';
import { readPoolOf } from '../src/read-workers/with-read-workers.ts';
import { startServer } from '../src/server/start-server.ts';
import { generateArchive, type LoadResult, retrieveOnce, USER } from './support/serve-load.ts';

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
    'read-workers': { type: 'string' },
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
  const readWorkers = values['no-worker']
    ? false
    : values['read-workers'] === undefined
      ? true
      : Number(values['read-workers']);
  const graphmemix = await openGraphmemix({ db: dbPath, writeWorker: !values['no-worker'], readWorkers });
  const pool = readPoolOf(graphmemix);
  log(`read workers: ${pool ? pool.size : 'none (event loop)'}`);
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
    // The build's automatic compaction (and any after-write drains) settled first: the idle phase measures an
    // idle archive, and the import phase does not share the writer with it (round 36: idle ran 85-145 req/s
    // during that compaction against 325-339 after it).
    const settling = performance.now();
    await graphmemix.waitForCompactions();
    log(`background relation work settled in ${((performance.now() - settling) / 1000).toFixed(1)} s`);

    const server = await startServer({ graphmemix, open: true, port: 0, host: '127.0.0.1' });
    // Warm-up calls reaching every read worker, so lazy index loads (one per connection) are not latency.
    await Promise.all(
      Array.from({ length: (pool?.size ?? 1) * 2 }, () =>
        retrieveOnce(server.url, 'When did Sam book the flight to Lisbon?', k),
      ),
    );
    // The server's event-loop delay per phase: how long its loop was blocked, apart from the CPU the
    // clients and other processes take (health latency includes both).
    const phase = async (args: string[]) => {
      const loop = monitorEventLoopDelay({ resolution: 5 });
      loop.enable();
      const result = await clientProcess([
        `--url`,
        server.url,
        '--clients',
        String(clients),
        '--k',
        String(k),
        ...args,
      ]);
      loop.disable();
      return { ...result, loopP99Ms: loop.percentile(99) / 1e6, loopMaxMs: loop.max / 1e6 };
    };
    const idle = await phase(['--duration-ms', String(durationS * 1000)]);
    const busy = importDuring > 0 ? await phase(['--import', String(importDuring)]) : undefined;
    await server.close();

    const rows = [summary('idle', idle), ...(busy ? [summary(`import ${importDuring}`, busy)] : [])];
    if (values.json) process.stdout.write(`${JSON.stringify({ memories, clients, k, rows })}\n`);
    else {
      log('');
      log(
        '| phase | memories | clients | seconds | answered | req/s | p50 ms | p95 ms | p99 ms | max ms | 503 | errors | resets | health n | health p50 ms | health p99 ms | health max ms | loop p99 ms | loop max ms | import s |',
      );
      log(
        '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      );
      for (const row of rows) {
        log(
          `| ${row.phase} | ${memories} | ${clients} | ${row.durationS} | ${row.requests} | ${row.throughputRps} | ` +
            `${row.p50Ms} | ${row.p95Ms} | ${row.p99Ms} | ${row.maxMs} | ${row.busy} | ${row.errors} | ${row.resets} | ` +
            `${row.healthCount} | ${row.healthP50Ms} | ${row.healthP99Ms} | ${row.healthMaxMs} | ${row.loopP99Ms} | ${row.loopMaxMs} | ${row.importS ?? ''} |`,
        );
        for (const problem of row.firstErrors) log(`error: ${problem}`);
      }
    }
  } finally {
    await graphmemix.close();
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
  }
}

/**
 * One load phase in its own process (the same tsx loader flags), so the clients' request and JSON work does
 * not run on the server's event loop and the health figures measure the server alone.
 */
function clientProcess(args: string[]): Promise<LoadResult> {
  const script = fileURLToPath(new URL('./support/serve-load-client.ts', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, script, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(JSON.parse(out) as LoadResult);
      else reject(new Error(`load client exited with code ${code}`));
    });
  });
}

function summary(phase: string, result: LoadResult & { loopP99Ms: number; loopMaxMs: number }) {
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
    busy: result.busy,
    errors: result.errors,
    resets: result.resets,
    firstErrors: result.firstErrors,
    healthCount: health.length,
    healthP50Ms: round(percentile(health, 0.5)),
    healthP99Ms: round(percentile(health, 0.99)),
    healthMaxMs: round(health[health.length - 1] ?? 0),
    loopP99Ms: round(result.loopP99Ms),
    loopMaxMs: round(result.loopMaxMs),
    ...(result.importS === undefined ? {} : { importS: round(result.importS) }),
  };
}

/** 'ok', 'busy' (503), `reset: ...` (no HTTP answer) or a description of the error answer. */
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

await main();
