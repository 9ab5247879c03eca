import { GraphmemixError } from '../errors/graphmemix-error.ts';
import { IMPORT_FORMATS, type Importer, type ImportFormat } from './importer-spec.ts';

/**
 * Importers by format, loaded lazily: `graphmemix ingest --format mail` never loads tesseract or sharp,
 * and a format's heavy dependencies cost nothing until it is used.
 */
const LOADERS: Record<ImportFormat, () => Promise<Importer>> = {
  unified: async () => (await import('./unified-importer.ts')).createUnifiedImporter(),
  bundle: async () => (await import('./bundle-importer.ts')).createBundleImporter(),
  'mem-gallery': async () => (await import('./mem-gallery-importer.ts')).createMemGalleryImporter(),
  locomo: async () => (await import('./locomo-importer.ts')).createLocomoImporter(),
  m3exam: async () => (await import('./m3exam-importer.ts')).createM3examImporter(),
  media: async () => (await import('./media-importer.ts')).createMediaImporter('media'),
  photos: async () => (await import('./media-importer.ts')).createMediaImporter('photos'),
  documents: async () => (await import('./documents-importer.ts')).createDocumentsImporter(),
  mail: async () => (await import('./mail-importer.ts')).createMailImporter(),
};

export function isImportFormat(value: string): value is ImportFormat {
  return (IMPORT_FORMATS as readonly string[]).includes(value);
}

/** The importer of a format. An unknown format (a CLI flag, an HTTP body) throws UNSUPPORTED. */
export async function getImporter(format: ImportFormat): Promise<Importer> {
  const name: string = format;
  if (!isImportFormat(name)) {
    throw new GraphmemixError('UNSUPPORTED', `unknown import format "${name}"`, {
      location: { field: 'format' },
      details: { supported: [...IMPORT_FORMATS] },
    });
  }
  return LOADERS[name]();
}
