import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterAll, expect, it } from 'vitest';
import type { IngestReport } from '../../src/digest/ingest-report.ts';
import { mediaAccessPolicy } from '../../src/providers/to-image-url.ts';
import { openStore } from '../../src/store/open-store.ts';
import { WRITE_WORKER_EARLY_DEATHS, WriteWorkerClient } from '../../src/write-worker/write-worker-client.ts';

/**
 * A write worker that dies while running fails the calls in flight and is replaced, so the process's later
 * writes go on (src/write-worker/write-worker-client.ts); a replacement that cannot open the archive is given
 * up after WRITE_WORKER_EARLY_DEATHS tries.
 */
const dir = mkdtempSync(join(tmpdir(), 'gm-write-worker-replaced-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const notes = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    id: `m${from + i}`,
    text: `note ${from + i} about the harbour walk number ${(from + i) % 31}`,
  }));

/** Ends the client's current worker as an uncaught error in it would (exit code 1). */
const crash = (client: WriteWorkerClient) => (client as unknown as { worker: Worker }).worker.terminate();

it('a worker that dies fails the call in flight, is replaced, and later writes go on', async () => {
  const db = join(dir, 'a.db');
  const client = new WriteWorkerClient({ db, mediaPolicy: mediaAccessPolicy() });
  await client.started();
  const first = await client.call<IngestReport>('addMemories', ['alice', notes(0, 10)]);
  expect(first.imported).toBe(10);

  const inFlight = client.call<IngestReport>('addMemories', ['alice', notes(10, 3000)]);
  await crash(client);
  await expect(inFlight).rejects.toMatchObject({ code: 'STORE', message: 'write worker exited with code 1' });
  expect(client.replaced).toBe(1);

  // The replacement opens the archive: the next write, and the one that failed sent again, go through.
  const again = await client.call<IngestReport>('addMemories', ['alice', notes(10, 3000)]);
  expect(again.rejected).toEqual([]);
  await client.close();
  const store = await openStore(db, { readonly: true });
  try {
    expect(await store.countMemories('alice')).toBe(3010);
    expect((await store.integrityCheck()).ok).toBe(true);
  } finally {
    await store.close();
  }
}, 60_000);

it('a replacement that cannot open the archive is given up after a few tries; close is not a crash', async () => {
  const db = join(dir, 'b.db');
  const client = new WriteWorkerClient({ db, mediaPolicy: mediaAccessPolicy() });
  await client.started();
  await client.call('addMemories', ['bob', notes(0, 5)]);
  // The archive is gone and a folder stands at its path: no worker can open it again.
  renameSync(db, `${db}.moved`);
  mkdirSync(db);
  await crash(client);
  await expect(client.call('addMemories', ['bob', notes(5, 5)])).rejects.toMatchObject({ code: 'STORE' });
  expect(client.replaced).toBe(1);
  expect(WRITE_WORKER_EARLY_DEATHS).toBe(3);

  // A closed client's worker ends with code 0 and is not replaced.
  const other = new WriteWorkerClient({ db: join(dir, 'c.db'), mediaPolicy: mediaAccessPolicy() });
  await other.started();
  await other.close();
  expect(other.replaced).toBe(0);
  await expect(other.call('addMemories', ['cy', notes(0, 1)])).rejects.toMatchObject({
    message: 'write worker is closed',
  });
}, 60_000);
