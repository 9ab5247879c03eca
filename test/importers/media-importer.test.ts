import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderPhotoJpeg } from '../../src/demo/example-photo-renderer.ts';
import { exifDateToIso, readExif } from '../../src/importers/exif/read-exif.ts';
import { createMediaImporter, mediaRecordId } from '../../src/importers/media-importer.ts';
import { collect, recordsOf, rejectsOf, warningsOf } from '../fixtures/import-items.ts';
import { corruptExifBlock, writeJpegPhoto, writePngPhoto } from '../fixtures/photo-fixtures.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gmx-photos-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readExif', () => {
  it('reads capture time as local wall-clock time, the offset when present, and GPS', async () => {
    const jpeg = await renderPhotoJpeg({
      title: 'X',
      lines: [],
      takenAt: '2024-04-20T12:30:05',
      offset: '+01:00',
      lat: 41.1413,
      lon: -8.613,
    });
    const { exif, warnings } = await readExif(jpeg);
    expect(warnings).toEqual([]);
    expect(exif?.takenAt).toBe('2024-04-20T12:30:05+01:00');
    expect(exif?.lat).toBeCloseTo(41.1413, 4);
    expect(exif?.lon).toBeCloseTo(-8.613, 4);
    expect(exif?.make).toBe('GraphMemix');
  });

  it('reports an unreadable block as a warning instead of throwing', async () => {
    const jpeg = await renderPhotoJpeg({ title: 'X', lines: [], takenAt: '2024-04-20T12:30:05' });
    const result = await readExif(corruptExifBlock(jpeg));
    expect(result.exif?.takenAt).toBeUndefined();
    expect(result.warnings.join(' ')).toMatch(/unreadable EXIF/);
  });

  it('an EXIF bomb (65,531 entries sharing one 80 KB value) is read without filling the heap', async () => {
    // Without the tag list this 0.85 MB TIFF made exifr build 655 M numbers: the process died at 4 GB.
    for (const tags of ['distinct', 'all DateTimeOriginal'] as const) {
      const result = await readExif(exifBombTiff(tags));
      expect(result.exif?.takenAt, tags).toBeUndefined();
      expect(process.memoryUsage().heapUsed, tags).toBeLessThan(1024 ** 3);
    }
  });

  it('rejects impossible EXIF times', () => {
    expect(exifDateToIso('0000:00:00 00:00:00')).toBeUndefined();
    expect(exifDateToIso('2024:02:30 10:00:00')).toBeUndefined();
    expect(exifDateToIso('2024:02:29 23:59:59')).toBe('2024-02-29T23:59:59');
    expect(exifDateToIso('2024:02:29 08:00:00', '-0330')).toBe('2024-02-29T08:00:00-03:30');
  });
});

