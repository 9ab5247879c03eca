import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  statSync,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CopyRewrite } from '../store/copy-archive.ts';
import { createMediaFolder } from '../store/media-folder.ts';
import type { MediaAsset, MemoryRecord } from '../types/memory-record.ts';
import type { MemoryView } from '../types/view.ts';
import { contentHash } from './content-hash.ts';
import { relationKeys } from './incremental/relation-keys.ts';

/**
 * The media part of `graphmemix copy`: files inside the source archive's media folder (uploads) are copied to
 * the same place under the target's folder, and records and views are pointed at the copies, so the target
 * archive owns its media (forget removes them there; a model may be sent them). Files elsewhere (a photo
 * imported from the user's disk) are only referenced and stay as they are. A moved record gets its content
 * hash and relation keys (media reference keys name the path) recomputed from the rewritten record.
 * `undefined` when both folders are the same.
 *
 * `external: 'copy'` (backup bundles) also copies local files outside the source folder, into
 * `<to>/external/<hash of their folder>/<name>`, so the bundle carries every local medium it references and the
 * restored archive owns them; remote URLs stay references. Only regular files whose bytes still match the
 * asset's recorded sha256 are copied (no links, nothing a stored uri merely names).
 */
export function mediaRewrite(
  fromDir: string,
  toDir: string,
  options: { external?: 'reference' | 'copy' } = {},
): (CopyRewrite & { stats: { files: number; missing: number } }) | undefined {
  const from = createMediaFolder(fromDir);
  const to = resolve(toDir);
  if (from.dir === to) return undefined;
  const stats = { files: 0, missing: 0 };
  // Paths outside the source folder are copied only when an asset's recorded sha256 matches the file now: the
  // bundle carries exactly what was imported, never whatever a stored uri happens to name (/etc/..., /proc/...).
  const verified = new Set<string>();
  const externalPath = (uri: string, sha256?: string): string | undefined => {
    if (options.external !== 'copy') return undefined;
    const path = uri.startsWith('file:') ? safeFileUrlPath(uri) : isAbsolute(uri) ? uri : undefined;
    if (path === undefined) return undefined;
    if (verified.has(path)) return path;
    if (sha256 === undefined || !existsSync(path) || !lstatSync(path).isFile()) return undefined;
    if (sha256OfFile(path) !== sha256) return undefined;
    verified.add(path);
    return path;
  };
  const sourceOf = (uri: string, sha256?: string): { path: string; destination: string } | undefined => {
    const owned = from.owned(uri);
    if (owned !== undefined) return { path: owned, destination: join(to, relative(from.dir, owned)) };
    const external = externalPath(uri, sha256);
    if (external === undefined) return undefined;
    const folder = createHash('sha256').update(dirname(external)).digest('hex').slice(0, 16);
    return { path: external, destination: join(to, 'external', folder, basename(external)) };
  };
  const move = (uri: string, sha256?: string): string => {
    const source = sourceOf(uri, sha256);
    if (source === undefined) return uri;
    const { path, destination } = source;
    if (!existsSync(destination) || statSync(destination).size !== sizeOf(path)) {
      if (existsSync(path)) {
        mkdirSync(dirname(destination), { recursive: true });
        copyFileSync(path, destination);
        stats.files += 1;
      } else stats.missing += 1;
    }
    return uri.startsWith('file:') ? pathToFileURL(destination).href : destination;
  };
  const movesAsset = (asset: MediaAsset): boolean =>
    (asset.uri !== undefined && sourceOf(asset.uri, asset.sha256) !== undefined) ||
    (asset.frames ?? []).some((uri) => sourceOf(uri) !== undefined) ||
    (asset.thumbnail !== undefined && sourceOf(asset.thumbnail) !== undefined);
  return {
    stats,
    record(record: MemoryRecord): MemoryRecord {
      if (!record.assets.some(movesAsset)) return record;
      return {
        ...record,
        assets: record.assets.map((asset) =>
          movesAsset(asset)
            ? {
                ...asset,
                ...(asset.uri === undefined ? {} : { uri: move(asset.uri, asset.sha256) }),
                ...(asset.frames === undefined ? {} : { frames: asset.frames.map((uri) => move(uri)) }),
                ...(asset.thumbnail === undefined ? {} : { thumbnail: move(asset.thumbnail) }),
              }
            : asset,
        ),
      };
    },
    hash: contentHash,
    keys: relationKeys,
    view(view: MemoryView): MemoryView {
      return view.uri === undefined || sourceOf(view.uri) === undefined
        ? view
        : { ...view, uri: move(view.uri) };
    },
  };
}

function sizeOf(path: string): number {
  return existsSync(path) ? statSync(path).size : -1;
}

function safeFileUrlPath(uri: string): string | undefined {
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

/** sha256 of a file read in 1 MiB chunks (a large video never sits in memory whole). */
function sha256OfFile(path: string): string {
  const hash = createHash('sha256');
  const buffer = Buffer.alloc(1 << 20);
  const fd = openSync(path, 'r');
  try {
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer))
      hash.update(buffer.subarray(0, read));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}
