import { existsSync } from 'node:fs';
import { readdir, rmdir, stat, unlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { ArchiveStore } from './archive-store-spec.ts';

/**
 * The archive's own media folder (uploads land in `<dir>/<context id>/`, see src/server/save-upload.ts).
 * Files in it belong to the archive, so forgetting a memory or a user removes them; a file anywhere else
 * (a photo imported from the user's own disk) is only referenced, never deleted.
 */
export interface MediaFolder {
  readonly dir: string;
  /** The absolute path of a uri (plain path or file: URL) when it lies inside the folder. */
  owned(uri: string): string | undefined;
  /** Owned files referenced by these records (asset uris, video frames, stored thumbnails). */
  ownedPaths(records: Iterable<MemoryRecord>): Set<string>;
  /**
   * Deletes the given owned files that no memory of ANY context references (the same file may be imported
   * into several contexts), then folders left empty. Returns how many files went.
   */
  removeUnreferenced(store: ArchiveStore, paths: Iterable<string>): Promise<number>;
  /** The context's own sub-folder (`<dir>/<context id>`), when the id is one plain path segment. */
  contextFolder(contextId: string): string | undefined;
  /** removeUnreferenced for a forgotten context: the given files plus everything in its own sub-folder. */
  removeContext(store: ArchiveStore, contextId: string, paths: Iterable<string>): Promise<number>;
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
        for (const uri of [asset.uri, ...(asset.frames ?? []), asset.thumbnail]) {
          const path = uri === undefined ? undefined : owned(uri);
          if (path !== undefined) paths.add(path);
        }
      }
    }
    return paths;
  };

  const removeUnreferenced = async (store: ArchiveStore, paths: Iterable<string>): Promise<number> => {
    const candidates = new Set([...paths].filter(inside));
    if (candidates.size === 0) return 0;
    // Uploads are content-addressed and files can be imported into several contexts: keep what is referenced.
    // Records carry a relation key per local media path (mediaReferenceKey): the store answers for all contexts
    // with one probe per file (heldMediaKeys); a backend without it is asked context by context (one index
    // lookup each, but as many as there are users: a delete walked every context before round 53).
    const keys = [...candidates].map((path) => `${MEDIA_KEY}${path}`);
    if (store.heldMediaKeys !== undefined) {
      for (const key of await store.heldMediaKeys(keys)) candidates.delete(key.slice(MEDIA_KEY.length));
    } else {
      for (const context of await store.listContexts()) {
        if (candidates.size === 0) break;
        const left = [...candidates].map((path) => `${MEDIA_KEY}${path}`);
        for (const path of ownedPaths(await store.findByKeys(context.id, left))) candidates.delete(path);
      }
    }
    let removed = 0;
    for (const path of candidates) {
      try {
        await unlink(path);
        removed++;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      await pruneEmpty(dirname(path));
    }
    return removed;
  };

  /** Removes empty folders from `folder` up to (not including) the root; stops at the first non-empty one. */
  const pruneEmpty = async (folder: string): Promise<void> => {
    for (let current = folder; inside(current); current = dirname(current)) {
      try {
        await rmdir(current);
      } catch {
        return;
      }
    }
  };

  // Only a plain child folder: a context id with separators or dots never names another folder.
  const contextFolder = (contextId: string): string | undefined =>
    contextId !== '' &&
    contextId !== '.' &&
    contextId !== '..' &&
    basename(contextId) === contextId &&
    !contextId.includes('\\')
      ? join(root, contextId)
      : undefined;

  return {
    dir: root,
    owned,
    ownedPaths,
    removeUnreferenced,
    contextFolder,
    async removeContext(store, contextId, paths) {
      const candidates = new Set(paths);
      const folder = contextFolder(contextId);
      if (folder !== undefined && existsSync(folder)) {
        for (const name of await readdir(folder, { recursive: true, encoding: 'utf8' })) {
          const path = join(folder, name);
          if ((await stat(path)).isFile()) candidates.add(path);
        }
      }
      const removed = await removeUnreferenced(store, candidates);
      if (folder !== undefined) await pruneEmptyTree(folder);
      return removed;
    },
  };

  /** Removes every empty folder inside `folder`, deepest first, and `folder` itself when it ends up empty. */
  async function pruneEmptyTree(folder: string): Promise<void> {
    if (!inside(folder) || !existsSync(folder)) return;
    const names = await readdir(folder, { recursive: true, encoding: 'utf8' });
    const folders = names.map((name) => join(folder, name)).sort((x, y) => y.length - x.length);
    for (const path of [...folders, folder]) await rmdir(path).catch(() => undefined);
  }
}

/** Relation-key prefix of a record's local media (see mediaReferenceKey). */
export const MEDIA_KEY = 'media:';

/**
 * The lookup key a record holds for a local media file it references (absolute path or file: URI,
 * normalised like the media folder resolves it); undefined for remote or relative references. Lets a delete
 * find whether any other memory still references an upload without walking the archive.
 */
export function mediaReferenceKey(uri: string): string | undefined {
  let path: string;
  try {
    path = uri.startsWith('file:') ? fileURLToPath(uri) : uri;
  } catch {
    return undefined;
  }
  return isAbsolute(path) ? `${MEDIA_KEY}${resolve(path)}` : undefined;
}
