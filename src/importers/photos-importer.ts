import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';
import type { Metadata } from 'sharp';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { ChatModel } from '../providers/model-spec.ts';
import type { ExifData, MediaAsset, MemoryRecord } from '../types/memory-record.ts';
import { readExif } from './exif/read-exif.ts';
import { compareCodePoints, findFiles, hasExtension } from './find-files.ts';
import { warningItem } from './import-items.ts';
import type { Importer, ImportItem, ImportOptions } from './importer-spec.ts';
import { createTesseractOcr, type OcrEngine } from './ocr/tesseract-ocr.ts';
import { loadOptionalPackage } from './optional-package.ts';

export const PHOTO_EXTENSIONS: readonly string[] = ['.jpg', '.jpeg', '.png', '.webp', '.heic', '.heif'];

/** Context used when the caller names none (the photo folder has no notion of a user). */
export const DEFAULT_PHOTOS_CONTEXT_ID = 'default';

export interface PhotosImporterDeps {
  /**
   * OCR engine to use instead of a fresh tesseract worker per `read()`. An injected engine is NOT
   * terminated by the importer (tests and long-lived servers reuse one worker across imports).
   */
  ocrEngine?: OcrEngine;
}

/** The one prompt sent with each photo when a vision model is configured. */
export const PHOTO_CAPTION_PROMPT =
  'Describe this photo in one or two factual sentences for a personal memory archive: the scene, ' +
  'objects, people (without guessing identities) and any clearly readable text. No preamble.';

/**
 * Imports a folder of photos (searched recursively) or one photo file as kind 'photo' records.
 *
 * - id: `photo:<path relative to the imported folder>` with '/' separators (for a single file: its name).
 *   Stable across re-imports of the same folder, so an edited photo updates its record (sha256 changes)
 *   instead of adding a second one.
 * - sequence: by capture time (EXIF wall-clock string order), then path; photos without a time come last.
 * - timestamp / location: from EXIF (see read-exif.ts for time zones). No EXIF time -> no timestamp (file
 *   mtimes are copy times, not capture times, so they are never used).
 * - one image asset {uri absolute path, mime sniffed from the bytes, sha256, exif, derived {ocr, captions}}.
 * - OCR (tesseract, offline) unless `options.ocr === false`; captions only with `options.vision`.
 * Bad input: a file that is not a decodable image is rejected (INVALID_INPUT, naming the file); an
 * unreadable EXIF block, a failed OCR or a failed caption call is a warning and the record is kept.
 */
export function createPhotosImporter(deps: PhotosImporterDeps = {}): Importer {
  return {
    format: 'photos',
    read(path: string, options: ImportOptions): AsyncIterable<ImportItem> {
      return readPhotos(path, options, deps);
    },
  };
}

/** Record id of a photo at `relativePath` (relative to the imported folder, any separator). */
export function photoRecordId(relativePath: string): string {
  return `photo:${relativePath.split(sep).join('/')}`;
}

interface ProbedPhoto {
  file: string;
  relativePath: string;
  mime: string;
  sha256: string;
  width?: number;
  height?: number;
  exif?: ExifData;
  warnings: string[];
}

async function* readPhotos(
  path: string,
  options: ImportOptions,
  deps: PhotosImporterDeps,
): AsyncGenerator<ImportItem> {
  const files = await findFiles(path, (name) => hasExtension(name, PHOTO_EXTENSIONS));
  const root = (await stat(resolve(path))).isDirectory() ? resolve(path) : dirname(resolve(path));
  const contextId = options.contextId ?? DEFAULT_PHOTOS_CONTEXT_ID;

  // Pass 1: probe every file (cheap: header, EXIF, a shrink-on-load decode) so records can be numbered in
  // capture order before the slow OCR pass.
  const photos: ProbedPhoto[] = [];
  for (const file of files) {
    const relativePath = relative(root, file) || file;
    const probed = await probePhoto(file, relativePath);
    if ('error' in probed) {
      yield { type: 'reject', error: probed.error, source: { file, recordId: photoRecordId(relativePath) } };
    } else {
      photos.push(probed);
    }
  }
  photos.sort(compareCaptureOrder);

  const runOcr = options.ocr !== false && photos.length > 0;
  const ownsEngine = runOcr && deps.ocrEngine === undefined;
  const engine = runOcr ? (deps.ocrEngine ?? createTesseractOcr()) : undefined;
  try {
    for (const [sequence, photo] of photos.entries()) {
      const recordId = photoRecordId(photo.relativePath);
      for (const message of photo.warnings) yield warningItem(photo.file, message, { recordId });
      const derived: { ocr?: string; captions?: string[] } = {};
      if (engine) {
        const ocr = await recognise(engine, photo.file);
        if (ocr.ok) {
          if (ocr.text !== '') derived.ocr = ocr.text;
        } else {
          const message = `OCR failed; photo kept without OCR text: ${ocr.message}`;
          yield warningItem(photo.file, message, { recordId });
        }
      }
      if (options.vision) {
        const caption = await captionPhoto(options.vision, photo);
        if (caption.ok) {
          derived.captions = [caption.text];
        } else {
          const message = `caption failed; photo kept without caption: ${caption.message}`;
          yield warningItem(photo.file, message, { recordId });
        }
      }
      yield {
        type: 'record',
        record: toRecord(photo, contextId, sequence, derived),
        source: { file: photo.file, recordId },
      };
    }
  } finally {
    // Runs on early exit too (consumer `break`), so no tesseract thread keeps the process alive.
    if (ownsEngine && engine) await engine.terminate();
  }
}

