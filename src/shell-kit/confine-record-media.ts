import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { MemoryRecordInput } from '../graphmemix-api.ts';
import { isBelow } from '../types/path-within.ts';

/** Longest inline `data:` URI a record may carry (bigger media go through an upload). */
export const MAX_DATA_URI_CHARS = 64 * 1024;
/** Longest remote URL kept as data. */
export const MAX_REMOTE_URI_CHARS = 4096;

/**
 * The media rule for records added through HTTP or MCP: an asset (or video frame) may reference only
 * - a file in this user's folder of the archive's media store (`<mediaDir>/<userId>/`: uploads of this or
 *   an earlier request), checked on the real path (symlinks resolved) and as a regular file;
 * - a remote `http(s):` URL or a small `data:` URI, kept as data: never fetched, and sent to a model only
 *   when the media allow-list names it (see src/providers/to-image-url.ts).
 * Anything else (another local path, `file:` URIs, relative paths, other schemes, NUL bytes) is a 400
 * naming the field, e.g. `memories[0].assets[1].uri`, and nothing of the request is stored.
 */
export async function confineRecordMedia(
  records: readonly MemoryRecordInput[],
  options: { userId: string; mediaDir: string | undefined; field?: string },
): Promise<void> {
  const base = options.field ?? 'memories';
  for (const [i, record] of records.entries()) await confineOne(record, `${base}[${i}].`, userDirOf(options));
}

/**
 * The same rule for an update's patch (PATCH /v1/memories/:id, MCP update_memory): the fields it gives
 * replace the stored ones, so its `assets` and `media` are held to what an add may carry (fields named
 * `assets[0].uri`). Without it an update could point a memory at any file the server can read.
 */
export async function confinePatchMedia(
  patch: object,
  options: { userId: string; mediaDir: string | undefined },
): Promise<void> {
  await confineOne(patch, '', userDirOf(options));
}

function userDirOf(options: { userId: string; mediaDir: string | undefined }): string | undefined {
  return options.mediaDir === undefined ? undefined : join(options.mediaDir, options.userId);
}

async function confineOne(record: object, prefix: string, userDir: string | undefined): Promise<void> {
  // The digest state is the server's own bookkeeping: a client cannot mark its media as already read.
  if ((record as { media?: unknown }).media !== undefined)
    throw refuse(`${prefix}media`, 'is set by the server');
  const assets = (record as { assets?: unknown }).assets;
  if (!Array.isArray(assets)) return;
  for (const [j, asset] of assets.entries()) {
    if (typeof asset !== 'object' || asset === null) continue;
    const { uri, frames, thumbnail } = asset as { uri?: unknown; frames?: unknown; thumbnail?: unknown };
    // Stored thumbnails are files the media digest writes; a client never names one.
    if (thumbnail !== undefined) throw refuse(`${prefix}assets[${j}].thumbnail`, 'is set by the server');
    if (uri !== undefined) await checkUri(uri, `${prefix}assets[${j}].uri`, userDir);
    if (Array.isArray(frames)) {
      for (const [k, frame] of frames.entries())
        await checkUri(frame, `${prefix}assets[${j}].frames[${k}]`, userDir);
    }
  }
}

async function checkUri(uri: unknown, field: string, userDir: string | undefined): Promise<void> {
  if (typeof uri !== 'string') throw refuse(field, 'must be a string');
  if (/^https?:\/\//i.test(uri)) {
    if (uri.length > MAX_REMOTE_URI_CHARS)
      throw refuse(field, `URL longer than ${MAX_REMOTE_URI_CHARS} characters`);
    if (/[\0\s]/.test(uri)) throw refuse(field, 'URL contains whitespace or NUL');
    return;
  }
  if (/^data:/i.test(uri)) {
    if (uri.length > MAX_DATA_URI_CHARS) {
      throw refuse(field, `data: URI longer than ${MAX_DATA_URI_CHARS} characters; upload the file instead`);
    }
    return;
  }
  if (userDir === undefined || !(await insideUserMedia(uri, userDir))) {
    throw refuse(
      field,
      "may reference only media uploaded with this request or already in this user's media store, or an http(s) URL",
    );
  }
}

async function insideUserMedia(uri: string, userDir: string): Promise<boolean> {
  if (uri.includes('\0') || !isAbsolute(uri) || /^[a-z][a-z0-9+.-]*:/i.test(uri)) return false;
  try {
    const [real, root] = await Promise.all([realpath(uri), realpath(userDir)]);
    if (!isBelow(root, real)) return false;
    return (await stat(real)).isFile();
  } catch {
    return false;
  }
}

function refuse(field: string, why: string): GraphmemixError {
  // The location already prefixes the message with the field.
  return new GraphmemixError('INVALID_INPUT', why, {
    location: { field },
    details: { issues: [{ path: field, message: why }] },
  });
}
