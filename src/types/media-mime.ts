import { extname } from 'node:path';

/** MIME types by file extension, shared by importers (asset mime) and providers (inlined image parts). */
export const MIME_BY_EXTENSION: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.bmp': 'image/bmp',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.heic': 'image/heic',
  '.avif': 'image/avif',
  '.svg': 'image/svg+xml',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.mkv': 'video/x-matroska',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.m4a': 'audio/mp4',
  '.ogg': 'audio/ogg',
  '.pdf': 'application/pdf',
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.html': 'text/html',
};

/** MIME type guessed from the extension of a path or URL; undefined when unknown. */
export function mimeForPath(path: string): string | undefined {
  const clean = path.split(/[?#]/, 1)[0] ?? path;
  return MIME_BY_EXTENSION[extname(clean).toLowerCase()];
}

/**
 * The raster formats the digest decodes. libvips picks its loader from the bytes, not the file name or type,
 * so an upload named "pic.png" may be an SVG, and librsvg renders filter chains at a cost nothing bounds: a
 * 378-byte SVG of four `feMorphology` steps at 100 M pixels took 70 s of a libuv thread while the media queue
 * waited for every user (round 55). Other loaders libvips carries (PDF, FITS, OpenSlide, ImageMagick, raw)
 * read more than a photo needs; PDFs have their own path (poppler, bounded). Checked on the header
 * (sharp's `metadata().format`) before every decode of stored or imported bytes.
 */
export const DECODED_IMAGE_FORMATS: ReadonlySet<string> = new Set([
  'jpeg',
  'png',
  'webp',
  'gif',
  'tiff',
  'heif',
]);