async function probePhoto(
  file: string,
  relativePath: string,
): Promise<ProbedPhoto | { error: GraphmemixError }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (cause) {
    return {
      error: new GraphmemixError('NOT_FOUND_PATH', 'cannot read photo file', { location: { file }, cause }),
    };
  }
  // Loaded outside the try: a missing package is a setup error for the whole import, not a bad photo.
  const { default: sharp } = await loadOptionalPackage('sharp', 'photo import');
  let metadata: Metadata;
  try {
    metadata = await sharp(bytes).metadata();
    // Decoding at 1/8 scale (JPEG shrink-on-load) is cheap and catches truncated or corrupt image data
    // that a header-only read would accept.
    await sharp(bytes, { failOn: 'error' }).resize(32, 32, { fit: 'inside' }).raw().toBuffer();
  } catch (cause) {
    return {
      error: new GraphmemixError('INVALID_INPUT', `not a readable image: ${errorMessage(cause)}`, {
        location: { file },
        cause,
      }),
    };
  }
  const exif = await readExif(bytes);
  const photo: ProbedPhoto = {
    file,
    relativePath,
    mime: mimeOf(metadata.format, file),
    sha256: createHash('sha256').update(bytes).digest('hex'),
    warnings: exif.warnings,
  };
  if (metadata.width !== undefined) photo.width = metadata.width;
  if (metadata.height !== undefined) photo.height = metadata.height;
  if (exif.exif) photo.exif = exif.exif;
  return photo;
}

function toRecord(
  photo: ProbedPhoto,
  contextId: string,
  sequence: number,
  derived: { ocr?: string; captions?: string[] },
): MemoryRecord {
  const asset: MediaAsset = {
    id: 'photo',
    kind: 'image',
    uri: photo.file,
    mime: photo.mime,
    sha256: photo.sha256,
  };
  if (photo.exif) asset.exif = photo.exif;
  if (derived.ocr !== undefined || derived.captions !== undefined) asset.derived = derived;
  const record: MemoryRecord = {
    id: photoRecordId(photo.relativePath),
    contextId,
    kind: 'photo',
    sequence,
    sourceId: photo.relativePath.split(sep).join('/'),
    text: '',
    assets: [asset],
  };
  if (photo.width !== undefined && photo.height !== undefined) {
    record.metadata = { photo: { width: photo.width, height: photo.height } };
  }
  const takenAt = photo.exif?.takenAt;
  if (takenAt !== undefined) record.timestamp = takenAt;
  const { lat, lon } = photo.exif ?? {};
  if (lat !== undefined && lon !== undefined) record.location = { lat, lon };
  return record;
}

/** Capture time first (photos without one last), then relative path: stable for equal times. */
function compareCaptureOrder(a: ProbedPhoto, b: ProbedPhoto): number {
  const ta = a.exif?.takenAt;
  const tb = b.exif?.takenAt;
  if (ta !== tb) {
    if (ta === undefined) return 1;
    if (tb === undefined) return -1;
    return compareCodePoints(ta, tb);
  }
  return compareCodePoints(a.relativePath, b.relativePath);
}

async function recognise(
  engine: OcrEngine,
  file: string,
): Promise<{ ok: true; text: string } | { ok: false; message: string }> {
  const { default: sharp } = await loadOptionalPackage('sharp', 'photo OCR');
  try {
    // Normalised input for tesseract: EXIF orientation applied, greyscale, at most 2,000 px (more only
    // slows recognition), PNG (tesseract's own decoder does not read WebP/HEIC).
    const png = await sharp(file)
      .rotate()
      .greyscale()
      .resize(2000, 2000, { fit: 'inside', withoutEnlargement: true })
      .png()
      .toBuffer();
    return { ok: true, text: await engine.recognize(png) };
  } catch (error) {
    return { ok: false, message: errorMessage(error) };
  }
}

async function captionPhoto(
  vision: ChatModel,
  photo: ProbedPhoto,
): Promise<{ ok: true; text: string } | { ok: false; message: string }> {
  try {
    const reply = await vision.chat({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', uri: photo.file, mime: photo.mime },
            { type: 'text', text: PHOTO_CAPTION_PROMPT },
          ],
        },
      ],
      temperature: 0,
      maxTokens: 200,
    });
    const text = reply.text.trim();
    return text === ''
      ? { ok: false, message: 'the vision model returned an empty caption' }
      : { ok: true, text };
  } catch (error) {
    return { ok: false, message: errorMessage(error) };
  }
}

function mimeOf(format: string | undefined, file: string): string {
  switch (format) {
    case 'jpeg':
      return 'image/jpeg';
    case 'png':
      return 'image/png';
    case 'webp':
      return 'image/webp';
    case 'heif':
      return hasExtension(file, ['.avif']) ? 'image/avif' : 'image/heic';
    case 'gif':
      return 'image/gif';
    case 'tiff':
      return 'image/tiff';
    default:
      return 'application/octet-stream';
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
