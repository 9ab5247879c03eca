/**
 * `npm run bench:replicas [-- --users 100 --clients 16 --duration 20 --seed 20 --add-share 0.5
 *   --db postgres://… --json]`
 *
 * Stateless replicas on one PostgreSQL archive: `graphmemix serve --db postgres://…` processes (each with its
 * write worker and one read worker), C clients adding one memory or retrieving (offline pipeline) for U users
 * (seeded with --seed memories each), round-robin over the replicas with failover (bench/support/
 * replica-cluster.ts). Phases: the load on 1, 2 and 3 replicas (req/s, retrieve and add p50/p95; scaling
 * ratio to one replica), then 3 replicas with one SIGKILLed a third into the run: acknowledged adds lost
 * (every acknowledged id read back afterwards), cross-user rows, operations failed after the failover.
 *
 * Everything runs on this machine: the replicas, Postgres and the clients share its cores, so the scaling
 * ratio says how much more one machine gets from more processes, not what separate hosts would give.
 * Postgres: --db, else $GRAPHMEMIX_BENCH_PG_URL, else a throwaway cluster (scripts/pg-cluster.sh).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openGraphmemix } from '../src/graphmemix.ts';
import { redactDbUrl } from '../src/store/store-location.ts';
import { localPostmasterPid, postgresCpuSeconds, processCpuSeconds } from './support/process-cpu.ts';
import { chatRecords } from './support/realistic-chat.ts';
import {
  type LoadReport,
  percentile,
  type Replica,
  runReplicaLoad,
  startReplica,
  verifyAcknowledged,
} from './support/replica-cluster.ts';
import { throwawayPostgres } from './support/throwaway-postgres.ts';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '100' },
    clients: { type: 'string', default: '16' },
    duration: { type: 'string', default: '20' },
    seed: { type: 'string', default: '20' },
    'add-share': { type: 'string', default: '0.5' },
    db: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const users = Array.from({ length: Number(values.users) }, (_, i) => `u${String(i).padStart(3, '0')}`);
const clients = Number(values.clients);
const durationMs = Number(values.duration) * 1000;
const seedPerUser = Number(values.seed);
const addShare = Number(values['add-share']);
const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);
const round = (x: number) => Math.round(x * 10) / 10;
const round2 = (x: number) => Math.round(x * 100) / 100;

interface PhaseFigures {
  replicas: number;
  requestsPerSecond: number;
  scaling: number;
  retrieve: { p50: number; p95: number };
  add: { p50: number; p95: number };
  failed: number;
  /**
   * CPU used during the load, in cores (CPU seconds / wall seconds): each replica process (its read and
   * write workers included), all Postgres processes, and this process (the clients).
   */
  cpu: { replicas: Array<number | undefined>; postgres?: number | undefined; clients: number };
}

/** CPU counters at the start of a phase; `cores` turns them into cores used since. */
function cpuSample(pids: number[], postmaster: number | undefined) {
  const wall = performance.now();
  const replicas = pids.map((pid) => processCpuSeconds(pid));
  const postgres = postmaster === undefined ? undefined : postgresCpuSeconds(postmaster);
  const clients = process.cpuUsage();
  return {
    cores(): PhaseFigures['cpu'] {
      const seconds = (performance.now() - wall) / 1000;
      const used = (after: number | undefined, before: number | undefined) =>
        after === undefined || before === undefined ? undefined : round2((after - before) / seconds);
      const own = process.cpuUsage(clients);
      return {
        replicas: pids.map((pid, i) => used(processCpuSeconds(pid), replicas[i])),
        ...(postgres === undefined ? {} : { postgres: used(postgresCpuSeconds(postmaster), postgres) }),
        clients: round2((own.user + own.system) / 1e6 / seconds),
      };
    },
  };
}

function summary(replicas: number, report: LoadReport, base: number, cpu: PhaseFigures['cpu']): PhaseFigures {
  return {
    cpu,
    replicas,
    requestsPerSecond: round(report.requestsPerSecond),
    scaling: Math.round((report.requestsPerSecond / (base || report.requestsPerSecond)) * 100) / 100,
    retrieve: {
      p50: round(percentile(report.retrieveMs, 50)),
      p95: round(percentile(report.retrieveMs, 95)),
    },
    add: { p50: round(percentile(report.addMs, 50)), p95: round(percentile(report.addMs, 95)) },
    failed: report.failed,
  };
}

