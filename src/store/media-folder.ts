import { rm, unlink } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { ArchiveStore } from './archive-store-spec.ts';

/** Records per listMemories page when looking for remaining references. */
const PAGE = 2000;

/**
 * The archive's own media folder (uploads land in `<dir>/<context id>/`, see src/server/save-upload.ts).
 * Files in it belong to the archive, so forgetting a memory or a user removes them; a file anywhere else
 * (a photo imported from the user's own disk) is only referenced, never deleted.
 */
export interface MediaFolder {
  readonly dir: string;
  /** The absolute path of a uri (plain path or file: URL) when it lies inside the folder. */
  owned(uri: string): string | undefined;
  /** Owned files referenced by these records (asset uris and video frames). */
  ownedPaths(records: Iterable<MemoryRecord>): Set<string>;
  /** Deletes the given owned files that no memory of the context references any more. Returns how many. */
  removeUnreferenced(store: ArchiveStore, contextId: string, paths: Iterable<string>): Promise<number>;
  /** Deletes the context's own sub-folder (uploads, photo imports) and the given files. */
  removeContext(contextId: string, paths: Iterable<string>): Promise<number>;
}

export function createMediaFolder(dir: string): MediaFolder {
  const root = resolve(dir);
  const inside = (path: string): boolean => {
    const rel = relative(root, path);
    return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  };

  const owned = (uri: string): string | undefined => {
    let path: string;
    try {
      path = uri.startsWith('file:') ? fileURLToPath(uri) : uri;
    } catch {
      return undefined;
    }
    if (!isAbsolute(path)) return undefined;
    const absolute = resolve(path);
    return inside(absolute) ? absolute : undefined;
  };

  const ownedPaths = (records: Iterable<MemoryRecord>): Set<string> => {
    const paths = new Set<string>();
    for (const record of records) {
      for (const asset of record.assets) {
        for (const uri of [asset.uri, ...(asset.frames ?? [])]) {
          const path = uri === undefined ? undefined : owned(uri);
          if (path !== undefined) paths.add(path);
        }
      }
    }
    return paths;
  };

  const removeFiles = async (paths: Iterable<string>): Promise<number> => {
    let removed = 0;
    for (const path of paths) {
      if (!inside(path)) continue;
      try {
        await unlink(path);
        removed++;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    return removed;
  };

  return {
    dir: root,
    owned,
    ownedPaths,
    async removeUnreferenced(store, contextId, paths) {
      const candidates = new Set([...paths].filter(inside));
      if (candidates.size === 0) return 0;
      // Uploads are content-addressed, so another memory may share the file: keep what is still referenced.
      let last: MemoryRecord | undefined;
      for (;;) {
        const page = await store.listMemories(
          contextId,
          last === undefined
            ? { limit: PAGE }
            : { afterSequence: last.sequence, afterId: last.id, limit: PAGE },
        );
        for (const path of ownedPaths(page)) candidates.delete(path);
        if (page.length < PAGE || candidates.size === 0) break;
        last = page[page.length - 1]!;
      }
      return removeFiles(candidates);
    },
    async removeContext(contextId, paths) {
      const removed = await removeFiles(paths);
      const folder = join(root, contextId);
      // Only a plain child folder: a context id with separators or dots never names a path outside.
      if (inside(folder) && relative(root, folder) === contextId) {
        await rm(folder, { recursive: true, force: true });
      }
      return removed;
    },
  };
}
