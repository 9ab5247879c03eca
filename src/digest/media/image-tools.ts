import { loadOptionalPackage } from '../../importers/optional-package.ts';
import type { MediaLimits } from './media-limits.ts';

type Sharp = typeof import('sharp').default;

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
    return await sharp(bytes, { limitInputPixels: limits.maxImagePixels })
      .rotate()
      .resize(edge, edge, { fit: 'inside', withoutEnlargement: true })
      .jpeg({ quality: 80 })
      .toBuffer();
  } catch {
    return undefined;
  }
}
