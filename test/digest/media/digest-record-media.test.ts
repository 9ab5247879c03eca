import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildViews } from '../../../src/digest/build-views.ts';
import { type BoundedOcr, createBoundedOcr } from '../../../src/digest/media/bounded-ocr.ts';
import {
  digestRecordMedia,
  type MediaDigestDeps,
  PHOTO_CAPTION_PROMPT,
} from '../../../src/digest/media/digest-record-media.ts';
import { runTool } from '../../../src/digest/media/external-tool.ts';
import { ocrReadyPng, thumbnailJpeg } from '../../../src/digest/media/image-tools.ts';
import { DEFAULT_MEDIA_LIMITS, type MediaLimits } from '../../../src/digest/media/media-limits.ts';
import { frameTimes, parseIso6709 } from '../../../src/digest/media/read-video.ts';
import { createTesseractOcr } from '../../../src/importers/ocr/tesseract-ocr.ts';
import type { ChatModel, ChatRequest } from '../../../src/providers/model-spec.ts';
import type { MemoryRecord } from '../../../src/types/memory-record.ts';
import { writeTestPdf, writeTextImage, writeVideo } from '../../fixtures/media-fixtures.ts';
import { MEDIA_TOOLS, reportMissingMediaTools } from '../../support/system-tools.ts';

reportMissingMediaTools('test/digest/media/digest-record-media.test.ts');

let dir: string;
let ocr: BoundedOcr;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gmx-media-digest-'));
  ocr = createBoundedOcr(() => createTesseractOcr(), 60_000);
});
afterAll(async () => {
  await ocr.terminate();
  await rm(dir, { recursive: true, force: true });
});

const deps = (limits: Partial<MediaLimits> = {}, extra: Partial<MediaDigestDeps> = {}): MediaDigestDeps => ({
  ocr,
  derivedDir: join(dir, 'derived'),
  limits: { ...DEFAULT_MEDIA_LIMITS, ...limits },
  ...extra,
});

function recordWith(kind: MemoryRecord['kind'], asset: MemoryRecord['assets'][number]): MemoryRecord {
  return { id: 'r1', contextId: 'alice', kind, sequence: 0, text: '', assets: [asset] };
}

