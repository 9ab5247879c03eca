import { createReadStream } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import { Readable } from 'node:stream';
import type { Hono } from 'hono';
import { z } from 'zod';
import { userIdSchema } from '../api-schemas/common-schemas.ts';
import { parseInput } from '../api-schemas/parse-input.ts';
import type { Graphmemix } from '../graphmemix-api.ts';
import { DEFAULT_MEDIA_LIMITS, thumbnailJpeg } from '../index.ts';
import { httpError } from '../shell-kit/error-response.ts';
import { servableMedia } from '../shell-kit/servable-media.ts';
import { requireUser } from '../shell-kit/user-scope.ts';
import { mimeForPath } from '../types/media-mime.ts';
import { decodeMediaRef, mediaFileOf } from './media-ref.ts';
import { OnRequestThumbnails } from './on-request-thumbnails.ts';

/** Longest edge of a `?size=thumb` image (viewer thumbnails, frame strips). */
export const THUMB_EDGE = 320;
/** Largest image a thumbnail is made from (bytes): bigger originals are served whole, never decoded here. */
const MAX_THUMB_SOURCE_BYTES = 32 * 1024 * 1024;

const mediaQuerySchema = z.object({
  user_id: userIdSchema,
  size: z.enum(['original', 'thumb']).default('original'),
});

/**
 * GET /v1/media/:asset_id?user_id=&size=original|thumb: the bytes of one stored media file (an asset, a
 * video frame, a PDF page image) of one of the caller's memories. `size=thumb` serves the thumbnail the
 * media digest stored (an image's, or a video's frame strip), else makes one from the image on request. The id is looked up in the stored record
 * (media-ref.ts), never read as a path; another user's asset, an unknown one and a remote-only asset all
 * answer the same 404. Sends the stored MIME type with `nosniff` and a sandbox CSP (an SVG cannot run
 * script), supports one `Range: bytes=a-b` (video seeking; several ranges or a range past the end: 416).
 */
export function registerMediaRoutes(app: Hono, graphmemix: Graphmemix, mediaDir?: string): void {
  const thumbnails = new OnRequestThumbnails();
  app.get('/v1/media/:asset_id', async (c) => {
    const input = parseInput(mediaQuerySchema, {
      user_id: c.req.query('user_id'),
      ...(c.req.query('size') === undefined ? {} : { size: c.req.query('size') }),
    });
    const notFound = 'media not found for this user';
    requireUser(c, input.user_id, notFound);
    const ref = decodeMediaRef(c.req.param('asset_id'));
    if (ref === undefined) throw httpError('NOT_FOUND', notFound);
    const record = await graphmemix.getMemory(input.user_id, ref.memoryId);
    const file = record ? mediaFileOf(record, ref) : undefined;
    if (file === undefined || !isAbsolute(file.uri) || file.uri.includes('\0'))
      throw httpError('NOT_FOUND', notFound);
    let path: string;
    let size: number;
    let modified: number;
    try {
      path = await realpath(file.uri);
      const info = await stat(path);
      if (!info.isFile()) throw new Error('not a file');
      size = info.size;
      modified = info.mtimeMs;
      if (!(await servableMedia(path, input.user_id, mediaDir))) throw new Error('not servable');
    } catch {
      throw httpError('NOT_FOUND', notFound);
    }
    const mime = file.mime ?? mimeForPath(path) ?? 'application/octet-stream';
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Content-Security-Policy', "default-src 'none'; sandbox");
    c.header('Cache-Control', 'private, max-age=300');

    if (input.size === 'thumb' && ref.frame === undefined && file.asset.thumbnail !== undefined) {
      // The thumbnail (image) or frame strip (video) the media digest stored; made once, read here.
      const stored = await storedThumbnail(file.asset.thumbnail, graphmemix.mediaDir);
      if (stored !== undefined) {
        c.header('Content-Type', 'image/jpeg');
        c.header('Content-Length', String(stored.size));
        return c.body(Readable.toWeb(createReadStream(stored.path)) as ReadableStream<Uint8Array>);
      }
    }
    if (input.size === 'thumb' && mime.startsWith('image/') && size <= MAX_THUMB_SOURCE_BYTES) {
      const thumb = await thumbnails.get(`${path}\0${size}\0${modified}`, async () => {
        const made = await thumbnailJpeg(await readFile(path), THUMB_EDGE, DEFAULT_MEDIA_LIMITS);
        return made === undefined ? undefined : new Uint8Array(made);
      });
      if (thumb !== undefined) {
        c.header('Content-Type', 'image/jpeg');
        return c.body(thumb);
      }
    }
    c.header('Content-Type', mime);
    c.header('Accept-Ranges', 'bytes');
    const range = parseRange(c.req.header('range'), size);
    if (range === 'unsatisfiable') {
      c.header('Content-Range', `bytes */${size}`);
      return c.body(null, 416);
    }
    const { start, end } = range ?? { start: 0, end: size - 1 };
    c.header('Content-Length', String(Math.max(0, end - start + 1)));
    if (range) c.header('Content-Range', `bytes ${start}-${end}/${size}`);
    if (size === 0) return c.body(null, 200);
    const stream = Readable.toWeb(createReadStream(path, { start, end })) as ReadableStream<Uint8Array>;
    return c.body(stream, range ? 206 : 200);
  });
}

/**
 * A stored thumbnail's real path and size when it is a regular file inside the archive's media folder (the
 * only place the digest writes them); undefined otherwise (an older archive, a removed file: the route then
 * makes one on request).
 */
async function storedThumbnail(
  thumbnail: string,
  mediaDir: string | undefined,
): Promise<{ path: string; size: number } | undefined> {
  if (mediaDir === undefined || !isAbsolute(thumbnail) || thumbnail.includes('\0')) return undefined;
  try {
    const [path, root] = await Promise.all([realpath(thumbnail), realpath(mediaDir)]);
    const rel = relative(root, path);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return undefined;
    const info = await stat(path);
    return info.isFile() ? { path, size: info.size } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One byte range of `Range: bytes=a-b | a- | -n` within `size`; undefined without a Range header (the whole
 * file); 'unsatisfiable' for anything else (several ranges, malformed, past the end, a header over 200 chars).
 */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | undefined | 'unsatisfiable' {
  if (header === undefined) return undefined;
  if (header.length > 200) return 'unsatisfiable';
  const match = /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '') || size === 0) return 'unsatisfiable';
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}
