import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestRecordMedia } from '../../src/digest/media/digest-record-media.ts';
import { STRIP_HEIGHT, THUMBNAIL_EDGE } from '../../src/digest/media/image-tools.ts';
import { DEFAULT_MEDIA_LIMITS } from '../../src/digest/media/media-limits.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createServer } from '../../src/server/create-server.ts';
import { encodeMediaRef } from '../../src/server/media-ref.ts';
import { writeTestPdf, writeTextImage, writeVideo } from '../fixtures/media-fixtures.ts';
import { MEDIA_TOOLS, reportMissingMediaTools } from '../support/system-tools.ts';

reportMissingMediaTools('test/server/stored-thumbnails.test.ts');
/** Every test here digests a generated video (and PDF): without the tools the file skips. */
const TOOLS = MEDIA_TOOLS.ffmpeg && MEDIA_TOOLS.poppler;

const KEY = 'alice-key';
let dir: string;
let mediaDir: string;
let gm: Graphmemix;
let app: ReturnType<typeof createServer>;
const auth = { authorization: `Bearer ${KEY}` };

beforeAll(async () => {
  if (!TOOLS) return;
  dir = await mkdtemp(join(tmpdir(), 'gmx-thumbs-'));
  mediaDir = join(dir, 'media');
  const photos = join(dir, 'photos');
  await writeTextImage(join(photos, 'sign.png'), 'TRAM 28');
  await writeVideo(join(photos, 'board.mp4'), { text: 'GATE B12', seconds: 2 });
  await writeTestPdf(join(dir, 'docs', 'scan.pdf'), { pages: [{ imageText: 'INVOICE 4471' }] });
  gm = await openGraphmemix({ db: join(dir, 'a.db'), mediaDir });
  await gm.ingest(photos, { format: 'media', contextId: 'alice' });
  await gm.ingest(join(dir, 'docs'), { format: 'documents', contextId: 'alice' });
  app = createServer({ graphmemix: gm, apiKeys: [`${KEY}=alice`], mediaDir });
}, 120_000);
afterAll(async () => {
  await gm?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function memoryOfKind(kind: string) {
  const { memories } = await gm.listMemories('alice', { limit: 50 });
  for (const record of memories) {
    if (record.kind === kind && record.assets.some((a) => a.thumbnail !== undefined)) return record;
  }
  throw new Error(`no ${kind} with a thumbnail`);
}

describe.skipIf(!TOOLS)('thumbnails and frame strips stored by the media digest', () => {
  it('made once at digest time in the media folder: an image thumbnail, a video strip, a page thumbnail', async () => {
    const photo = await memoryOfKind('photo');
    const thumb = photo.assets[0]!.thumbnail!;
    expect(thumb.startsWith(mediaDir)).toBe(true);
    const meta = await sharp(thumb).metadata();
    expect([meta.format, Math.max(meta.width!, meta.height!)]).toEqual(['jpeg', THUMBNAIL_EDGE]);

    const video = await memoryOfKind('video');
    const strip = await sharp(video.assets[0]!.thumbnail!).metadata();
    expect(strip.height).toBe(STRIP_HEIGHT);
    // Eight 16:9-ish frames side by side.
    expect(strip.width!).toBeGreaterThan(STRIP_HEIGHT * 8);

    const page = await memoryOfKind('document');
    expect(page.assets[0]?.thumbnail).toMatch(/page-1\.thumb\.jpg$/);

    // Stored once: a re-import is unchanged (no digest), and digesting the same content again in the same
    // context finds the stored files and does not write them again.
    const before = [(await stat(thumb)).mtimeMs, (await stat(video.assets[0]!.thumbnail!)).mtimeMs];
    const again = await gm.ingest(join(dir, 'photos'), { format: 'media', contextId: 'alice' });
    expect(again.unchanged).toBe(2);
    const limits = { ...DEFAULT_MEDIA_LIMITS };
    for (const record of [photo, video]) {
      const { thumbnail: _t, ...asset } = record.assets[0]!;
      const redo = await digestRecordMedia({ ...record, assets: [asset] }, { derivedDir: mediaDir, limits });
      expect(redo.record.assets[0]!.thumbnail).toBe(record.assets[0]!.thumbnail);
    }
    expect([(await stat(thumb)).mtimeMs, (await stat(video.assets[0]!.thumbnail!)).mtimeMs]).toEqual(before);
  });

  it('GET /v1/media ?size=thumb serves the stored thumbnail and the stored strip byte for byte', async () => {
    const photo = await memoryOfKind('photo');
    const video = await memoryOfKind('video');
    for (const record of [photo, video]) {
      const ref = encodeMediaRef({ memoryId: record.id, assetId: record.assets[0]!.id });
      const response = await app.request(`/v1/media/${ref}?user_id=alice&size=thumb`, { headers: auth });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/jpeg');
      const body = Buffer.from(await response.arrayBuffer());
      expect(body.equals(await readFile(record.assets[0]!.thumbnail!))).toBe(true);
    }
  });

  it('the viewer shows a video as its frame strip with the frame times', async () => {
    const response = await app.request('/view?user_id=alice&q=gate+b12', { headers: auth });
    expect(response.status).toBe(200);
    const html = await response.text();
    const figure =
      /<figure class="frame-strip"[^>]*><img class="strip"[^>]* src="([^"]+)"><figcaption>([^<]*)</.exec(
        html,
      );
    expect(figure).not.toBeNull();
    expect(figure![2]).toMatch(/^0\.1 s · 0\.4 s/);
    const src = figure![1]!.replace(/&amp;/g, '&');
    const strip = await app.request(src);
    expect([strip.status, strip.headers.get('content-type')]).toEqual([200, 'image/jpeg']);
  });

  it('a client cannot name a thumbnail: 400 naming the field, nothing stored', async () => {
    const photo = await memoryOfKind('photo');
    const response = await app.request('/v1/memories', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        user_id: 'alice',
        memories: [
          {
            id: 'evil',
            text: 'x',
            assets: [
              { kind: 'image', uri: 'https://example.org/a.png', thumbnail: photo.assets[0]!.thumbnail },
            ],
          },
        ],
      }),
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('memories[0].assets[0].thumbnail');
    expect(await gm.getMemory('alice', 'evil')).toBeUndefined();
  });

  it('forgetting the memory removes its stored thumbnail', async () => {
    const photo = await memoryOfKind('photo');
    const thumb = photo.assets[0]!.thumbnail!;
    await gm.deleteMemory('alice', photo.id);
    await expect(stat(thumb)).rejects.toThrow();
  });
});
