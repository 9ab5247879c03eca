import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExampleArchive, writeExampleArchive } from '../../src/demo/example-archive.ts';
import { createBoundedOcr } from '../../src/digest/media/bounded-ocr.ts';
import { digestRecordMedia } from '../../src/digest/media/digest-record-media.ts';
import { DEFAULT_MEDIA_LIMITS } from '../../src/digest/media/media-limits.ts';
import { eventBridgePairs } from '../../src/digest/relations/event-bridge.ts';
import { recordGroundingPairs } from '../../src/digest/relations/record-grounding.ts';
import { sameRecordPairs } from '../../src/digest/relations/same-record.ts';
import { createDocumentsImporter } from '../../src/importers/documents-importer.ts';
import type { ImportItem } from '../../src/importers/importer-spec.ts';
import { createMailImporter } from '../../src/importers/mail-importer.ts';
import { createMediaImporter } from '../../src/importers/media-importer.ts';
import { createTesseractOcr } from '../../src/importers/ocr/tesseract-ocr.ts';
import { createUnifiedImporter } from '../../src/importers/unified-importer.ts';
import { toMemoryRecord } from '../../src/schemas/record-schema.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import { collect, recordsOf } from '../fixtures/import-items.ts';

let first: string;
let second: string;
let derived: string;
let archive: ExampleArchive;
let items: { unified: ImportItem[]; mail: ImportItem[]; photos: ImportItem[]; documents: ImportItem[] };
let records: MemoryRecord[];

beforeAll(async () => {
  first = await mkdtemp(join(tmpdir(), 'gmx-example-a-'));
  second = await mkdtemp(join(tmpdir(), 'gmx-example-b-'));
  const started = performance.now();
  archive = await writeExampleArchive(first);
  const seconds = (performance.now() - started) / 1000;
  expect(seconds).toBeLessThan(10);
  await writeExampleArchive(second);
  const options = { contextId: archive.contextId };
  items = {
    unified: await collect(createUnifiedImporter().read(archive.unifiedFile, options)),
    mail: await collect(createMailImporter().read(archive.mailDir, options)),
    photos: await collect(createMediaImporter().read(archive.photosDir, options)),
    documents: await collect(createDocumentsImporter().read(archive.documentsDir, options)),
  };
  // The media digest every ingest runs (real OCR of the photos, the PDF's pages as memories; the video is
  // digested by the demo). Derived files go outside the two archive folders compared byte for byte.
  const ocr = createBoundedOcr(() => createTesseractOcr(), 60_000);
  const photos: MemoryRecord[] = [];
  const documents: MemoryRecord[] = [];
  derived = await mkdtemp(join(tmpdir(), 'gmx-example-derived-'));
  try {
    const deps = { ocr, derivedDir: derived, limits: DEFAULT_MEDIA_LIMITS };
    for (const record of recordsOf(items.photos)) {
      photos.push(record.kind === 'photo' ? (await digestRecordMedia(record, deps)).record : record);
    }
    for (const record of recordsOf(items.documents)) {
      const digested = await digestRecordMedia(record, deps);
      documents.push(digested.record, ...(digested.parts ?? []));
    }
  } finally {
    await ocr.terminate();
  }
  records = [...recordsOf(items.unified), ...recordsOf(items.mail), ...photos, ...documents];
}, 60_000);

afterAll(async () => {
  await rm(first, { recursive: true, force: true });
  await rm(second, { recursive: true, force: true });
  await rm(derived, { recursive: true, force: true });
});

async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
}

