import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { createMediaFolder } from '../../src/store/media-folder.ts';
import { HELD_MEDIA_KEY_SQL } from '../../src/store/sqlite-relation-keys.ts';

const dir = mkdtempSync(join(tmpdir(), 'gmx-held-media-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a delete asks whether its files are still referenced without walking the users', () => {
  it('SQLite answers from the partial index of media keys (one probe, no scan of memory_keys)', async () => {
    const file = join(dir, 'plan.db');
    const gm = await openGraphmemix({ db: file });
    await gm.addMemories('alice', [{ id: 'a', text: 'a note' }]);
    await gm.close();
    const db = new Database(file, { readonly: true });
    try {
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${HELD_MEDIA_KEY_SQL}`).all('media:/x.png') as {
        detail: string;
      }[];
      const details = plan.map((row) => row.detail).join(' | ');
      expect(details).toMatch(/USING (COVERING )?INDEX memory_keys_media_refs/);
      expect(details).not.toMatch(/SCAN/);
    } finally {
      db.close();
    }
  });

  it('removeUnreferenced lists no contexts when the store answers heldMediaKeys, and keeps shared files', async () => {
    const mediaDir = join(dir, 'archive.db.media');
    const gm = await openGraphmemix({ db: join(dir, 'archive.db'), mediaDir });
    try {
      mkdirSync(join(mediaDir, 'alice'), { recursive: true });
      const shared = join(mediaDir, 'alice', 'shared.png');
      const own = join(mediaDir, 'alice', 'own.png');
      writeFileSync(shared, 'shared');
      writeFileSync(own, 'own');
      await gm.addMemories('alice', [
        { id: 'a1', text: 'photo', assets: [{ id: 'p', kind: 'image', uri: own }] },
      ]);
      // Another user references the same file (possible through the library or an import).
      await gm.addMemories('bob', [
        { id: 'b1', text: 'photo', assets: [{ id: 'p', kind: 'image', uri: shared }] },
      ]);
      for (let i = 0; i < 20; i++) await gm.addMemories(`user${i}`, [{ id: 'x', text: `note ${i}` }]);
      const store = gm.store as ArchiveStore;
      let listed = 0;
      const counting = new Proxy(store, {
        get(target, name, receiver) {
          if (name === 'listContexts') listed++;
          const value = Reflect.get(target, name, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const folder = createMediaFolder(mediaDir);
      // Both are referenced (own.png by alice's a1, shared.png by bob's b1): nothing goes.
      expect(await folder.removeUnreferenced(counting, [shared, own])).toBe(0);
      expect(listed).toBe(0);
      // Without a1, own.png is referenced by no one; shared.png still by bob.
      await gm.store.deleteMemory('alice', 'a1');
      expect(await folder.removeUnreferenced(counting, [shared, own])).toBe(1);
      expect(listed).toBe(0);
      expect(existsSync(own)).toBe(false);
      expect(existsSync(shared)).toBe(true);
    } finally {
      await gm.close();
    }
  });
});
