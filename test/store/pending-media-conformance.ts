import { expect, it } from 'vitest';
import {
  type ArchiveStore,
  MEDIA_PENDING_KEY,
  type MemoryWrite,
} from '../../src/store/archive-store-spec.ts';

/**
 * Conformance of ArchiveStore.listPendingMedia: the pending media rows of every context, in (context, id)
 * order, paged by `after`; a record leaves the list when it is rewritten without the key or deleted, and
 * with its context. Called from describeStoreConformance, so every backend runs it.
 */
export function pendingMediaConformance(
  store: () => ArchiveStore,
  write: (contextId: string, id: string, text: string, sequence: number) => MemoryWrite,
): void {
  const pending = (contextId: string, id: string, sequence: number, keys = [MEDIA_PENDING_KEY]) => ({
    ...write(contextId, id, `text of ${id}`, sequence),
    contentHash: `hash-${id}-${keys.join(',')}`,
    keys,
  });

  it('lists pending media across contexts by index, in (context, id) order, paged by after', async () => {
    const s = store();
    expect(await s.listPendingMedia({ limit: 10 })).toEqual([]);
    await s.writeMemories('bob', [pending('bob', 'b2', 0), pending('bob', 'b1', 1)]);
    await s.writeMemories('alice', [
      pending('alice', 'a1', 0),
      pending('alice', 'a2', 1, ['turn:s1']),
      pending('alice', 'a3', 2),
    ]);
    await s.writeMemories('carol', [pending('carol', 'c1', 0, [])]);
    const all = [
      { contextId: 'alice', id: 'a1' },
      { contextId: 'alice', id: 'a3' },
      { contextId: 'bob', id: 'b1' },
      { contextId: 'bob', id: 'b2' },
    ];
    expect(await s.listPendingMedia({ limit: 10 })).toEqual(all);
    expect(await s.listPendingMedia({ limit: 2 })).toEqual(all.slice(0, 2));
    expect(await s.listPendingMedia({ limit: 2, after: all[1]! })).toEqual(all.slice(2));
    expect(await s.listPendingMedia({ limit: 10, after: all[3]! })).toEqual([]);
    // Digested (rewritten without the key), deleted, or its context forgotten: no longer pending.
    await s.writeMemories('alice', [pending('alice', 'a1', 0, [])]);
    await s.deleteMemory('bob', 'b1');
    expect(await s.listPendingMedia({ limit: 10 })).toEqual([all[1], all[3]]);
    await s.deleteContext('bob');
    expect(await s.listPendingMedia({ limit: 10 })).toEqual([all[1]]);
  });
}

/**
 * Conformance of ArchiveStore.heldMediaKeys (optional: a backend without it is skipped): which media reference
 * keys any memory of any context holds; a key leaves with the last memory holding it (rewritten, deleted, or
 * its context forgotten); keys outside the `media:` prefix are never held.
 */
export function heldMediaKeysConformance(
  store: () => ArchiveStore,
  write: (contextId: string, id: string, text: string, sequence: number) => MemoryWrite,
): void {
  const keyed = (contextId: string, id: string, sequence: number, keys: string[]) => ({
    ...write(contextId, id, `text of ${id}`, sequence),
    contentHash: `hash-${id}-${keys.join(',')}`,
    keys,
  });

  it('heldMediaKeys: media keys held by a memory of any context, until the last holder goes', async () => {
    const s = store();
    if (s.heldMediaKeys === undefined) return;
    const [shared, own, orphan] = ['media:/m/shared.png', 'media:/m/alice/own.png', 'media:/m/none.png'];
    expect(await s.heldMediaKeys([shared, own])).toEqual(new Set());
    await s.writeMemories('alice', [
      keyed('alice', 'a1', 0, [shared, own]),
      keyed('alice', 'a2', 1, ['turn:s1']),
    ]);
    await s.writeMemories('bob', [keyed('bob', 'b1', 0, [shared])]);
    expect(await s.heldMediaKeys([shared, own, orphan, 'turn:s1'])).toEqual(new Set([shared, own]));
    // Rewritten without the key, then the last holder deleted, then the other's context forgotten.
    await s.writeMemories('alice', [keyed('alice', 'a1', 0, [shared])]);
    expect(await s.heldMediaKeys([shared, own])).toEqual(new Set([shared]));
    await s.deleteMemory('alice', 'a1');
    expect(await s.heldMediaKeys([shared])).toEqual(new Set([shared]));
    await s.deleteContext('bob');
    expect(await s.heldMediaKeys([shared])).toEqual(new Set());
  });
}
