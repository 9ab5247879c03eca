import { readdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { GraphmemixError } from '../errors/graphmemix-error.ts';

/** Folders never searched: VCS metadata and dependency trees are not archives. */
const SKIPPED_DIRECTORIES = new Set(['.git', '.hg', '.svn', 'node_modules']);

/**
 * Resolves an importer's `path` argument to the files it reads. A file is taken as given (the user named
 * it, whatever its extension); a directory is searched recursively for files `accept` recognises.
 * Results are absolute and sorted by code point, so every run reads files in the same order (sequence
 * numbers and ids stay stable across machines and locales).
 */
export async function findFiles(path: string, accept: (fileName: string) => boolean): Promise<string[]> {
  const root = resolve(path);
  const info = await statOrThrow(root);
  if (info.isFile()) return [root];
  if (!info.isDirectory()) {
    throw new GraphmemixError('NOT_FOUND_PATH', 'not a file or directory', { location: { file: root } });
  }
  const found: string[] = [];
  await walk(root, accept, found);
  return found.sort(compareCodePoints);
}

/** Plain code-point order (not locale order), for determinism. */
export function compareCodePoints(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** True when `fileName` ends with one of the extensions (case-insensitive, extensions with the dot). */
export function hasExtension(fileName: string, extensions: readonly string[]): boolean {
  const lower = basename(fileName).toLowerCase();
  return extensions.some((extension) => lower.endsWith(extension));
}

async function walk(directory: string, accept: (fileName: string) => boolean, out: string[]): Promise<void> {
  const entries = await readdir(directory, { withFileTypes: true });
  for (const entry of entries) {
    const full = join(directory, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRECTORIES.has(entry.name)) await walk(full, accept, out);
    } else if (entry.isFile() && accept(entry.name)) {
      out.push(full);
    }
  }
}

async function statOrThrow(path: string): Promise<Awaited<ReturnType<typeof stat>>> {
  try {
    return await stat(path);
  } catch (cause) {
    throw new GraphmemixError('NOT_FOUND_PATH', 'no such file or directory', {
      location: { file: path },
      cause,
    });
  }
}
