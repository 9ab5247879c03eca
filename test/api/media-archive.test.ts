import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestItems } from '../../src/digest/ingest.ts';
import { digestRecordMedia } from '../../src/digest/media/digest-record-media.ts';
import { DEFAULT_MEDIA_LIMITS } from '../../src/digest/media/media-limits.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import { writeTestPdf, writeTextImage, writeVideo } from '../fixtures/media-fixtures.ts';
import { MEDIA_TOOLS, reportMissingMediaTools } from '../support/system-tools.ts';

reportMissingMediaTools('test/api/media-archive.test.ts');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gmx-media-archive-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('one media digest path through the public API', () => {
  it('OCRs an image named by a relative uri in a JSONL file (resolved in that file folder)', async () => {
    const root = join(dir, 'jsonl');
    await writeTextImage(join(root, 'day1', 'pics', 'ticket.png'), 'TICKET 88412');
    await writeFile(
      join(root, 'day1', 'memories.jsonl'),
      `${JSON.stringify({ id: 'm1', assets: [{ id: 'a', kind: 'image', uri: 'pics/ticket.png' }] })}\n`,
    );
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      const report = await gm.ingest(root, { format: 'unified', contextId: 'alice' });
      expect(report.rejected).toEqual([]);
      expect(report.media).toEqual({ pending: 0, done: 1, failed: 0, unchanged: 0 });
      const stored = await gm.getMemory('alice', 'm1');
      expect(stored?.media?.status).toBe('done');
      expect(stored?.assets[0]?.derived?.ocr).toMatch(/TICKET 88412/);
      const hits = await gm.search('alice', 'ticket 88412');
      expect(hits[0]?.memoryId).toBe('m1');
      // Same input again: unchanged, the digest is not redone.
      const again = await gm.ingest(root, { format: 'unified', contextId: 'alice' });
      expect([again.imported, again.updated, again.unchanged]).toEqual([0, 0, 1]);
    } finally {
      await gm.close();
    }
  });

  it('two folders each holding a different IMG_0001.jpg are two memories; a re-import is unchanged', async () => {
    const a = join(dir, 'trips', 'a');
    const b = join(dir, 'trips', 'b');
    await writeTextImage(join(a, 'IMG_0001.png'), 'MUSEUM');
    await writeTextImage(join(b, 'IMG_0001.png'), 'BEACH');
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      const first = await gm.ingest(a, { format: 'media', contextId: 'alice' });
      const second = await gm.ingest(b, { format: 'photos', contextId: 'alice' });
      expect([first.imported, second.imported, second.updated]).toEqual([1, 1, 0]);
      expect(await gm.store.countMemories('alice')).toBe(2);
      const again = await gm.ingest(a, { format: 'media', contextId: 'alice' });
      expect([again.imported, again.updated, again.unchanged]).toEqual([0, 0, 1]);
    } finally {
      await gm.close();
    }
  });

  it.skipIf(!MEDIA_TOOLS.ffmpeg || !MEDIA_TOOLS.poppler)(
    'a video frame and a PDF page answer questions as evidence; frames go to the reader packet',
    async () => {
      const root = join(dir, 'evidence');
      await writeVideo(join(root, 'media', 'boarding.mp4'), {
        text: 'GATE B12',
        seconds: 2,
        createdAt: '2024-06-03T10:15:00Z',
      });
      await writeTestPdf(join(root, 'docs', 'lease.pdf'), {
        title: 'Lease agreement',
        pages: [['Lease for the flat at Rua Augusta 12'], ['Monthly rent: 950 EUR, due on the 5th']],
      });
      await writeFile(join(root, 'docs', 'notes.md'), '# Packing list\n\nPassport, charger, sunscreen\n');
      const gm = await openGraphmemix({ db: ':memory:' });
      try {
        const media = await gm.ingest(join(root, 'media'), { format: 'media', contextId: 'alice' });
        const docs = await gm.ingest(join(root, 'docs'), { format: 'documents', contextId: 'alice' });
        // lease.pdf: the document and its 2 pages; notes.md: the document and its one section.
        expect([media.media?.done, docs.media?.done, docs.imported]).toEqual([1, 1, 5]);

        const video = await gm.retrieve('alice', 'Which gate was on the screen, B12?');
        const top = video.evidence[0]!;
        expect(top.memoryId).toMatch(/^video:/);
        expect(top.media.filter((m) => m.kind === 'frame')).toHaveLength(8);
        // Found through its frames' OCR (the frame views, and the video's OCR view that joins them).
        const origin = video.pool.find((c) => c.memoryId === top.memoryId)?.origin;
        expect(origin?.kind === 'seed' && ['frame', 'ocr'].includes(origin.bestView)).toBe(true);

        const lease = await gm.retrieve('alice', 'What is the monthly rent in EUR?');
        const doc = lease.evidence[0]!;
        // Page 2 is a memory of its own: the evidence is that page, not the whole document.
        expect(doc.memoryId).toMatch(/^document:[0-9a-f]{24}:p0002$/);
        expect(lease.packetText).toMatch(/950 EUR/);
        const record = await gm.getMemory('alice', doc.memoryId);
        expect(record?.metadata?.document).toMatchObject({ title: 'Lease agreement', page: 2, part: 2 });
        const documentId = doc.memoryId.replace(/:p0002$/, '');
        expect((await gm.getMemory('alice', documentId))?.metadata?.document).toMatchObject({
          title: 'Lease agreement',
          pages: 2,
          parts: 2,
        });
      } finally {
        await gm.close();
      }
    },
  );

  it('background digest: the write returns pending, the queue finishes it and updates the views', async () => {
    const uploads = join(dir, 'bg');
    const image = await writeTextImage(join(uploads, 'alice', 'receipt.png'), 'RECEIPT 5521');
    const gm = await openGraphmemix({ db: join(dir, 'bg.db'), mediaDir: uploads, mediaDigest: 'background' });
    try {
      const report = await gm.addMemories('alice', [
        { id: 'r1', assets: [{ id: 'img', kind: 'image', uri: image }] },
      ]);
      expect(report.media).toEqual({ pending: 1, done: 0, failed: 0, unchanged: 0 });
      expect((await gm.search('alice', 'receipt 5521')).map((hit) => hit.memoryId)).not.toContain('r1');
      await gm.waitForMedia();
      const stored = await gm.getMemory('alice', 'r1');
      expect(stored?.media?.status).toBe('done');
      expect((await gm.search('alice', 'receipt 5521'))[0]?.memoryId).toBe('r1');
    } finally {
      await gm.close();
    }
  });

  it('background digest inside the write worker (the server setup): waitForMedia crosses the thread', async () => {
    const uploads = join(dir, 'worker');
    const image = await writeTextImage(join(uploads, 'carol', 'note.png'), 'LOCKER 31');
    const gm = await openGraphmemix({
      db: join(dir, 'worker.db'),
      mediaDir: uploads,
      mediaDigest: 'background',
      writeWorker: true,
    });
    try {
      const report = await gm.addMemories('carol', [
        { id: 'n1', assets: [{ id: 'img', kind: 'image', uri: image }] },
      ]);
      expect(report.media?.pending).toBe(1);
      await gm.waitForMedia();
      const stored = await gm.getMemory('carol', 'n1');
      expect(stored?.media?.status).toBe('done');
      expect(stored?.assets[0]?.derived?.ocr).toMatch(/LOCKER 31/);
    } finally {
      await gm.close();
    }
  });

  it('pending media work survives a restart (found again by its key, digested at the next open)', async () => {
    const uploads = join(dir, 'crash');
    const image = await writeTextImage(join(uploads, 'bob', 'sign.png'), 'EXIT 9');
    const db = join(dir, 'crash.db');
    // A process that stored the record and died before its queue ran: pending in the file, nothing queued.
    const store = await openStore(db);
    const stored = await ingestItems(
      store,
      [
        {
          type: 'record',
          record: { id: 's1', assets: [{ id: 'img', kind: 'image', uri: image }] } as unknown as MemoryRecord,
          source: { file: 't' },
        },
      ],
      {
        contextId: 'bob',
        media: {
          mode: 'background',
          digest: (r) => digestRecordMedia(r, { derivedDir: uploads, limits: DEFAULT_MEDIA_LIMITS }),
        },
      },
    );
    expect(stored.media?.pending).toBe(1);
    await store.close();

    const gm = await openGraphmemix({ db, mediaDir: uploads, mediaDigest: 'background' });
    try {
      await gm.waitForMedia();
      const record = await gm.getMemory('bob', 's1');
      expect(record?.media).toMatchObject({ status: 'done', sourceHash: expect.any(String) });
      expect(record?.assets[0]?.derived?.ocr).toMatch(/EXIT 9/);
    } finally {
      await gm.close();
    }
  });

  it('a malformed video is stored with media.status failed and its error, never a crash', async () => {
    const root = join(dir, 'bad');
    await mkdir(root, { recursive: true });
    await writeFile(join(root, 'broken.mp4'), Buffer.alloc(2048, 1));
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      const report = await gm.ingest(root, { format: 'media', contextId: 'alice' });
      expect(report.media).toEqual({ pending: 0, done: 0, failed: 1, unchanged: 0 });
      const [record] = await gm.store.listMemories('alice', { limit: 5 });
      expect(record?.media).toMatchObject({ status: 'failed', error: expect.stringMatching(/ffprobe/) });
      // A failed digest is tried again on the next import (a tool may have been installed since); the same
      // failure writes nothing.
      const again = await gm.ingest(root, { format: 'media', contextId: 'alice' });
      expect([again.imported, again.updated, again.unchanged, again.media?.failed]).toEqual([0, 0, 1, 1]);
    } finally {
      await gm.close();
    }
  });
});
