import { isAbsolute, relative, sep } from 'node:path';

/**
 * True when `path` is `root` or below it, by path text (resolve symlinks first where they matter). A name that
 * merely starts with two dots (`<root>/..x`) is below the root; `..` and `../x` are not.
 */
export function isWithin(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** True when `path` is strictly below `root` (isWithin, the root itself excluded). */
export function isBelow(root: string, path: string): boolean {
  return relative(root, path) !== '' && isWithin(root, path);
}
