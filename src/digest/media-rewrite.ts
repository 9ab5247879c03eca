import { copyFileSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
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
 */
export function mediaRewrite(
  fromDir: string,
  toDir: string,
): (CopyRewrite & { stats: { files: number; missing: number } }) | undefined {
  const from = createMediaFolder(fromDir);
  const to = resolve(toDir);
  if (from.dir === to) return undefined;
  const stats = { files: 0, missing: 0 };
  const move = (uri: string): string => {
    const path = from.owned(uri);
    if (path === undefined) return uri;
    const destination = join(to, relative(from.dir, path));
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
    [asset.uri, ...(asset.frames ?? [])].some((uri) => uri !== undefined && from.owned(uri) !== undefined);
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
                ...(asset.uri === undefined ? {} : { uri: move(asset.uri) }),
                ...(asset.frames === undefined ? {} : { frames: asset.frames.map(move) }),
              }
            : asset,
        ),
      };
    },
    hash: contentHash,
    keys: relationKeys,
    view(view: MemoryView): MemoryView {
      return view.uri === undefined || from.owned(view.uri) === undefined
        ? view
        : { ...view, uri: move(view.uri) };
    },
  };
}

function sizeOf(path: string): number {
  return existsSync(path) ? statSync(path).size : -1;
}
