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
 * CPU seconds of every process whose command name is `postgres` (the postmaster and its backends). A backend
 * that exits between two samples takes its time with it: benches sample around phases whose pools stay open.
 */
export function postgresCpuSeconds(): number | undefined {
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
      if (stat?.command === 'postgres') total += stat.seconds;
    } catch {
      // the process exited meanwhile
    }
  }
  return total;
}

function parseStat(text: string): { command: string; seconds: number } | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < 0) return undefined;
  // After "pid (comm) ": state is field 3, utime field 14 and stime field 15 (1-based).
  const fields = text.slice(close + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return { command: text.slice(open + 1, close), seconds: (utime + stime) / TICKS };
}
