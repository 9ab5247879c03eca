import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KEYS_VERSION_META_PREFIX } from '../../src/digest/update-relations.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';

/**
 * Forgetting a user finds the archive's media files its memories reference through their `media:` relation
 * keys (an index range) when the user's keys are current, and by walking its records otherwise (a context
 * written before relation keys version 2). Either way the files only it referenced go, shared ones stay.
 */
const dir = mkdtempSync(join(tmpdir(), 'gm-forget-media-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each([
  ['current keys: read from the media keys', false],
  ['older keys: the records are walked', true],
])('forget finds the media a user referenced (%s)', (name, olderKeys) => {
  it('removes the files only that user referenced, outside its own folder too; keeps shared ones', async () => {
    const root = join(dir, name.replace(/\W+/g, '-'));
    const db = join(root, 'a.db');
    const mediaDir = join(root, 'media');
    // Files in another user's folder and a shared one, the way imports and uploads can leave them.
    mkdirSync(join(mediaDir, 'alice'), { recursive: true });
    const only = join(mediaDir, 'alice', 'bob-only.png');
    const shared = join(mediaDir, 'alice', 'shared.png');
    writeFileSync(only, 'bob only');
    writeFileSync(shared, 'both');
    const gm = await openGraphmemix({ db, mediaDir, readWorkers: false });
    try {
      await gm.addMemories('alice', [
        { id: 'a1', text: 'alice photo', assets: [{ id: 'p', kind: 'image', uri: shared }] },
      ]);
      // 2,100 memories: more than one page of keys; two of them reference the files.
      await gm.addMemories('bob', [
        { id: 'b0', text: 'bob photo', assets: [{ id: 'p', kind: 'image', uri: only }] },
        { id: 'b1', text: 'bob shared photo', assets: [{ id: 'p', kind: 'image', uri: shared }] },
        ...Array.from({ length: 2100 }, (_, i) => ({
          id: `n${i}`,
          text: `bob note ${i}`,
          assets: [{ id: 'p', kind: 'image' as const, uri: only }],
        })),
      ]);
      if (olderKeys) await gm.store.setMeta(`${KEYS_VERSION_META_PREFIX}bob`, undefined);
      let walked = 0;
      const list = gm.store.listMemories.bind(gm.store);
      gm.store.listMemories = (...args) => {
        walked++;
        return list(...args);
      };
      const report = await gm.deleteUser('bob');
      expect(report).toMatchObject({ deleted: true, memories: 2102, mediaFiles: 1 });
      expect(walked > 0).toBe(olderKeys);
      expect(existsSync(only)).toBe(false);
      expect(existsSync(shared)).toBe(true);
    } finally {
      await gm.close();
    }
  }, 60_000);
});
