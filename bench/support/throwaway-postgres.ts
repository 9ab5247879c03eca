import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

const SCRIPT = join(import.meta.dirname, '..', '..', 'scripts', 'pg-cluster.sh');
const PG_BIN = '/usr/lib/postgresql/15/bin/postgres';

/**
 * A throwaway PostgreSQL cluster for a benchmark (scripts/pg-cluster.sh start/stop), or the reason there is
 * none (not installed, not root). `dir` must be reachable by user postgres (under a mktemp -d).
 */
export function throwawayPostgres(dir: string): { url: string; stop: () => void } | string {
  if (!existsSync(PG_BIN)) return `no PostgreSQL 15 at ${PG_BIN} (scripts/pg-cluster.sh install)`;
  if (process.getuid?.() !== 0) return 'a throwaway cluster needs root (runuser -u postgres); pass --db';
  mkdirSync(dirname(dir), { recursive: true });
  try {
    const url = execFileSync('bash', [SCRIPT, 'start', dir], { encoding: 'utf8', timeout: 120_000 }).trim();
    let stopped = false;
    const stop = () => {
      if (stopped) return;
      stopped = true;
      execFileSync('bash', [SCRIPT, 'stop', dir], { timeout: 60_000 });
    };
    // An interrupted bench (Ctrl-C, kill) must not leave the cluster running: stop it on the way out.
    process.once('exit', stop);
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
    return { url, stop };
  } catch (error) {
    return `could not start a throwaway cluster: ${(error as Error).message}`;
  }
}
