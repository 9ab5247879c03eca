import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestItems } from '../../src/digest/ingest.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { sha256File } from '../../src/importers/media-files.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import { writeTextImage } from '../fixtures/media-fixtures.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gmx-legacy-photos-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A memory as the photos importer stored it before content ids. */
async function oldPhoto(
  root: string,
  relativePath: string,
  sha256: string,
  ocr: string,
): Promise<MemoryRecord> {
  return {
    id: `photo:${relativePath}`,
    contextId: 'alice',
    kind: 'photo',
    sequence: 0,
    sourceId: relativePath,
    text: '',
    assets: [
      {
        id: 'photo',
        kind: 'image',
        uri: join(root, relativePath),
        mime: 'image/png',
        sha256,
        derived: { ocr },
      },
    ],
  };
}

describe('photos imported under `photo:<relative path>` ids before content ids', () => {
  it('a re-import of the same folder replaces the old memory of the same file; a changed file stays', async () => {
    const root = join(dir, 'pictures');
    const same = await writeTextImage(join(root, 'trip', 'IMG_0001.png'), 'MUSEUM');
    await writeTextImage(join(root, 'trip', 'IMG_0002.png'), 'BEACH');
    const gm = await openGraphmemix({ db: join(dir, 'old.db') });
    try {
      const old = [
        await oldPhoto(root, 'trip/IMG_0001.png', await sha256File(same), 'MUSEUM'),
        // The file at this path was edited since: another photo now, so its old memory is kept.
        await oldPhoto(root, 'trip/IMG_0002.png', 'f'.repeat(64), 'SUNSET'),
      ];
      await ingestItems(
        gm.store,
        old.map((record) => ({ type: 'record' as const, record, source: { file: 'old' } })),
      );
      const report = await gm.ingest(root, { format: 'media', contextId: 'alice' });
      expect(report.rejected).toEqual([]);
      expect(report.imported).toBe(2);
      expect(report.warnings.filter((w) => /replaces photo:trip\/IMG_0001\.png/.test(w))).toHaveLength(1);
      expect(await gm.getMemory('alice', 'photo:trip/IMG_0001.png')).toBeUndefined();
      expect(await gm.getMemory('alice', 'photo:trip/IMG_0002.png')).toBeDefined();
      expect(await gm.store.countMemories('alice')).toBe(3);
      const hits = await gm.search('alice', 'museum');
      expect(hits.map((hit) => hit.memoryId)).toEqual([`photo:${(await sha256File(same)).slice(0, 24)}`]);
      // Nothing more the second time.
      const again = await gm.ingest(root, { format: 'media', contextId: 'alice' });
      expect([again.imported, again.updated, again.unchanged]).toEqual([0, 0, 2]);
      expect(await gm.store.countMemories('alice')).toBe(3);
    } finally {
      await gm.close();
    }
  });
});