describe('writeExampleArchive', () => {
  it('is deterministic: two runs write byte-identical files, photos included', async () => {
    const names = await filesUnder(first);
    expect(names).toEqual(await filesUnder(second));
    expect(names.filter((name) => name.endsWith('.jpg'))).toHaveLength(6);
    for (const name of names) {
      expect((await readFile(join(first, name))).equals(await readFile(join(second, name))), name).toBe(true);
    }
  });

  it('imports cleanly through the unified, mail and photos importers', () => {
    for (const [format, list] of Object.entries(items)) {
      const problems = list.filter((item) => item.type === 'reject' || item.type === 'warning');
      expect(problems, format).toEqual([]);
    }
    const byKind = (kind: string) => records.filter((record) => record.kind === kind).length;
    expect(byKind('message')).toBeGreaterThanOrEqual(60);
    expect(byKind('message')).toBeLessThanOrEqual(120);
    expect(byKind('email')).toBe(8);
    expect(byKind('photo')).toBe(6);
    expect(byKind('video')).toBe(archive.hasVideo ? 1 : 0);
    expect(byKind('document')).toBe(archive.hasPdfTools ? 3 : 1); // the handout and its two pages
    expect(new Set(records.map((record) => record.contextId))).toEqual(new Set([archive.contextId]));
    expect(new Set(records.map((record) => record.id)).size).toBe(records.length);
  });

  it('yields records that pass the shared record schema unchanged', () => {
    for (const record of records) {
      const checked = toMemoryRecord(record, { contextId: record.contextId, sequence: record.sequence });
      expect(checked, record.id).toEqual({ ok: true, record });
    }
  });

  it('names only memories that exist in its questions', () => {
    const ids = new Set(records.map((record) => record.id));
    expect(archive.questions.length).toBeGreaterThanOrEqual(4);
    for (const question of archive.questions) {
      for (const id of question.expectMemoryIds ?? [])
        expect(ids.has(id), `${question.prompt} -> ${id}`).toBe(true);
    }
    // Cross-source: every question's evidence spans at least two memories, but the document question (one
    // PDF answers it: the page is the evidence).
    for (const question of archive.questions) {
      const ids = question.expectMemoryIds ?? [];
      expect(ids.length).toBeGreaterThan(ids.some((id) => id.startsWith('document:')) ? 0 : 1);
    }
  });

  it('photos carry EXIF time with offset, GPS, and (after the media digest) OCR of their big text', () => {
    const photo = (name: string) => records.find((record) => record.sourceId === name)!;
    const receipt = photo('majestic-receipt.jpg');
    expect(receipt.id).toBe(archive.mediaIds['majestic-receipt.jpg']);
    expect(receipt.timestamp).toBe('2024-04-20T12:55:00+01:00');
    expect(receipt.location?.lat).toBeCloseTo(41.14717, 4);
    const ocrOf = (name: string) => photo(name).assets[0]!.derived?.ocr;
    expect(ocrOf('majestic-receipt.jpg')).toMatch(/TOTAL EUR 11\.20/);
    expect(ocrOf('riverside-car-park.jpg')).toMatch(/BAY 214/);
    expect(ocrOf('garden-whiteboard.jpg')).toMatch(/BASIL \+ PARSLEY/);
    expect(ocrOf('train-ticket.jpg')).toMatch(/COACH 4\s+SEAT 52/);
  });

  it('gives the relations engineer the pairs the story needs', () => {
    // `photo:<file name>` in the expectations below stands for that file's content id.
    const key = (a: string, b: string) =>
      [a, b]
        .map((x) => archive.mediaIds[x.replace(/^photo:/, '')] ?? x)
        .sort()
        .join(' | ');
    const bridges = eventBridgePairs(records).map(([a, b]) => key(a, b));
    expect(bridges).toContain(key('photo:riverside-car-park.jpg', 'photo:pottery-studio-sign.jpg'));
    expect(bridges).toContain(key('photo:livraria-lello.jpg', 'photo:majestic-receipt.jpg'));
    const grounding = recordGroundingPairs(records).map(([a, b]) => key(a, b));
    expect(grounding).toContain(
      key('rpw-2041-change@riverside-arts.example', 'photo:pottery-studio-sign.jpg'),
    );
    expect(grounding).toContain(key('px7q42@tickets.cp.example', 'photo:train-ticket.jpg'));
    const sameRecord = sameRecordPairs(records).map(([a, b]) => key(a, b));
    expect(sameRecord).toContain(
      key('rpw-2041-confirm@riverside-arts.example', 'rpw-2041-change@riverside-arts.example'),
    );
    expect(sameRecord).toContain(key('rpw-2041-confirm@riverside-arts.example', 'fwd-rpw-2041@reis.example'));
  });
});
