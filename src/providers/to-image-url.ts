import { constants, realpathSync } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GraphmemixError } from '../errors/index.ts';
import { mimeForPath } from '../types/media-mime.ts';
import { isWithin } from '../types/path-within.ts';

/**
 * THE guarded place where stored media turn into bytes or URLs sent to a model endpoint (chat image parts,
 * image embeddings). Whatever a record says, only these leave the process:
 * - local files whose real path (symlinks resolved) lies inside an allowed media root (the archive's media
 *   store, an import root, roots named by GRAPHMEMIX_MEDIA_ROOTS), regular files only, at most
 *   `maxFileBytes` (a device such as /dev/zero or a FIFO is never read);
 * - http(s) URLs matching the remote allow-list (GRAPHMEMIX_REMOTE_MEDIA; empty by default: never forwarded);
 * - data: URLs up to `maxDataUrlChars`.
 * Everything else is refused with FORBIDDEN, so a record stored with a hostile uri (/proc/self/environ,
 * ../../etc/passwd, file:///..., http://169.254.169.254/) is harmless: the model call fails and is flagged.
 */
export interface MediaAccessPolicy {
  readonly roots: readonly string[];
  readonly remotePrefixes: readonly string[];
  readonly maxFileBytes: number;
  readonly maxDataUrlChars: number;
}

export const DEFAULT_MAX_MEDIA_FILE_BYTES = 20 * 1024 * 1024;

const policy = {
  roots: [] as string[],
  remotePrefixes: [] as string[],
  maxFileBytes: DEFAULT_MAX_MEDIA_FILE_BYTES,
  maxDataUrlChars: Math.ceil((DEFAULT_MAX_MEDIA_FILE_BYTES * 4) / 3) + 256,
};

/** Allows reading regular files under `directory` (process-wide; a root already covered adds nothing). */
export function allowMediaRoot(directory: string): void {
  let real: string;
  try {
    real = realpathSync(resolve(directory));
  } catch {
    real = resolve(directory);
  }
  if (policy.roots.some((root) => isWithin(root, real))) return;
  policy.roots = [...policy.roots.filter((root) => !isWithin(real, root)), real];
}

/** Allows forwarding http(s) media whose URL starts with one of `prefixes` (`*`: any http(s) URL). */
export function allowRemoteMedia(prefixes: readonly string[]): void {
  for (const prefix of prefixes.map((p) => p.trim()).filter(Boolean)) {
    if (prefix !== '*' && !/^https?:\/\/[^/]+\//i.test(prefix)) {
      throw new GraphmemixError('CONFIG', `remote media prefix must be * or http(s)://host/...: ${prefix}`);
    }
    if (!policy.remotePrefixes.includes(prefix)) policy.remotePrefixes.push(prefix);
  }
}

export function setMediaLimits(limits: { maxFileBytes?: number }): void {
  if (limits.maxFileBytes !== undefined) {
    policy.maxFileBytes = limits.maxFileBytes;
    policy.maxDataUrlChars = Math.ceil((limits.maxFileBytes * 4) / 3) + 256;
  }
}

/** Applies GRAPHMEMIX_MEDIA_ROOTS (path-list separated by `:`) and GRAPHMEMIX_REMOTE_MEDIA (comma-separated). */
export function allowMediaFromEnv(env: NodeJS.ProcessEnv = process.env): void {
  for (const root of (env.GRAPHMEMIX_MEDIA_ROOTS ?? '').split(':').filter((r) => r.trim() !== '')) {
    allowMediaRoot(root.trim());
  }
  allowRemoteMedia((env.GRAPHMEMIX_REMOTE_MEDIA ?? '').split(','));
}

export function mediaAccessPolicy(): MediaAccessPolicy {
  return { ...policy, roots: [...policy.roots], remotePrefixes: [...policy.remotePrefixes] };
}

/** Back to nothing allowed (tests). */
export function resetMediaAccess(): void {
  policy.roots = [];
  policy.remotePrefixes = [];
  setMediaLimits({ maxFileBytes: DEFAULT_MAX_MEDIA_FILE_BYTES });
}

/**
 * An image reference as a URL a model endpoint can use: allowed local files are read and inlined as base64
 * data URLs (a remote server cannot read our disk); allow-listed http(s) URLs and small data: URLs pass
 * through. `mime` overrides the type guessed from the extension. A missing file is NOT_FOUND_PATH; anything
 * outside the policy is FORBIDDEN, and no byte of it is read.
 */
export async function toImageUrl(uri: string, mime?: string): Promise<string> {
  if (/^data:/i.test(uri)) {
    if (uri.length > policy.maxDataUrlChars) throw forbidden('data: URL over the media size cap');
    return uri;
  }
  if (/^https?:/i.test(uri)) {
    if (policy.remotePrefixes.some((prefix) => prefix === '*' || uri.startsWith(prefix))) return uri;
    throw forbidden('remote media is not forwarded to models unless allow-listed (GRAPHMEMIX_REMOTE_MEDIA)');
  }
  const path = localPath(uri);
  let real: string;
  try {
    real = await realpath(path);
  } catch (error) {
    // Outside every root, a missing file is refused like an existing one: existence does not leak.
    if (!policy.roots.some((root) => isWithin(root, resolve(path)))) {
      throw forbidden(`media outside the allowed media roots is never read: ${path}`);
    }
    throw new GraphmemixError('NOT_FOUND_PATH', `image file cannot be read: ${path}`, {
      location: { file: path },
      cause: error,
    });
  }
  if (!policy.roots.some((root) => isWithin(root, real))) {
    throw forbidden(`media outside the allowed media roots is never read: ${path}`);
  }
  const bytes = await readCapped(real);
  const type = mime ?? mimeForPath(path) ?? sniffImageType(bytes);
  return `data:${type};base64,${bytes.toString('base64')}`;
}

function localPath(uri: string): string {
  if (uri.includes('\0')) throw forbidden('media path contains NUL');
  let path = uri;
  if (/^file:/i.test(uri)) {
    try {
      path = fileURLToPath(uri);
    } catch {
      throw forbidden('malformed file: URL');
    }
  } else if (/^[a-z][a-z0-9+.-]*:/i.test(uri)) {
    throw forbidden('unsupported media URI scheme');
  }
  if (!isAbsolute(path)) throw forbidden('relative media paths are never resolved here');
  return path;
}

async function readCapped(real: string): Promise<Buffer> {
  // O_NONBLOCK: opening a FIFO must not hang; O_NOFOLLOW: the real path cannot be swapped for a link.
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw forbidden('media is not a regular file');
    if (info.size > policy.maxFileBytes) throw forbidden(`media file over ${policy.maxFileBytes} bytes`);
    const buffer = Buffer.alloc(info.size);
    let filled = 0;
    while (filled < info.size) {
      const { bytesRead } = await handle.read(buffer, filled, info.size - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

function forbidden(message: string): GraphmemixError {
  return new GraphmemixError('FORBIDDEN', message);
}

/** The mime type from the file's magic bytes; image/jpeg when unknown (the most common photo type). */
export function sniffImageType(bytes: Uint8Array): string {
  const hex = Buffer.from(bytes.subarray(0, 12)).toString('hex');
  if (hex.startsWith('89504e47')) return 'image/png';
  if (hex.startsWith('ffd8ff')) return 'image/jpeg';
  if (hex.startsWith('47494638')) return 'image/gif';
  if (hex.startsWith('52494646') && hex.slice(16, 24) === '57454250') return 'image/webp';
  if (hex.startsWith('424d')) return 'image/bmp';
  return 'image/jpeg';
}
