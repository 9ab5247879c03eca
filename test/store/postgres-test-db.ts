import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach, beforeEach } from 'vitest';

/** The server the Postgres tests use (see test/support/postgres-global-setup.ts), or undefined. */
export const PG_URL = process.env.GRAPHMEMIX_TEST_PG_URL;

/** Why the Postgres tests skip (printed once per file); undefined when they run. */
export const PG_SKIP = PG_URL
  ? undefined
  : (process.env.GRAPHMEMIX_TEST_PG_SKIP ?? 'GRAPHMEMIX_TEST_PG_URL is not set');

const created: string[] = [];

/** The URL of a fresh, empty database on the test server (dropped by dropTestDatabases). */
export async function createTestDatabase(): Promise<string> {
  const name = `gmx_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  created.push(name);
  const url = new URL(PG_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropTestDatabases(): Promise<void> {
  if (!PG_URL || created.length === 0) return;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    for (const name of created.splice(0)) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/**
 * Counts this process's pg round trips (each `client.query` call is one) while each test of the calling file
 * runs: reset before every test, the pg client restored after it.
 */
export function countRoundTrips(): { readonly count: number; reset(): void } {
  let count = 0;
  const original = pg.Client.prototype.query;
  beforeEach(() => {
    count = 0;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      count++;
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
  });
  afterEach(() => {
    pg.Client.prototype.query = original;
  });
  return {
    get count() {
      return count;
    },
    reset() {
      count = 0;
    },
  };
}
