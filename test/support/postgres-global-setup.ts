import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Vitest globalSetup: the Postgres tests read GRAPHMEMIX_TEST_PG_URL. When it is unset and Postgres 15 is
 * installed here (and we may run it as user postgres), a throwaway cluster is started with
 * scripts/pg-cluster.sh and stopped after the run; otherwise the reason is recorded in
 * GRAPHMEMIX_TEST_PG_SKIP and the Postgres tests skip, printing it.
 */
const PG_BIN = '/usr/lib/postgresql/15/bin/postgres';
const SCRIPT = resolve(import.meta.dirname, '../../scripts/pg-cluster.sh');

export default function setup(): (() => void) | undefined {
  if (process.env.GRAPHMEMIX_TEST_PG_URL) return undefined;
  if (!existsSync(PG_BIN)) {
    process.env.GRAPHMEMIX_TEST_PG_SKIP = `no PostgreSQL 15 at ${PG_BIN} (run scripts/pg-cluster.sh install, or set GRAPHMEMIX_TEST_PG_URL)`;
    return undefined;
  }
  if (process.getuid?.() !== 0) {
    process.env.GRAPHMEMIX_TEST_PG_SKIP =
      'a throwaway cluster needs root (runuser -u postgres); set GRAPHMEMIX_TEST_PG_URL to use a server';
    return undefined;
  }
  const parent = mkdtempSync(join(tmpdir(), 'graphmemix-pg-'));
  const dir = join(parent, 'cluster');
  try {
    const url = execFileSync('bash', [SCRIPT, 'start', dir], { encoding: 'utf8', timeout: 90_000 }).trim();
    process.env.GRAPHMEMIX_TEST_PG_URL = url;
  } catch (error) {
    process.env.GRAPHMEMIX_TEST_PG_SKIP = `could not start a throwaway cluster: ${(error as Error).message}`;
    rmSync(parent, { recursive: true, force: true });
    return undefined;
  }
  return () => {
    try {
      execFileSync('bash', [SCRIPT, 'stop', dir], { timeout: 60_000 });
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  };
}
