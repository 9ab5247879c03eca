import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { loadOptionalPackage } from '../../importers/optional-package.ts';
import { DECODED_IMAGE_FORMATS } from '../../types/media-mime.ts';
import type { MediaLimits } from './media-limits.ts';

type Sharp = typeof import('sharp').default;
type ImageHeader = Awaited<ReturnType<ReturnType<Sharp>['metadata']>>;

/**
 * @internal (sharp's metadata type: see loadSharp)
 * An image's header read with the pixel bound (a decompression bomb fails here, before any decode); an image
 * of another format, or without dimensions, is INVALID_INPUT. Every decode of stored bytes goes through it.
 */
export async function readImageHeader(bytes: Buffer, limits: MediaLimits): Promise<ImageHeader> {
  const sharp = await loadSharp();
  const header = await sharp(bytes, { limitInputPixels: limits.maxImagePixels }).metadata();
  if (!DECODED_IMAGE_FORMATS.has(header.format ?? '')) {
    throw new GraphmemixError(
      'INVALID_INPUT',
      `image format ${header.format ?? 'unknown'} is not decoded (decoded: ${[...DECODED_IMAGE_FORMATS].join(', ')})`,
    );
  }
  if (header.width === undefined || header.height === undefined)
    throw new GraphmemixError('INVALID_INPUT', 'not a readable image');
  return header;
}

/**
 * sharp, loaded on first use through the optional-package loader (a text-only archive never loads it).
 * @internal Its type is sharp's own, an optional package: kept out of the published declarations.
 */
export async function loadSharp(): Promise<Sharp> {
  return (await loadOptionalPackage('sharp', 'image digest')).default;
}

/**
 * Normalised OCR input: EXIF orientation applied, greyscale, at most 2,000 px (more only slows recognition),
 * PNG (tesseract's own decoder reads neither WebP nor HEIC). Decoding is bounded by limits.maxImagePixels.
 */
export async function ocrReadyPng(bytes: Buffer, limits: MediaLimits): Promise<Buffer> {
  await readImageHeader(bytes, limits);
  const sharp = await loadSharp();
  return sharp(bytes, { limitInputPixels: limits.maxImagePixels, failOn: 'error' })
    .rotate()
    .greyscale()
    .resize(2000, 2000, { fit: 'inside', withoutEnlargement: true })
    .png()
    .toBuffer();
}

/**
 * A small JPEG of an image (thumbnails for the viewer and MCP): longest edge `edge`, quality 80, bounded
 * decode. Returns undefined when the bytes are not a readable image.
 */
export async function thumbnailJpeg(
  bytes: Buffer,
  edge: number,
  limits: MediaLimits,
): Promise<Buffer | undefined> {
  const sharp = await loadSharp();
  try {
    await readImageHeader(bytes, limits);
    return await sharp(bytes, { limitInputPixels: limits.maxImagePixels })
      .rotate()
      .resize(edge, edge, { fit: 'inside', withoutEnlargement: true })
      .jpeg({ quality: 80 })
      .toBuffer();
  } catch {
    return undefined;
  }
}

/** Longest edge of a stored thumbnail and the height of a video's frame strip (px). */
export const THUMBNAIL_EDGE = 320;
export const STRIP_HEIGHT = 120;

/**
 * Writes a thumbnail JPEG of `bytes` to `path` unless one is already there (stored once: a re-digest of
 * the same content in the same context reuses it). Written to a temporary name and renamed, so a reader
 * never sees half a file. Returns the path, or undefined when the bytes are not a readable image.
 */
export async function storeThumbnail(
  bytes: () => Promise<Buffer>,
  path: string,
  limits: MediaLimits,
): Promise<string | undefined> {
  if (await isFile(path)) return path;
  const jpeg = await thumbnailJpeg(await bytes(), THUMBNAIL_EDGE, limits);
  if (jpeg === undefined) return undefined;
  await writeAtomically(path, jpeg);
  return path;
}

/**
 * Writes a video's frame strip to `path` unless it is there: each frame scaled to STRIP_HEIGHT px high,
 * side by side in time order (at most `limits.videoFrames` frames, so the strip is bounded). Returns the
 * path, or undefined when no frame could be read.
 */
export async function storeFrameStrip(
  frames: readonly string[],
  path: string,
  limits: MediaLimits,
): Promise<string | undefined> {
  if (await isFile(path)) return path;
  const sharp = await loadSharp();
  const tiles: { input: Buffer; left: number; top: number }[] = [];
  let width = 0;
  for (const frame of frames.slice(0, limits.videoFrames)) {
    try {
      // A source's own frames (an upload) are client bytes like any image: header and format first.
      const bytes = await readFile(frame);
      await readImageHeader(bytes, limits);
      const { data, info } = await sharp(bytes, { limitInputPixels: limits.maxImagePixels })
        .resize({ height: STRIP_HEIGHT, width: STRIP_HEIGHT * 4, fit: 'inside' })
        .jpeg()
        .toBuffer({ resolveWithObject: true });
      tiles.push({ input: data, left: width, top: 0 });
      width += info.width;
    } catch {
      // An unreadable frame is left out of the strip; the frame itself stays listed on the asset.
    }
  }
  if (tiles.length === 0) return undefined;
  const strip = await sharp({
    create: { width, height: STRIP_HEIGHT, channels: 3, background: { r: 0, g: 0, b: 0 } },
  })
    .composite(tiles)
    .jpeg({ quality: 80 })
    .toBuffer();
  await writeAtomically(path, strip);
  return path;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function writeAtomically(path: string, bytes: Buffer): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temporary, bytes);
  await rename(temporary, path);
}
