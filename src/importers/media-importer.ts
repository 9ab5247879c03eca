import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';
import type { Metadata } from 'sharp';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import { DECODED_IMAGE_FORMATS } from '../types/media-mime.ts';
import type { ExifData, MediaAsset, MemoryRecord } from '../types/memory-record.ts';
import { readExif } from './exif/read-exif.ts';
import { compareCodePoints, findFiles, hasExtension } from './find-files.ts';
import { warningItem } from './import-items.ts';
import type { Importer, ImportItem, ImportOptions } from './importer-spec.ts';
import { mimeForPath, sha256File } from './media-files.ts';
import { loadOptionalPackage } from './optional-package.ts';

export const PHOTO_EXTENSIONS: readonly string[] = ['.jpg', '.jpeg', '.png', '.webp', '.heic', '.heif'];
export const VIDEO_EXTENSIONS: readonly string[] = ['.mp4', '.mov', '.m4v', '.webm', '.mkv', '.avi', '.3gp'];

/** Context used when the caller names none (the photo folder has no notion of a user). */
export const DEFAULT_PHOTOS_CONTEXT_ID = 'default';

/**
 * Imports a folder of photos and videos (searched recursively) or one file, as kind 'photo' / 'video'
 * records (`--format media`; `photos` is the old name and an alias).
 *
 * - id: `photo:<first 24 hex of the file's sha256>` / `video:<...>`: the identity is the content, never the
 *   relative name, so two different `IMG_0001.jpg` in two folders are two memories and a re-import of the
 *   same file is unchanged. The path relative to the imported folder is kept as `sourceId`. The same bytes
 *   twice in one import are one memory (a warning names the second path). Archives imported before used
 *   `photo:<relative path>`: such a memory is replaced when the same file is imported again from the same
 *   folder (`legacyIds`, docs/archive-format.md "Identity").
 * - sequence: by capture time (EXIF wall-clock string order), then path; files without a time come last.
 * - timestamp / location: from EXIF for photos; for videos from the container metadata, read by the media
 *   digest. No time -> no timestamp (file mtimes are copy times, never used).
 * - one asset {uri absolute path, mime, sha256, exif}. OCR, captions, video frames: the media digest of
 *   ingest (src/digest/media/), the same for every way media arrives.
 * Bad input: a photo that is not a decodable image is rejected (INVALID_INPUT, naming the file); an
 * unreadable EXIF block is a warning and the record is kept.
 */
export function createMediaImporter(format: 'media' | 'photos' = 'media'): Importer {
  return {
    format,
    read(path: string, options: ImportOptions): AsyncIterable<ImportItem> {
      return readMedia(path, options);
    },
  };
}

/** The id the photos importer gave a photo before content ids: `photo:<path relative to the import>`. */
export function legacyPhotoId(relativePath: string): string {
  return `photo:${relativePath}`;
}

/** Record id of a media file: kind and content hash (see createMediaImporter). */
export function mediaRecordId(kind: 'photo' | 'video', sha256: string): string {
  return `${kind}:${sha256.slice(0, 24)}`;
}

interface ProbedPhoto {
  kind: 'photo' | 'video';
  file: string;
  relativePath: string;
  mime: string;
  sha256: string;
  width?: number;
  height?: number;
  exif?: ExifData;
  warnings: string[];
}

async function* readMedia(path: string, options: ImportOptions): AsyncGenerator<ImportItem> {
  const files = await findFiles(path, (name) =>
    hasExtension(name, [...PHOTO_EXTENSIONS, ...VIDEO_EXTENSIONS]),
  );
  const root = (await stat(resolve(path))).isDirectory() ? resolve(path) : dirname(resolve(path));
  const contextId = options.contextId ?? DEFAULT_PHOTOS_CONTEXT_ID;

  // Pass 1: probe every file (cheap: header, EXIF, a shrink-on-load decode) so records can be numbered in
  // capture order.
  const media: ProbedPhoto[] = [];
  const byHash = new Map<string, string>();
  for (const file of files) {
    const relativePath = (relative(root, file) || file).split(sep).join('/');
    const probed = hasExtension(file, VIDEO_EXTENSIONS)
      ? await probeVideoFile(file, relativePath)
      : await probePhoto(file, relativePath);
    if ('error' in probed) {
      yield { type: 'reject', error: probed.error, source: { file } };
      continue;
    }
    const first = byHash.get(probed.sha256);
    if (first !== undefined) {
      const recordId = mediaRecordId(probed.kind, probed.sha256);
      yield warningItem(file, `same bytes as ${first}; imported once`, { recordId });
      continue;
    }
    byHash.set(probed.sha256, relativePath);
    media.push(probed);
  }
  media.sort(compareCaptureOrder);
  for (const [sequence, item] of media.entries()) {
    const recordId = mediaRecordId(item.kind, item.sha256);
    for (const message of item.warnings) yield warningItem(item.file, message, { recordId });
    yield {
      type: 'record',
      record: toRecord(item, contextId, sequence),
      source: { file: item.file, recordId },
      // Before content ids a photo was `photo:<relative path>`: ingest replaces that memory when it holds
      // this same file (same sourceId and sha256), so re-importing an old archive's folder adds no duplicate.
      ...(item.kind === 'photo' ? { legacyIds: [legacyPhotoId(item.relativePath)] } : {}),
    };
  }
}

async function probeVideoFile(
  file: string,
  relativePath: string,
): Promise<ProbedPhoto | { error: GraphmemixError }> {
  try {
    return {
      kind: 'video',
      file,
      relativePath,
      mime: mimeForPath(file) ?? 'video/mp4',
      sha256: await sha256File(file),
      warnings: [],
    };
  } catch (cause) {
    return {
      error: new GraphmemixError('NOT_FOUND_PATH', 'cannot read video file', { location: { file }, cause }),
    };
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
  let metadata: Metadata;
  try {
    const { default: sharp } = await loadOptionalPackage('sharp', 'photo import');
    metadata = await sharp(bytes).metadata();
    if (!DECODED_IMAGE_FORMATS.has(metadata.format ?? ''))
      throw new Error(`image format ${metadata.format ?? 'unknown'} is not decoded`);
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
    kind: 'photo',
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

function toRecord(item: ProbedPhoto, contextId: string, sequence: number): MemoryRecord {
  const asset: MediaAsset = {
    id: item.kind,
    kind: item.kind === 'photo' ? 'image' : 'video',
    uri: item.file,
    mime: item.mime,
    sha256: item.sha256,
  };
  if (item.exif) asset.exif = item.exif;
  const record: MemoryRecord = {
    id: mediaRecordId(item.kind, item.sha256),
    contextId,
    kind: item.kind,
    sequence,
    sourceId: item.relativePath,
    text: '',
    assets: [asset],
  };
  if (item.width !== undefined && item.height !== undefined) {
    record.metadata = { photo: { width: item.width, height: item.height } };
  }
  const takenAt = item.exif?.takenAt;
  if (takenAt !== undefined) record.timestamp = takenAt;
  const { lat, lon } = item.exif ?? {};
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
