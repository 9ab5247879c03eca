// CPU time of processes, for benches that report what limits them (bench:replicas). Linux /proc only;
// elsewhere every figure is undefined and the bench prints "-".
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS = 100;

/** user + system CPU seconds of a process (all its threads: Node's workers included), or undefined. */
export function processCpuSeconds(pid: number): number | undefined {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.seconds;
  } catch {
    return undefined;
  }
}

/**
 * user + system CPU seconds of this process's main thread (its JavaScript), without V8's helper threads
 * (parallel scavenges, concurrent marking and compilation), or undefined off Linux.
 */
export function mainThreadCpuSeconds(): number | undefined {
  try {
    return parseStat(readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8'))?.seconds;
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds of one PostgreSQL server: the postmaster `postmasterPid` and its children (backends,
 * autovacuum, writers). Without a pid, every process named `postgres` (other servers on the machine too). A
 * backend that exits between two samples takes its time with it: benches sample around phases whose pools
 * stay open.
 */
export function postgresCpuSeconds(postmasterPid?: number): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  let total = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = parseStat(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      if (stat?.command !== 'postgres') continue;
      if (postmasterPid === undefined || stat.pid === postmasterPid || stat.parent === postmasterPid) {
        total += stat.seconds;
      }
    } catch {
      // the process exited meanwhile
    }
  }
  return total;
}

/** The postmaster of the server behind `client` when it runs on this machine (the parent of its backend). */
export async function localPostmasterPid(client: {
  query(text: string): Promise<{ rows: Array<{ pid: number }> }>;
}): Promise<number | undefined> {
  try {
    const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
    return parseStat(readFileSync(`/proc/${rows[0]!.pid}/stat`, 'utf8'))?.parent;
  } catch {
    return undefined;
  }
}

function parseStat(
  text: string,
): { pid: number; parent: number; command: string; seconds: number } | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < 0) return undefined;
  // After "pid (comm) ": state is field 3, utime field 14 and stime field 15 (1-based).
  const fields = text.slice(close + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return {
    pid: Number(text.slice(0, open)),
    parent: Number(fields[1]),
    command: text.slice(open + 1, close),
    seconds: (utime + stime) / TICKS,
  };
}
