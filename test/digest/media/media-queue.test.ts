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
