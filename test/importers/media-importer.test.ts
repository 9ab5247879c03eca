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
