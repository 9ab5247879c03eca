import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { GraphmemixError } from '../errors/index.ts';
import { mimeForPath } from '../types/media-mime.ts';

/**
 * An image reference as a URL a model endpoint can fetch: http(s) and data: URLs pass through; local paths
 * (and file:// URLs) are read and inlined as base64 data URLs, since a remote server cannot read our disk.
 * `mime` overrides the type guessed from the extension. A missing file is the caller's error (NOT_FOUND_PATH).
 */
export async function toImageUrl(uri: string, mime?: string): Promise<string> {
  if (/^(https?:|data:)/i.test(uri)) return uri;
  const path = uri.startsWith('file://') ? fileURLToPath(uri) : uri;
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new GraphmemixError('NOT_FOUND_PATH', `image file cannot be read: ${path}`, {
      location: { file: path },
      cause: error,
    });
  }
  const type = mime ?? mimeForPath(path) ?? sniffImageType(bytes);
  return `data:${type};base64,${bytes.toString('base64')}`;
}

/** The mime type from the file's magic bytes; image/jpeg when unknown (the most common photo type). */
export function sniffImageType(bytes: Uint8Array): string {
  const hex = Buffer.from(bytes.subarray(0, 12)).toString('hex');
  if (hex.startsWith('89504e47')) return 'image/png';
  if (hex.startsWith('ffd8ff')) return 'image/jpeg';
  if (hex.startsWith('47494638')) return 'image/gif';
  if (hex.startsWith('52494646') && hex.slice(16, 24) === '57454250') return 'image/webp';
  if (hex.startsWith('424d')) return 'image/bmp';
  return 'image/jpeg';
}
