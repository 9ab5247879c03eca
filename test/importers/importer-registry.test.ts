import { describe, expect, it } from 'vitest';
import { GraphmemixError } from '../../src/errors/graphmemix-error.ts';
import { getImporter, isImportFormat } from '../../src/importers/importer-registry.ts';
import { IMPORT_FORMATS, type ImportFormat } from '../../src/importers/importer-spec.ts';

describe('importer registry', () => {
  it.each(IMPORT_FORMATS)('loads the %s importer', async (format) => {
    const importer = await getImporter(format);
    expect(importer.format).toBe(format);
    expect(typeof importer.read).toBe('function');
  });

  it('throws UNSUPPORTED for an unknown format', async () => {
    const error = await getImporter('csv' as ImportFormat).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GraphmemixError);
    expect((error as GraphmemixError).code).toBe('UNSUPPORTED');
    expect(isImportFormat('csv')).toBe(false);
    expect(isImportFormat('mem-gallery')).toBe(true);
  });
});
