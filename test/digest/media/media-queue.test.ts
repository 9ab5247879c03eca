import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MediaQueue } from '../../../src/digest/media/media-queue.ts';
import {
  type ArchiveStore,
  MEDIA_PENDING_KEY,
  type MemoryWrite,
} from '../../../src/store/archive-store-spec.ts';
import { openStore } from '../../../src/store/open-store.ts';
import type { MemoryRecord } from '../../../src/types/memory-record.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gmx-media-queue-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function memory(contextId: string, id: string, sequence: number, pending: boolean): MemoryWrite {
  const record: MemoryRecord = { id, contextId, kind: 'photo', sequence, text: '', assets: [] };
  if (pending) record.media = { status: 'pending', sourceHash: `src-${id}` };
  return {
    record,
    views: [],
    contentHash: `${id}-${pending}`,
    keys: pending ? [MEDIA_PENDING_KEY] : [],
  };
}

/** Counts every store method the queue calls. */
function spied(store: ArchiveStore): { store: ArchiveStore; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(name), (calls.get(String(name)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls };
}

describe('MediaQueue recovery at open', () => {
  for (const backend of ['memory:', 'sqlite']) {
    it(`finds pending work through listPendingMedia pages, never by listing contexts (${backend})`, async () => {
      const store = await openStore(backend === 'sqlite' ? join(dir, 'queue.db') : backend);
      try {
        // 40 contexts of finished memories, and 300 pending records spread over 3 of them.
        for (let c = 0; c < 40; c++) {
          await store.writeMemories(`ctx${c}`, [memory(`ctx${c}`, 'done', 0, false)]);
        }
        for (const contextId of ['ctx1', 'ctx7', 'ctx30']) {
          await store.writeMemories(
            contextId,
            Array.from({ length: 100 }, (_, i) => memory(contextId, `p${i}`, i + 1, true)),
          );
        }
        const { store: spy, calls } = spied(store);
        const digested: string[] = [];
        const queue = new MediaQueue({
          store: spy,
          digest: async (record) => ({ record, warnings: [] }),
          writeBack: async (record) => {
            digested.push(`${record.contextId}/${record.id}`);
            const { media: _media, ...done } = record;
            await store.writeMemories(record.contextId, [
              { record: done, views: [], contentHash: `${record.id}-done`, keys: [] },
            ]);
          },
        });
        expect(await queue.recover()).toBe(MediaQueue.RECOVER_PAGE);
        await queue.idle();
        await queue.close();
        expect(digested).toHaveLength(300);
        expect(new Set(digested).size).toBe(300);
        expect(calls.get('listContexts')).toBeUndefined();
        expect(calls.get('findByKeys')).toBeUndefined();
        // 300 pending in pages of 256: two reads, whatever the number of contexts.
        expect(calls.get('listPendingMedia')).toBe(2);
        expect(calls.get('getMemory')).toBe(300);
        expect(await store.listPendingMedia({ limit: 10 })).toEqual([]);
      } finally {
        await store.close();
      }
    });
  }

  it('SQLite answers the pending query from the partial index (no scan of memory_keys)', async () => {
    const file = join(dir, 'plan.db');
    const store = await openStore(file);
    await store.writeMemories('a', [memory('a', 'p', 0, true)]);
    await store.close();
    const db = new Database(file, { readonly: true });
    try {
      const plan = db
        .prepare(
          `EXPLAIN QUERY PLAN SELECT context_id AS contextId, memory_id AS id FROM memory_keys
           WHERE key = '${MEDIA_PENDING_KEY}' AND (context_id, memory_id) > (?, ?)
           ORDER BY context_id, memory_id LIMIT ?`,
        )
        .all('', '', 10) as { detail: string }[];
      const details = plan.map((row) => row.detail).join(' | ');
      expect(details).toMatch(/USING (COVERING )?INDEX memory_keys_media_pending/);
      expect(details).not.toMatch(/TEMP B-TREE/);
    } finally {
      db.close();
    }
  });
});

describe('MediaQueue retries', () => {
  /** A memory store with `n` pending records in ctx; writeBack marks them done. */
  async function pendingStore(n: number): Promise<ArchiveStore> {
    const store = await openStore('memory:');
    await store.writeMemories(
      'ctx',
      Array.from({ length: n }, (_, i) => memory('ctx', `p${i}`, i + 1, true)),
    );
    return store;
  }
  const done = (store: ArchiveStore) => async (record: MemoryRecord) => {
    const { media: _media, ...finished } = record;
    await store.writeMemories(record.contextId, [
      { record: finished, views: [], contentHash: `${record.id}-done`, keys: [] },
    ]);
  };
  async function until(holds: () => boolean | Promise<boolean>): Promise<void> {
    for (let waited = 0; !(await holds()); waited += 5) {
      if (waited > 5_000) throw new Error('timed out waiting');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  it('tries a job that threw again after the delay; the record stays pending meanwhile', async () => {
    const store = await pendingStore(3);
    const errors: string[] = [];
    let failures = 2;
    const queue = new MediaQueue({
      store,
      digest: async (record) => ({ record, warnings: [] }),
      writeBack: async (record) => {
        if (record.id === 'p1' && failures-- > 0) throw new Error('database is locked');
        await done(store)(record);
      },
      onError: (contextId, id, error) => errors.push(`${contextId}/${id}: ${(error as Error).message}`),
      retryDelaysMs: [5, 5],
    });
    await queue.recover();
    await queue.idle();
    expect(errors).toEqual(['ctx/p1: database is locked']);
    expect(queue.retriesPlanned()).toBe(1);
    expect((await store.getMemory('ctx', 'p1'))?.media?.status).toBe('pending');
    await until(async () => (await store.listPendingMedia({ limit: 10 })).length === 0);
    await queue.idle();
    expect(errors).toHaveLength(2);
    expect(queue.retriesPlanned()).toBe(0);
    await queue.close();
  });

  it('reads a recovery page that failed again from that page; close drops planned retries', async () => {
    const store = await pendingStore(2);
    let failing = true;
    const flaky = Object.create(store) as ArchiveStore;
    flaky.listPendingMedia = (options) =>
      failing ? Promise.reject(new Error('disk I/O error')) : store.listPendingMedia(options);
    const errors: string[] = [];
    const queue = new MediaQueue({
      store: flaky,
      digest: async (record) => ({ record, warnings: [] }),
      writeBack: done(store),
      onError: (_contextId, _id, error) => errors.push((error as Error).message),
      retryDelaysMs: [5],
    });
    await expect(queue.recover()).rejects.toThrow('disk I/O error');
    expect(queue.retriesPlanned()).toBe(1);
    failing = false;
    await until(async () => (await store.listPendingMedia({ limit: 10 })).length === 0);
    await queue.idle();
    await queue.close();

    // A job failing for good: its retry is planned, and close drops it.
    const stuck = await pendingStore(1);
    const closing = new MediaQueue({
      store: stuck,
      digest: async () => {
        throw new Error('ffmpeg crashed');
      },
      writeBack: done(stuck),
      retryDelaysMs: [20],
    });
    await closing.recover();
    await closing.idle();
    expect(closing.retriesPlanned()).toBe(1);
    await until(() => closing.retriesPlanned() === 0);
    await closing.idle();
    // Past its last retry the job's count is dropped: found again (as the next start finds it), it has its
    // delays again.
    closing.enqueue('ctx', ['p0']);
    await closing.idle();
    expect(closing.retriesPlanned()).toBe(1);
    await closing.close();
    expect(closing.retriesPlanned()).toBe(0);
    expect((await stuck.listPendingMedia({ limit: 10 })).length).toBe(1);
  });
});