describe('photos importer (no OCR)', () => {
  it('orders by capture time then path, ids from content hashes, GPS as location, sha256 of the bytes', async () => {
    const root = join(dir, 'order');
    await writeJpegPhoto(root, 'b-later.jpg', { title: 'B', lines: [], takenAt: '2024-05-02T09:00:00' });
    const early = await writeJpegPhoto(root, 'sub/a-early.jpeg', {
      title: 'A',
      lines: [],
      takenAt: '2024-05-01T18:45:00',
      lat: 38.7223,
      lon: -9.1393,
    });
    await writePngPhoto(root, 'c-no-exif.png', { title: 'C', lines: [] });
    await writeFile(join(root, 'notes.txt'), 'not a photo, not searched');

    const items = await collect(createMediaImporter().read(root, { contextId: 'ctx', ocr: false }));
    expect(rejectsOf(items)).toEqual([]);
    expect(warningsOf(items)).toEqual([]);
    const records = recordsOf(items);
    expect(records.map((r) => [r.sourceId, r.sequence, r.timestamp])).toEqual([
      ['sub/a-early.jpeg', 0, '2024-05-01T18:45:00'],
      ['b-later.jpg', 1, '2024-05-02T09:00:00'],
      ['c-no-exif.png', 2, undefined],
    ]);
    for (const record of records) expect(record.id).toBe(mediaRecordId('photo', record.assets[0]!.sha256!));
    const first = records[0]!;
    expect(first).toMatchObject({ contextId: 'ctx', kind: 'photo', text: '', sourceId: 'sub/a-early.jpeg' });
    expect(first.location?.lat).toBeCloseTo(38.7223, 4);
    expect(first.location?.lon).toBeCloseTo(-9.1393, 4);
    const asset = first.assets[0]!;
    expect(asset).toMatchObject({ kind: 'image', uri: early, mime: 'image/jpeg' });
    expect(asset.sha256).toBe(
      createHash('sha256')
        .update(await readFile(early))
        .digest('hex'),
    );
    expect(asset.exif?.takenAt).toBe('2024-05-01T18:45:00');
    expect(asset.derived).toBeUndefined();
    expect(records[2]!.assets[0]!.mime).toBe('image/png');
    expect(records[2]!.location).toBeUndefined();
  });

  it('rejects files that are not decodable images, naming the file, and keeps the rest', async () => {
    const root = join(dir, 'corrupt');
    await writeJpegPhoto(root, 'good.jpg', { title: 'OK', lines: [], takenAt: '2024-05-01T10:00:00' });
    await writeFile(join(root, 'text.jpg'), 'hello, I am not a JPEG');
    const whole = await renderPhotoJpeg({ title: 'CUT', lines: ['short'], takenAt: '2024-05-01T11:00:00' });
    await writeFile(join(root, 'truncated.jpg'), whole.subarray(0, Math.floor(whole.length / 2)));

    const items = await collect(createMediaImporter().read(root, { ocr: false }));
    expect(recordsOf(items).map((r) => r.sourceId)).toEqual(['good.jpg']);
    const rejects = rejectsOf(items);
    expect(rejects.map((r) => [r.error.code, r.source.file])).toEqual([
      ['INVALID_INPUT', join(root, 'text.jpg')],
      ['INVALID_INPUT', join(root, 'truncated.jpg')],
    ]);
    expect(rejects[0]!.error.location.file).toBe(join(root, 'text.jpg'));
  });

  it('keeps a photo with an unreadable EXIF block, without timestamp, and warns naming the file', async () => {
    const root = join(dir, 'bad-exif');
    const jpeg = await renderPhotoJpeg({
      title: 'BAD',
      lines: [],
      takenAt: '2024-05-01T10:00:00',
      lat: 1,
      lon: 2,
    });
    const file = join(root, 'bad-exif.jpg');
    await writeJpegPhoto(root, 'ok.jpg', { title: 'OK', lines: [], takenAt: '2024-05-01T10:00:00' });
    await writeFile(file, corruptExifBlock(jpeg));

    const items = await collect(createMediaImporter().read(root, { ocr: false }));
    const records = recordsOf(items);
    expect(records.map((r) => r.sourceId)).toEqual(['ok.jpg', 'bad-exif.jpg']);
    expect(records[1]!.timestamp).toBeUndefined();
    expect(records[1]!.location).toBeUndefined();
    const warnings = warningsOf(items);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.source.file).toBe(file);
    expect(warnings[0]!.message).toMatch(/EXIF/);
  });

  it('refuses an SVG named like a photo from its header (never rendered)', async () => {
    const root = join(dir, 'svg');
    await writeJpegPhoto(root, 'ok.jpg', { title: 'OK', lines: [] });
    await writeFile(
      join(root, 'IMG_0002.png'),
      '<svg xmlns="http://www.w3.org/2000/svg" width="10000" height="10000"><rect width="9" height="9"/></svg>',
    );
    const items = await collect(createMediaImporter().read(root, { ocr: false }));
    expect(recordsOf(items).map((r) => r.sourceId)).toEqual(['ok.jpg']);
    const rejected = items.filter((item) => item.type === 'reject');
    expect(rejected.map((item) => (item as { error: Error }).error.message)).toEqual([
      `${join(root, 'IMG_0002.png')}: not a readable image: image format svg is not decoded`,
    ]);
  });

  it('accepts a single file path; sourceId is the file name', async () => {
    const file = await writeJpegPhoto(join(dir, 'single'), 'only.jpg', { title: 'ONE', lines: [] });
    const records = recordsOf(await collect(createMediaImporter().read(file, { ocr: false })));
    expect(records.map((r) => r.sourceId)).toEqual(['only.jpg']);
  });

  it('gives two different files with the same name in two folders two ids; the same bytes twice one', async () => {
    const root = join(dir, 'two-folders');
    await writeJpegPhoto(join(root, 'trip-a'), 'IMG_0001.jpg', { title: 'AAA', lines: [] });
    await writeJpegPhoto(join(root, 'trip-b'), 'IMG_0001.jpg', { title: 'BBB', lines: [] });
    await mkdir(join(root, 'z-copy'));
    await writeFile(join(root, 'z-copy', 'copy.jpg'), await readFile(join(root, 'trip-a', 'IMG_0001.jpg')));
    const items = await collect(createMediaImporter().read(root, { ocr: false }));
    const records = recordsOf(items);
    expect(records.map((r) => r.sourceId).sort()).toEqual(['trip-a/IMG_0001.jpg', 'trip-b/IMG_0001.jpg']);
    expect(new Set(records.map((r) => r.id)).size).toBe(2);
    expect(warningsOf(items).map((w) => w.message)).toEqual([
      expect.stringMatching(/copy\.jpg.*same bytes as trip-a\/IMG_0001\.jpg/),
    ]);
  });
});

