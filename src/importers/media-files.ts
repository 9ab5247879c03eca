import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mimeForPath } from '../types/media-mime.ts';
import type { AssetKind, DerivedFields, MediaAsset } from '../types/memory-record.ts';

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
  if (/^file:/i.test(reference)) return { remote: false, path: fileURLToPath(reference) };
  return { remote: false, path: isAbsolute(reference) ? reference : resolve(baseDirectory, reference) };
}

export async function isReadableFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
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
 * The caller reports missing files as warnings. Local files get an absolute uri, MIME type and sha256.
 */
export async function referencedAsset(
  reference: string,
  baseDirectory: string,
  fields: { id: string; kind?: AssetKind; derived?: DerivedFields },
): Promise<ReferencedAsset> {
  const location = locateMedia(reference, baseDirectory);
  const mime = mimeForPath(location.remote ? location.uri : location.path);
  const kind = fields.kind ?? assetKindForMime(mime) ?? 'image';
  const base: MediaAsset = { id: fields.id, kind };
  if (mime !== undefined) base.mime = mime;
  if (fields.derived !== undefined && hasDerivedText(fields.derived)) base.derived = fields.derived;
  if (location.remote) return { asset: { ...base, uri: location.uri }, missing: false };
  if (await isReadableFile(location.path)) {
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
