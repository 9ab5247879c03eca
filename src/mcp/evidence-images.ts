import { readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { DEFAULT_MEDIA_LIMITS, thumbnailJpeg } from '../index.ts';
import type { RetrievalResult } from '../pipeline/retrieval-result.ts';
import { servableMedia } from '../shell-kit/servable-media.ts';

/** Caps of the images an MCP reply carries (remote clients cannot open the archive's file paths). */
export const MCP_IMAGE_LIMITS = {
  /** Images per reply (evidence images first, then video frames, in reading order). */
  maxImages: 8,
  /** Longest edge of each image sent. */
  edge: 768,
  /** Bytes of one encoded image; a bigger one is skipped. */
  maxImageBytes: 256 * 1024,
  /** Bytes of all images of one reply. */
  maxTotalBytes: 1536 * 1024,
  /** Largest source file read to make one. */
  maxSourceBytes: 32 * 1024 * 1024,
} as const;

export interface McpImage {
  type: 'image';
  /** base64 JPEG. */
  data: string;
  mimeType: 'image/jpeg';
}

/**
 * The evidence's images and video frames as MCP image content: each local file re-encoded as a JPEG of at
 * most MCP_IMAGE_LIMITS.edge px (bounded decode), capped per image, per reply and in count. Remote URLs are
 * never fetched; unreadable files, and files the media route would not send (servableMedia), are skipped.
 * Returns the images and, per image, the memory it belongs to.
 */
export async function evidenceImages(
  result: RetrievalResult,
  userId: string,
  mediaDir: string | undefined,
): Promise<{ images: McpImage[]; of: string[] }> {
  const images: McpImage[] = [];
  const of: string[] = [];
  let total = 0;
  for (const item of result.evidence) {
    for (const media of item.media) {
      if (images.length >= MCP_IMAGE_LIMITS.maxImages) return { images, of };
      if (media.kind === 'video' || !isAbsolute(media.uri)) continue;
      try {
        const path = await realpath(media.uri);
        const info = await stat(path);
        if (!info.isFile() || info.size > MCP_IMAGE_LIMITS.maxSourceBytes) continue;
        // The media route's rule: not another user's folder of the media store, not an archive file.
        if (!(await servableMedia(path, userId, mediaDir))) continue;
        const jpeg = await thumbnailJpeg(await readFile(path), MCP_IMAGE_LIMITS.edge, DEFAULT_MEDIA_LIMITS);
        if (jpeg === undefined || jpeg.length > MCP_IMAGE_LIMITS.maxImageBytes) continue;
        if (total + jpeg.length > MCP_IMAGE_LIMITS.maxTotalBytes) return { images, of };
        total += jpeg.length;
        images.push({ type: 'image', data: jpeg.toString('base64'), mimeType: 'image/jpeg' });
        of.push(item.memoryId);
      } catch {
        // A file gone or unreadable since it was imported: the text evidence still stands.
      }
    }
  }
  return { images, of };
}