/**
 * A valid 1x1 grey TIFF whose EXIF IFD holds 65,531 RATIONAL entries of 10,000 values each, all pointing at
 * the same 80 KB (helper audit of round 55): distinct tags, or every entry DateTimeOriginal (a picked tag).
 */
function exifBombTiff(tags: 'distinct' | 'all DateTimeOriginal'): Buffer {
  const entries = 65_531;
  const count = 10_000;
  const entry = (tag: number, type: number, n: number, value: number): Buffer => {
    const out = Buffer.alloc(12);
    out.writeUInt16LE(tag, 0);
    out.writeUInt16LE(type, 2);
    out.writeUInt32LE(n, 4);
    if (type === 3 && n === 1) out.writeUInt16LE(value, 8);
    else out.writeUInt32LE(value, 8);
    return out;
  };
  const ifdOffset = 8;
  const pixelOffset = ifdOffset + 2 + 10 * 12 + 4;
  const exifOffset = pixelOffset + 2;
  const dataOffset = exifOffset + 2 + entries * 12 + 4;
  const u16 = (value: number) => Buffer.from([value & 0xff, value >> 8]);
  const ifd0 = Buffer.concat([
    u16(10),
    entry(256, 3, 1, 1),
    entry(257, 3, 1, 1),
    entry(258, 3, 1, 8),
    entry(259, 3, 1, 1),
    entry(262, 3, 1, 1),
    entry(273, 4, 1, pixelOffset),
    entry(277, 3, 1, 1),
    entry(278, 3, 1, 1),
    entry(279, 4, 1, 1),
    entry(34665, 4, 1, exifOffset),
    Buffer.alloc(4),
  ]);
  // Distinct tag numbers skip the sub-IFD pointers exifr follows.
  const skip = new Set([0x8769, 0x8825, 0xa005, 0x927c]);
  const tagNumbers: number[] = [];
  for (let tag = 1; tagNumbers.length < entries; tag++) {
    if (tags === 'all DateTimeOriginal') tagNumbers.push(0x9003);
    else if (!skip.has(tag)) tagNumbers.push(tag);
  }
  const exif = Buffer.concat([
    u16(entries),
    ...tagNumbers.map((tag) => entry(tag, 5, count, dataOffset)),
    Buffer.alloc(4),
  ]);
  const data = Buffer.alloc(count * 8);
  for (let i = 0; i < count; i++) {
    data.writeUInt32LE(1, i * 8);
    data.writeUInt32LE(3, i * 8 + 4);
  }
  return Buffer.concat([
    Buffer.from('II*\0'),
    Buffer.from([8, 0, 0, 0]),
    ifd0,
    Buffer.from([0x80, 0]),
    exif,
    data,
  ]);
}
