import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isGraphmemixError } from '../../src/errors/graphmemix-error.ts';
import { getImporter } from '../../src/importers/importer-registry.ts';
import { IMPORT_FORMATS, type ImportFormat, type ImportItem } from '../../src/importers/importer-spec.ts';
import { toMemoryRecord } from '../../src/schemas/record-schema.ts';

/**
 * Conformance of the Importer port (src/importers/importer-spec.ts), run against every registered format:
 * the format-independent contract. Format-specific content is tested next to each importer.
 */
let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'gmx-importer-conformance-'));
});
afterAll(async () => rm(root, { recursive: true, force: true }));

/** Reads everything; a throw must be a GraphmemixError (returned), anything else fails the test. */
async function drain(format: ImportFormat, path: string): Promise<{ items: ImportItem[]; thrown?: unknown }> {
  const importer = await getImporter(format);
  const items: ImportItem[] = [];
  try {
    for await (const item of importer.read(path, { contextId: 'conformance', ocr: false, mediaRoot: root })) {
      items.push(item);
    }
    return { items };
  } catch (error) {
    return { items, thrown: error };
  }
}

function expectTyped(outcome: { items: ImportItem[]; thrown?: unknown }): void {
  if (outcome.thrown !== undefined)
    expect(isGraphmemixError(outcome.thrown), String(outcome.thrown)).toBe(true);
  for (const item of outcome.items) {
    if (item.type === 'reject') expect(isGraphmemixError(item.error)).toBe(true);
    expect(typeof item.source.file).toBe('string');
  }
}

const GARBAGE: Record<ImportFormat, string> = {
  unified: 'archive.jsonl',
  bundle: 'manifest.json',
  'mem-gallery': 'dialog.json',
  locomo: 'locomo.json',
  m3exam: 'm3exam.json',
  photos: 'photo.jpg',
  media: 'clip.mp4',
  documents: 'handout.pdf',
  mail: 'box.mbox',
};

describe.each(IMPORT_FORMATS.map((format) => [format]))('Importer conformance: %s', (format) => {
  it('the registry gives the importer of its format', async () => {
    expect((await getImporter(format)).format).toBe(format);
  });

  it('a missing path is a typed error and yields no record', async () => {
    const outcome = await drain(format, join(root, 'no-such-path'));
    expectTyped(outcome);
    expect(outcome.thrown !== undefined || outcome.items.some((i) => i.type === 'reject')).toBe(true);
    expect(outcome.items.filter((i) => i.type === 'record')).toEqual([]);
  });

  it('an empty folder yields no record and no untyped error', async () => {
    const dir = join(root, `empty-${format}`);
    await mkdir(dir, { recursive: true });
    const outcome = await drain(format, dir);
    expectTyped(outcome);
    expect(outcome.items.filter((i) => i.type === 'record')).toEqual([]);
  });

  it('garbage bytes give typed rejects or errors; whatever record comes out is valid and in the given context', async () => {
    const dir = join(root, `garbage-${format}`);
    await mkdir(dir, { recursive: true });
    const file = join(dir, GARBAGE[format]);
    await writeFile(file, Buffer.from('\u0000\u00ff{"not": [valid\n\u0001garbage', 'latin1'));
    const outcome = await drain(format, file);
    expectTyped(outcome);
    for (const item of outcome.items) {
      if (item.type !== 'record') continue;
      expect(item.record.contextId).toBe('conformance');
      expect(toMemoryRecord(item.record, { contextId: 'conformance', sequence: 0 }).ok).toBe(true);
    }
  });
});
