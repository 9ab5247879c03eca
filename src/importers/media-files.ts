import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mimeForPath } from '../types/media-mime.ts';
import type { AssetKind, DerivedFields, MediaAsset } from '../types/memory-record.ts';
import { isBelow } from '../types/path-within.ts';

export { mimeForPath };

export function assetKindForMime(mime: string | undefined): AssetKind | undefined {
  if (mime === undefined) return undefined;
  if (mime.startsWith('image/')) return 'image';
  if (mime.startsWith('video/')) return 'video';
  if (mime.startsWith('audio/')) return 'audio';
  return 'document';
}

/**
 * Where a media reference points: a remote URL (http, https, data; kept verbatim, never fetched) or a local
 * file (relative references resolve against the directory of the file that names them).
 */
export type MediaLocation = { remote: true; uri: string } | { remote: false; path: string };

export function locateMedia(reference: string, baseDirectory: string): MediaLocation {
  if (/^(?:https?|data):/i.test(reference)) return { remote: true, uri: reference };
  if (/^file:/i.test(reference)) {
    try {
      return { remote: false, path: fileURLToPath(reference) };
    } catch {
      // A malformed file: URL (encoded NUL or slash) names nothing an importer may read.
      return { remote: false, path: '\0' };
    }
  }
  return { remote: false, path: isAbsolute(reference) ? reference : resolve(baseDirectory, reference) };
}

export async function isReadableFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** Largest media file an importer references (a regular file; devices and FIFOs are never read). */
export const MAX_IMPORT_MEDIA_BYTES = 1024 * 1024 * 1024;

/**
 * True when `path` is a regular file of at most MAX_IMPORT_MEDIA_BYTES whose REAL path (symlinks resolved)
 * lies inside `root`, the import root: `../../etc/passwd`, absolute paths elsewhere, `file:` URLs elsewhere
 * and symlinks pointing out all answer false and are handled like a missing file.
 */
export async function isMediaFileInside(path: string, root: string): Promise<boolean> {
  if (path.includes('\0')) return false;
  try {
    const [real, realRoot] = await Promise.all([realpath(path), realpath(root)]);
    if (!isBelow(realRoot, real)) return false;
    const info = await stat(real);
    return info.isFile() && info.size <= MAX_IMPORT_MEDIA_BYTES;
  } catch {
    return false;
  }
}

/** The default import root of an importer's `path`: the folder itself, or the folder of a file. */
export async function importRootOf(path: string): Promise<string> {
  const full = resolve(path);
  try {
    return (await stat(full)).isDirectory() ? full : dirname(full);
  } catch {
    return dirname(full);
  }
}

/** sha256 hex of a file, streamed (videos can be large). */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** An asset built from a dataset media reference, and whether its local file was missing. */
export interface ReferencedAsset {
  /** Undefined when the file is missing and nothing derived (caption, OCR) is known about it. */
  asset: MediaAsset | undefined;
  missing: boolean;
}

/**
 * Builds a media asset from a reference named by a source file. Missing-file policy (one rule for every
 * importer, documented in docs/archive-format.md): a missing local file never rejects its record; the asset
 * keeps its derived text (a dataset caption is still evidence) without `uri`, or is dropped when it has none.
 * The caller reports missing files as warnings. Local files get an absolute uri, MIME type and sha256; a file
 * outside `root` (the import root) counts as missing (isMediaFileInside).
 */
export async function referencedAsset(
  reference: string,
  baseDirectory: string,
  fields: { id: string; kind?: AssetKind; derived?: DerivedFields },
  root: string = baseDirectory,
): Promise<ReferencedAsset> {
  const location = locateMedia(reference, baseDirectory);
  const mime = mimeForPath(location.remote ? location.uri : location.path);
  const kind = fields.kind ?? assetKindForMime(mime) ?? 'image';
  const base: MediaAsset = { id: fields.id, kind };
  if (mime !== undefined) base.mime = mime;
  if (fields.derived !== undefined && hasDerivedText(fields.derived)) base.derived = fields.derived;
  if (location.remote) return { asset: { ...base, uri: location.uri }, missing: false };
  if (await isMediaFileInside(location.path, root)) {
    return {
      asset: { ...base, uri: location.path, sha256: await sha256File(location.path) },
      missing: false,
    };
  }
  return { asset: base.derived === undefined ? undefined : base, missing: true };
}

export function hasDerivedText(derived: DerivedFields): boolean {
  return (
    (derived.captions ?? []).some((caption) => caption.trim() !== '') ||
    (derived.ocr ?? '').trim() !== '' ||
    (derived.summary ?? '').trim() !== '' ||
    (derived.tags ?? []).length > 0
  );
}

/** Collects missing media references per source file and turns them into one readable warning. */
export class MissingMediaLog {
  readonly #references: string[] = [];

  add(reference: string): void {
    this.#references.push(reference);
  }

  get count(): number {
    return this.#references.length;
  }

  /** Undefined when nothing was missing. */
  message(baseDirectory: string): string | undefined {
    if (this.#references.length === 0) return undefined;
    const examples = this.#references.slice(0, 3).join(', ');
    const more = this.#references.length > 3 ? `, ... (${this.#references.length - 3} more)` : '';
    return (
      `${this.#references.length} media file(s) not found relative to ${baseDirectory}: ${examples}${more}; ` +
      'each is kept without uri where it has a caption, otherwise dropped'
    );
  }
}