/** A fresh database per phase: each phase starts from the same seeded archive. */
async function freshDatabase(server: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

async function seed(db: string): Promise<void> {
  const gm = await openGraphmemix({ db });
  try {
    for (const [u, user] of users.entries()) {
      const records = [...chatRecords({ contextId: user, count: seedPerUser, seed: 100 + u })].map(
        (record) => ({
          ...record,
          id: `${user}-${record.id}`,
        }),
      );
      await gm.addMemories(user, records);
    }
  } finally {
    await gm.close();
  }
}

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'graphmemix-replicas-bench-'));
  let cluster: { url: string; stop: () => void } | undefined;
  let server = values.db ?? process.env.GRAPHMEMIX_BENCH_PG_URL;
  const running: Replica[] = [];
  try {
    if (server === undefined) {
      const started = throwawayPostgres(resolve(scratch, 'pg'));
      if (typeof started === 'string') {
        log(`bench:replicas skipped: ${started}`);
        return;
      }
      cluster = started;
      server = started.url;
    }
    log(
      `bench:replicas ${users.length} users (${seedPerUser} memories each), ${clients} clients, ${durationMs / 1000} s per phase, ` +
        `add share ${addShare}; ${availableParallelism()} cores, load average ${loadavg()
          .map((x) => x.toFixed(2))
          .join(' ')}; ${redactDbUrl(server)}`,
    );
    // Postgres CPU is that server's (its postmaster's children), when it runs on this machine.
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    const postmaster = await localPostmasterPid(admin);
    await admin.end();
    const phases: PhaseFigures[] = [];
    for (const n of [1, 2, 3]) {
      const db = await freshDatabase(server, `gmx_replicas_${n}`);
      await seed(db);
      const replicas = await Promise.all(
        Array.from({ length: n }, () => startReplica(db, { mediaDir: join(scratch, 'media') })),
      );
      running.push(...replicas);
      const cpu = cpuSample(
        replicas.map((r) => r.child.pid!),
        postmaster,
      );
      const report = await runReplicaLoad({
        urls: replicas.map((r) => r.url),
        clients,
        users,
        durationMs,
        addShare,
      });
      phases.push(summary(n, report, phases[0]?.requestsPerSecond ?? 0, cpu.cores()));
      log(`  ${n} replica(s): ${JSON.stringify(phases.at(-1))}`);
      await Promise.all(replicas.map((r) => r.stop()));
      running.length = 0;
    }

    const db = await freshDatabase(server, 'gmx_replicas_failover');
    await seed(db);
    const replicas = await Promise.all(
      [0, 1, 2].map(() => startReplica(db, { mediaDir: join(scratch, 'media') })),
    );
    running.push(...replicas);
    const cpu = cpuSample(
      replicas.map((r) => r.child.pid!),
      postmaster,
    );
    const report = await runReplicaLoad({
      urls: replicas.map((r) => r.url),
      clients,
      users,
      durationMs,
      addShare,
      kill: { afterMs: durationMs / 3, replica: 1, run: () => replicas[1]!.kill() },
    });
    const check = await verifyAcknowledged(replicas[0]!.url, report.acknowledged);
    const failover = {
      ...summary(3, report, phases[0]?.requestsPerSecond ?? 0, cpu.cores()),
      acknowledgedAdds: check.checked,
      acknowledgedLost: check.lost.length,
      crossUserRows: report.crossUserRows,
      foreignReads: check.foreignReads,
      retriedAttempts: report.retried,
      errorsAfterFailover: report.failedAfterKill,
      firstErrors: report.firstErrors,
    };
    const load = loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ phases, failover, loadAfter: load }, null, 2)}\n`);
    } else {
      log(
        `\n${'replicas'.padEnd(10)}${'req/s'.padStart(8)}${'x one'.padStart(8)}${'retr p50'.padStart(10)}${'retr p95'.padStart(10)}${'add p50'.padStart(10)}${'add p95'.padStart(10)}${'failed'.padStart(8)}`,
      );
      for (const p of [...phases, { ...failover, replicas: '3 + kill' }]) {
        log(
          `${String(p.replicas).padEnd(10)}${String(p.requestsPerSecond).padStart(8)}${String(p.scaling).padStart(8)}` +
            `${String(p.retrieve.p50).padStart(10)}${String(p.retrieve.p95).padStart(10)}${String(p.add.p50).padStart(10)}` +
            `${String(p.add.p95).padStart(10)}${String(p.failed).padStart(8)}`,
        );
      }
      log(
        '\nCPU during the load, in cores (2 cores = 2.0): replicas each, Postgres (all processes), clients',
      );
      for (const p of [...phases, { ...failover, replicas: '3 + kill' }]) {
        const each = p.cpu.replicas.map((x) => (x === undefined ? '-' : String(x))).join(' + ');
        log(
          `${String(p.replicas).padEnd(10)}replicas ${each}; postgres ${p.cpu.postgres ?? '-'}; clients ${p.cpu.clients}`,
        );
      }
      log(
        `failover: ${failover.acknowledgedAdds} acknowledged adds, lost ${failover.acknowledgedLost}; cross-user rows ${failover.crossUserRows}, ` +
          `foreign reads ${failover.foreignReads}; ${failover.retriedAttempts} attempts retried on another replica; errors after failover ${failover.errorsAfterFailover}`,
      );
      log(`load average after: ${load}`);
    }
  } finally {
    await Promise.allSettled(running.map((r) => r.stop()));
    cluster?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
