import { join } from 'node:path';

/**
 * Absolute paths for tests that start child processes, so they run (and never skip) whatever folder vitest
 * was started from.
 */
export const REPO_ROOT = join(import.meta.dirname, '../..');
export const BIN = join(REPO_ROOT, 'bin/graphmemix.js');
/** tsx's loader as an absolute URL for `node --import` (a bare `tsx` resolves from the working folder). */
export const TSX_IMPORT = import.meta.resolve('tsx');
