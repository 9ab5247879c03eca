import { open, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { isWithin } from '../types/path-within.ts';

/** The first bytes of a SQLite database file, and of its WAL (either byte order of the checksums). */
const SQLITE_MAGIC = [
  Buffer.from('SQLite format 3\0', 'latin1'),
  Buffer.from([0x37, 0x7f, 0x06, 0x82]),
  Buffer.from([0x37, 0x7f, 0x06, 0x83]),
];

/**
 * Whether a media file a record names (`path`: its real path) may be sent to a client (GET /v1/media, MCP
 * evidence images), whatever its uri says: adds and patches are confined when written
 * (src/shell-kit/confine-record-media.ts), but a record written by an older version, or by the library, may name
 * any file. Inside the server's media folder only the user's own folder (`<mediaDir>/<user>/`, not another user's
 * uploads or digest output), and never a SQLite database or WAL (an archive's own files: every user's text).
 * Files elsewhere stay servable: an operator's imported photos are there.
 */
export async function servableMedia(
  path: string,
  userId: string,
  mediaDir: string | undefined,
): Promise<boolean> {
  if (mediaDir !== undefined) {
    const root = await realpath(mediaDir).catch(() => mediaDir);
    if (isWithin(root, path) && !isWithin(join(root, userId), path)) return false;
  }
  const head = Buffer.alloc(16);
  const handle = await open(path, 'r');
  try {
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return !SQLITE_MAGIC.some(
      (magic) => bytesRead >= magic.length && head.subarray(0, magic.length).equals(magic),
    );
  } finally {
    await handle.close();
  }
}
