/**
 * The database side of a long run against PostgreSQL (bench/soak-probe.ts): what a server's connections do
 * and what the cluster's processes hold, sampled from a connection of the probe's own (left out of the
 * counts). Growth here with uptime, not with the archive, is a leak: connections never given back, a
 * transaction left open, backends that keep growing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

export interface PgSample {
  /** The database's other connections, by state (active, idle, idle in transaction, ...). */
  connections: Record<string, number>;
  /** Seconds the oldest open transaction of another connection has been open (0: none). */
  oldestTransactionS: number;
  /** WAL the cluster wrote since the previous sample (the first: since the sampler started), in MiB. */
  walMiB: number;
  /** Processes named postgres on this host. */
  postgresProcesses: number;
  /** Their proportional set size in MiB: shared buffers split among the processes that touched them. */
  postgresPssMiB: number;
  /** Their anonymous private memory in MiB (a backend's own caches and work memory; no shared buffers). */
  postgresPrivateMiB: number;
}

/** Memory of the host's postgres processes (/proc/<pid>/smaps_rollup). */
function postgresMemory(): Pick<PgSample, 'postgresProcesses' | 'postgresPssMiB' | 'postgresPrivateMiB'> {
  let processes = 0;
  let pssKb = 0;
  let privateKb = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      processes++;
      pssKb += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
      privateKb += Number(/^Private_Dirty:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
    } catch {
      // the process ended between the listing and the read
    }
  }
  return {
    postgresProcesses: processes,
    postgresPssMiB: Math.round(pssKb / 1024),
    postgresPrivateMiB: Math.round(privateKb / 1024),
  };
}

export function pgSideSampler(url: string): { sample(): Promise<PgSample>; close(): Promise<void> } {
  const client = new pg.Client({ connectionString: url });
  const connected = client.connect();
  const walBytes = async () =>
    Number((await client.query<{ b: string }>('SELECT wal_bytes AS b FROM pg_stat_wal')).rows[0]!.b);
  let walBefore = connected.then(walBytes);
  return {
    async sample() {
      await connected;
      const states = await client.query<{ state: string | null; n: string; oldest: string | null }>(
        `SELECT state, count(*) AS n, max(extract(epoch FROM now() - xact_start)) AS oldest
           FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
          GROUP BY state`,
      );
      const connections: Record<string, number> = {};
      let oldest = 0;
      for (const row of states.rows) {
        connections[row.state ?? 'unknown'] = Number(row.n);
        oldest = Math.max(oldest, Number(row.oldest ?? 0));
      }
      const wal = await walBytes();
      const walMiB = Math.round((wal - (await walBefore)) / 2 ** 20);
      walBefore = Promise.resolve(wal);
      return {
        connections,
        oldestTransactionS: Math.round(oldest * 10) / 10,
        walMiB,
        ...postgresMemory(),
      };
    },
    async close() {
      await connected.catch(() => {});
      await client.end();
    },
  };
}
