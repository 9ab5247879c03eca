import { readFile, stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { DEFAULT_MEDIA_LIMITS, thumbnailJpeg } from '../index.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { ViewerOptions } from './render-viewer-html.ts';

/** Longest edge of an inlined thumbnail, and the most inlined per page (they are base64 in the HTML). */
const EDGE = 160;
const MAX_THUMBS = 200;
const MAX_SOURCE_BYTES = 32 * 1024 * 1024;
const MAX_STRIP_BYTES = 512 * 1024;

/**
 * Thumbnails of the records' images and video frames as `data:` URIs, for a self-contained viewer file
 * (`graphmemix view`, the demo): the page stays one file that works offline. Local files only, bounded
 * decode; unreadable files are left out. Returns ViewerOptions.mediaUrl.
 */
export async function inlineThumbnails(
  records: Iterable<MemoryRecord>,
): Promise<NonNullable<ViewerOptions['mediaUrl']>> {
  const uris = new Map<string, string>();
  const key = (memoryId: string, assetId: string, frame?: number) =>
    `${memoryId}\n${assetId}\n${frame ?? ''}`;
  for (const record of records) {
    for (const asset of record.assets) {
      const files: [string, number | undefined][] = [];
      // A stored thumbnail (or a video's frame strip) is the cheaper source: already small and decoded once.
      if (asset.kind === 'image' && asset.uri !== undefined)
        files.push([asset.thumbnail ?? asset.uri, undefined]);
      if (asset.kind === 'video' && asset.thumbnail !== undefined) {
        const strip = await storedJpeg(asset.thumbnail);
        if (strip !== undefined && uris.size < MAX_THUMBS) uris.set(key(record.id, asset.id), strip);
      } else for (const [i, frame] of (asset.frames ?? []).entries()) files.push([frame, i]);
      for (const [file, frame] of files) {
        if (uris.size >= MAX_THUMBS) break;
        const data = await thumbnail(file);
        if (data !== undefined) uris.set(key(record.id, asset.id, frame), data);
      }
    }
  }
  return (ref) => uris.get(key(ref.memoryId, ref.assetId, ref.frame)) ?? '';
}

/** A stored frame strip inlined as it is (already a small JPEG; re-encoding it to 160 px would shrink it away). */
async function storedJpeg(file: string): Promise<string | undefined> {
  if (!isAbsolute(file)) return undefined;
  try {
    const info = await stat(file);
    if (!info.isFile() || info.size > MAX_STRIP_BYTES) return undefined;
    return `data:image/jpeg;base64,${(await readFile(file)).toString('base64')}`;
  } catch {
    return undefined;
  }
}

async function thumbnail(file: string): Promise<string | undefined> {
  if (!isAbsolute(file)) return undefined;
  try {
    const info = await stat(file);
    if (!info.isFile() || info.size > MAX_SOURCE_BYTES) return undefined;
    const jpeg = await thumbnailJpeg(await readFile(file), EDGE, DEFAULT_MEDIA_LIMITS);
    return jpeg === undefined ? undefined : `data:image/jpeg;base64,${jpeg.toString('base64')}`;
  } catch {
    return undefined;
  }
}
