import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { MediaAsset } from '../types/memory-record.ts';

/**
 * Saves an uploaded media file under `<mediaDir>/<userId>/` named by its content hash (so a re-upload of the
 * same bytes reuses one file) and returns the asset that references it. The user id was validated to be
 * path-safe by the shared schema; the client's file name only contributes a sanitized extension.
 */
export async function saveUpload(mediaDir: string, userId: string, file: File): Promise<MediaAsset> {
  const bytes = Buffer.from(await file.arrayBuffer());
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const ext = extname(file.name)
    .toLowerCase()
    .replace(/[^.a-z0-9]/g, '')
    .slice(0, 8);
  const dir = join(mediaDir, userId);
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${sha256.slice(0, 32)}${ext}`);
  await writeFile(path, bytes);
  const mime = file.type || undefined;
  return {
    id: `upload-${sha256.slice(0, 12)}`,
    kind: assetKind(mime ?? '', ext),
    uri: path,
    ...(mime === undefined ? {} : { mime }),
    sha256,
  };
}

/** A file name safe to write in a directory we own (imports keep the extension the importer looks for). */
export function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const cleaned = base.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '');
  return cleaned.slice(-120) || 'upload';
}

function assetKind(mime: string, ext: string): MediaAsset['kind'] {
  if (mime.startsWith('image/') || ['.jpg', '.jpeg', '.png', '.webp', '.gif', '.heic'].includes(ext))
    return 'image';
  if (mime.startsWith('video/') || ['.mp4', '.mov', '.webm'].includes(ext)) return 'video';
  if (mime.startsWith('audio/')) return 'audio';
  return 'document';
}