describe('digestRecordMedia', () => {
  it.skipIf(!MEDIA_TOOLS.ffmpeg)(
    'video: duration, creation time and place from the container, 8 uniform frames with times and OCR',
    async () => {
      const file = await writeVideo(join(dir, 'gate.mp4'), {
        text: 'GATE B12',
        seconds: 4,
        createdAt: '2024-06-03T10:15:00Z',
        lat: 38.7139,
        lon: -9.1394,
      });
      const out = await digestRecordMedia(
        recordWith('video', { id: 'video', kind: 'video', uri: file }),
        deps(),
      );
      expect(out.error).toBeUndefined();
      const asset = out.record.assets[0]!;
      expect(asset.durationSeconds).toBeCloseTo(4, 1);
      expect(out.record.timestamp).toBe('2024-06-03T10:15:00Z');
      expect(out.record.location?.lat).toBeCloseTo(38.7139, 3);
      expect(out.record.location?.lon).toBeCloseTo(-9.1394, 3);
      expect(asset.frames).toHaveLength(8);
      expect(asset.frameTimes).toEqual([0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75]);
      expect(asset.frameText?.filter((text) => /GATE B12/.test(text))).toHaveLength(8);
      const frameViews = buildViews(out.record).filter((view) => view.kind === 'frame');
      expect(frameViews.map((view) => view.key)).toEqual(Array.from({ length: 8 }, (_, i) => `video:${i}`));
      expect(frameViews[3]!.text).toMatch(/GATE B12/);
    },
  );

  it.skipIf(!MEDIA_TOOLS.poppler)(
    'PDF: title/author/date on the document, one part per page, the page without a text layer rendered and OCRd',
    async () => {
      const file = await writeTestPdf(join(dir, 'lease.pdf'), {
        title: 'Lease agreement',
        author: 'Ana Costa',
        createdAt: '2024-03-01T09:00:00Z',
        pages: [
          ['Lease for the flat at Rua Augusta 12', 'Monthly rent: 950 EUR, due on the 5th'],
          { imageText: 'INVOICE 4471' },
        ],
      });
      const input = recordWith('document', {
        id: 'document',
        kind: 'document',
        uri: file,
        mime: 'application/pdf',
      });
      const out = await digestRecordMedia(input, deps());
      expect(out.error).toBeUndefined();
      expect(out.record.metadata?.document).toEqual({
        pages: 2,
        parts: 2,
        title: 'Lease agreement',
        author: 'Ana Costa',
        createdAt: '2024-03-01T09:00:00Z',
      });
      expect(out.record.timestamp).toBe('2024-03-01T09:00:00Z');
      expect(out.record.text).toBe('Lease agreement\nby Ana Costa');
      expect(out.record.assets.map((asset) => asset.id)).toEqual(['document']);
      const [first, second] = out.parts ?? [];
      expect(out.parts).toHaveLength(2);
      expect(first).toMatchObject({
        id: `${input.id}:p0001`,
        kind: 'document',
        sequence: input.sequence,
        timestamp: '2024-03-01T09:00:00Z',
        metadata: { document: { of: input.id, part: 1, page: 1, title: 'Lease agreement' } },
        assets: [],
      });
      expect(first?.text).toMatch(/Lease for the flat[\s\S]*950 EUR/);
      expect(second?.text).toBe('');
      const page = second?.assets[0];
      expect(page).toMatchObject({ id: 'page', kind: 'image', mime: 'image/png' });
      expect(page?.derived?.ocr).toMatch(/INVOICE 4471/);
      const views = buildViews(second!);
      expect(views.find((v) => v.kind === 'ocr' && v.key === 'page')?.text).toMatch(/INVOICE 4471/);
      expect(views.some((v) => v.kind === 'image')).toBe(true);
    },
  );

  it('image: EXIF-less PNG gets OCR; a caption from the vision model with the one prompt', async () => {
    const file = await writeTextImage(join(dir, 'sign.png'), 'PLATFORM 7');
    const requests: ChatRequest[] = [];
    const vision: ChatModel = {
      specificationVersion: 'v1',
      provider: 'fake',
      modelId: 'fake-vision',
      async chat(request) {
        requests.push(request);
        return {
          text: ' A sign. ',
          usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
          model: 'v',
          cached: false,
          latencyMs: 1,
        };
      },
    };
    const out = await digestRecordMedia(
      recordWith('photo', { id: 'photo', kind: 'image', uri: file, mime: 'image/png' }),
      deps({}, { vision }),
    );
    expect(out.record.assets[0]!.derived).toEqual({
      ocr: expect.stringMatching(/PLATFORM 7/),
      captions: ['A sign.'],
    });
    expect(requests[0]!.messages[0]!.content).toEqual([
      { type: 'image', uri: file, mime: 'image/png' },
      { type: 'text', text: PHOTO_CAPTION_PROMPT },
    ]);
  });

  it.skipIf(!MEDIA_TOOLS.ffmpeg || !MEDIA_TOOLS.poppler)(
    'hostile media: a malformed video and PDF, a file over the byte limit and a pixel bomb fail cleanly',
    async () => {
      const junkVideo = join(dir, 'junk.mp4');
      await writeFile(junkVideo, Buffer.alloc(4096, 7));
      const junkPdf = join(dir, 'junk.pdf');
      await writeFile(junkPdf, '%PDF-1.4\nthis is not a pdf at all');
      const bomb = join(dir, 'bomb.png');
      // 5,000 x 5,000 white pixels compress to a few KB: the pixel limit (here 1 M) must stop the decode.
      await sharp({ create: { width: 5000, height: 5000, channels: 3, background: 'white' } })
        .png({ compressionLevel: 9 })
        .toFile(bomb);
      const big = await writeVideo(join(dir, 'big.mp4'), { text: 'BIG', seconds: 1 });

      const cases: [MemoryRecord, Partial<MediaLimits>, RegExp][] = [
        [recordWith('video', { id: 'video', kind: 'video', uri: junkVideo }), {}, /ffprobe failed/],
        [
          recordWith('document', { id: 'document', kind: 'document', uri: junkPdf, mime: 'application/pdf' }),
          {},
          /pdfinfo failed/,
        ],
        [
          recordWith('photo', { id: 'photo', kind: 'image', uri: bomb }),
          { maxImagePixels: 1_000_000 },
          /pixel limit/,
        ],
        [
          recordWith('video', { id: 'video', kind: 'video', uri: big }),
          { maxFileBytes: 100 },
          /over the limit of 100/,
        ],
        // The record's time limit stops the digest between steps (here before the first frame at the latest).
        [
          recordWith('video', { id: 'video', kind: 'video', uri: big }),
          { recordTimeoutMs: 1 },
          /the media digest ran over its limit of 1 ms per record/,
        ],
        // The generated video is 640 x 360: its frames are over a 100k-pixel limit, refused before decoding.
        [
          recordWith('video', { id: 'video', kind: 'video', uri: big }),
          { maxImagePixels: 100_000 },
          /frames are \d+ x \d+ pixels, over the pixel limit of 100000/,
        ],
      ];
      const started = Date.now();
      for (const [record, limits, message] of cases) {
        const out = await digestRecordMedia(record, deps(limits));
        expect(out.error).toMatch(message);
        expect(out.record.assets[0]!.frames).toBeUndefined();
      }
      expect(Date.now() - started).toBeLessThan(20_000);
    },
  );

  it.skipIf(!MEDIA_TOOLS.ffmpeg)(
    'a "video" that is a playlist naming other files (HLS, ffconcat) is refused; other containers still read',
    async () => {
      // Another user's clip, as MPEG-TS (the segment format a playlist names), with text OCR could read.
      const mp4 = await writeVideo(join(dir, 'bob', 'clip.mp4'), { text: 'BOB SECRET', seconds: 2 });
      const victim = join(dir, 'bob', 'clip.ts');
      const mkv = join(dir, 'bob', 'clip.mkv');
      // MPEG-2 in the TS (a keyframe every 12 frames: each sampled time decodes), the same stream in Matroska.
      for (const [out, codec, format] of [
        [victim, 'mpeg2video', 'mpegts'],
        [mkv, 'copy', 'matroska'],
      ] as const) {
        await runTool(
          'ffmpeg',
          ['-nostdin', '-v', 'error', '-y', '-i', mp4, '-c:v', codec, '-f', format, out],
          { timeoutMs: 30_000, maxOutputBytes: 1024 * 1024 },
        );
      }
      const hls = `#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\n${victim}\n#EXT-X-ENDLIST\n`;
      const uploads: [string, string][] = [
        ['hls-absolute.mp4', hls],
        ['hls-relative.mov', hls.replace(victim, '../bob/clip.ts')],
        ['concat.mp4', 'ffconcat version 1.0\nfile ../bob/clip.ts\n'],
      ];
      for (const [name, text] of uploads) {
        const file = join(dir, 'alice', name);
        await mkdir(join(dir, 'alice'), { recursive: true });
        await writeFile(file, text);
        // Control: unconfined, ffmpeg does follow the playlist to bob's file (the fixture is really hostile).
        if (name === 'hls-absolute.mp4') {
          const frame = join(dir, 'alice', 'unconfined.jpg');
          await runTool(
            'ffmpeg',
            ['-nostdin', '-v', 'error', '-y', '-i', file, '-frames:v', '1', '-f', 'image2', frame],
            { timeoutMs: 30_000, maxOutputBytes: 1024 * 1024 },
          );
          expect((await stat(frame)).size).toBeGreaterThan(0);
        }
        const out = await digestRecordMedia(
          recordWith('video', { id: 'video', kind: 'video', uri: file }),
          deps({}, { derivedDir: join(dir, 'derived-alice') }),
        );
        expect(out.error, name).toMatch(/ffprobe failed: .*not on whitelist/);
        expect(out.record.assets[0]!.frames, name).toBeUndefined();
        expect(JSON.stringify(out.record), name).not.toMatch(/BOB|SECRET/);
      }
      for (const file of [victim, mkv]) {
        const out = await digestRecordMedia(
          recordWith('video', { id: 'video', kind: 'video', uri: file }),
          { derivedDir: join(dir, 'derived'), limits: DEFAULT_MEDIA_LIMITS }, // no OCR: frames are enough
        );
        expect(out.error, file).toBeUndefined();
        expect(out.record.assets[0]!.frames?.length, file).toBeGreaterThan(0);
      }
    },
  );

  it('an SVG uploaded under an image name is refused from its header: no render, no thumbnail, no OCR', async () => {
    // 10,000 x 10,000 (the pixel limit) through chained feMorphology: ~17 s of librsvg per step when rendered.
    const steps = Array.from(
      { length: 50 },
      (_, i) => `<feMorphology in="${i === 0 ? 'SourceGraphic' : `m${i - 1}`}" result="m${i}" radius="200"/>`,
    ).join('');
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="10000" height="10000"><filter id="f">${steps}</filter><rect width="10000" height="10000" filter="url(#f)"/></svg>`;
    const file = join(dir, 'pic.png');
    await writeFile(file, svg);
    const out = await digestRecordMedia(
      recordWith('photo', { id: 'photo', kind: 'image', uri: file, mime: 'image/png' }),
      deps(),
    );
    expect(out.error).toMatch(/image format svg is not decoded/);
    expect(out.record.assets[0]!.thumbnail).toBeUndefined();
    expect(await thumbnailJpeg(Buffer.from(svg), 320, DEFAULT_MEDIA_LIMITS)).toBeUndefined();
    await expect(ocrReadyPng(Buffer.from(svg), DEFAULT_MEDIA_LIMITS)).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    // Control: the raster formats still decode.
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: 'white' } })
      .png()
      .toBuffer();
    expect(await thumbnailJpeg(png, 320, DEFAULT_MEDIA_LIMITS)).toBeInstanceOf(Buffer);
  });

  it.skipIf(!MEDIA_TOOLS.ffmpeg || process.platform !== 'linux')(
    'an external tool runs under the memory bound: a decode past it fails, one below it runs',
    async () => {
      const decode = (size: string) =>
        runTool(
          'ffmpeg',
          [
            '-nostdin',
            '-v',
            'error',
            '-f',
            'lavfi',
            '-i',
            `color=c=white:s=${size}:d=1`,
            '-frames:v',
            '1',
            '-f',
            'null',
            '-',
          ],
          { timeoutMs: 5_000, maxOutputBytes: 1024 * 1024, maxMemoryBytes: 256 * 1024 * 1024 },
        );
      // ~800 MB of frames unbounded (measured); under 256 MiB ffmpeg fails or stalls until the time bound.
      await expect(decode('16000x16000')).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringMatching(/^ffmpeg failed/),
      });
      await expect(decode('320x240')).resolves.toBeInstanceOf(Buffer);
    },
  );

  it('an external tool that is not installed is a CONFIG error naming the Debian package', async () => {
    const path = process.env.PATH;
    process.env.PATH = join(dir, 'no-tools-here');
    try {
      for (const bound of [{}, { maxMemoryBytes: 1024 ** 3 }]) {
        await expect(
          runTool('ffprobe', ['-version'], { timeoutMs: 5000, maxOutputBytes: 1024, ...bound }),
        ).rejects.toMatchObject({
          code: 'CONFIG',
          message: expect.stringMatching(/apt-get install ffmpeg/),
        });
      }
    } finally {
      process.env.PATH = path;
    }
  });

  it('frame times are the middles of equal slices; ISO 6709 positions parse, junk does not', () => {
    expect(frameTimes(8, 4)).toEqual([1, 3, 5, 7]);
    expect(frameTimes(undefined, 8)).toEqual([0]);
    expect(parseIso6709('+38.7139-009.1394+010.000/')).toEqual({ lat: 38.7139, lon: -9.1394 });
    expect(parseIso6709('+95.0+010.0/')).toBeUndefined();
    expect(parseIso6709('hello')).toBeUndefined();
  });
});
