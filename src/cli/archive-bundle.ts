import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';

import { join, resolve } from 'node:path';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import { runCopy } from './commands/copy-command.ts';

/**
 * A backup bundle is a folder: `archive.db` (a SQLite archive holding the exported contexts: records, views,
 * keys, vectors, edges, semantic index, questions, calibrations), `media/` (every local medium the records
 * reference, uploads and imported files alike) and `manifest.json`. The archive inside is an ordinary
 * graphmemix SQLite archive, so a bundle can also be opened directly. Export and import both go through
 * `graphmemix copy` (the store port), so they work from and into SQLite files and postgres:// URLs, and are
 * idempotent.
 */
export const BUNDLE_FORMAT = 'graphmemix-archive-bundle';
export const BUNDLE_VERSION = 1;
const MANIFEST = 'manifest.json';
const ARCHIVE = 'archive.db';
const MEDIA = 'media';
/** A manifest is a few lines; anything bigger is not ours. */
const MAX_MANIFEST_BYTES = 1 << 20;

export interface BundleManifest {
  format: typeof BUNDLE_FORMAT;
  version: number;
  created_at: string;
  contexts: { id: string; memories: number }[];
}

export async function exportBundle(options: { db: string; out: string; context?: string }) {
  const out = resolve(options.out);
  if (existsSync(out) && (!statSync(out).isDirectory() || readdirSync(out).length > 0)) {
    throw new GraphmemixError('INVALID_INPUT', `--out must be a new or empty folder: ${options.out}`, {
      location: { field: 'out' },
    });
  }
  mkdirSync(out, { recursive: true });
  // A failed export leaves no half-written bundle behind (the folder was new or empty).
  let report: Awaited<ReturnType<typeof runCopy>>;
  try {
    report = await runCopy({
      from: options.db,
      to: join(out, ARCHIVE),
      toMedia: join(out, MEDIA),
      externalMedia: 'copy',
      ...(options.context === undefined ? {} : { context: options.context }),
    });
    if (report.contexts.length === 0) {
      throw new GraphmemixError(
        'NOT_FOUND',
        options.context === undefined ? 'the archive has no contexts' : `unknown context: ${options.context}`,
        { location: { field: 'context' } },
      );
    }
  } catch (error) {
    rmSync(out, { recursive: true, force: true });
    throw error;
  }
  const manifest: BundleManifest = {
    format: BUNDLE_FORMAT,
    version: BUNDLE_VERSION,
    created_at: new Date().toISOString(),
    contexts: report.contexts.map((c) => ({ id: c.contextId, memories: c.memories })),
  };
  writeFileSync(join(out, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  return { bundle: out, manifest, media_files: report.mediaFiles, warnings: report.warnings };
}

export async function importBundle(options: { bundle: string; db: string; context?: string }) {
  const dir = resolve(options.bundle);
  const manifest = readManifest(dir);
  if (options.context !== undefined && !manifest.contexts.some((c) => c.id === options.context)) {
    throw new GraphmemixError('NOT_FOUND', `the bundle has no context ${options.context}`, {
      location: { field: 'context' },
    });
  }
  const archive = insideBundle(dir, ARCHIVE);
  const report = await runCopy({
    from: archive,
    to: options.db,
    fromMedia: join(dir, MEDIA),
    ...(options.context === undefined ? {} : { context: options.context }),
  });
  return {
    bundle: dir,
    contexts: report.contexts.map((c) => ({ id: c.contextId, memories: c.memories, written: c.written })),
    media_files: report.mediaFiles,
    warnings: report.warnings,
  };
}

function readManifest(dir: string): BundleManifest {
  const path = insideBundle(dir, MANIFEST);
  if (statSync(path).size > MAX_MANIFEST_BYTES) {
    throw new GraphmemixError('INVALID_INPUT', 'manifest.json is too large for a bundle manifest', {
      location: { file: path },
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new GraphmemixError('INVALID_INPUT', 'manifest.json is not JSON', { location: { file: path } });
  }
  const m = parsed as Partial<BundleManifest> | null;
  if (m?.format !== BUNDLE_FORMAT || typeof m.version !== 'number' || !Array.isArray(m.contexts)) {
    throw new GraphmemixError('INVALID_INPUT', `not a ${BUNDLE_FORMAT} manifest`, {
      location: { file: path },
    });
  }
  if (m.version > BUNDLE_VERSION) {
    throw new GraphmemixError(
      'INVALID_INPUT',
      `bundle version ${m.version} is newer than this graphmemix reads (${BUNDLE_VERSION})`,
      { location: { file: path, field: 'version' } },
    );
  }
  return m as BundleManifest;
}

/** A bundle file by its fixed name, refused when it is missing or a link that leads out of the bundle. */
function insideBundle(dir: string, name: string): string {
  const path = join(dir, name);
  if (!existsSync(path)) {
    throw new GraphmemixError('NOT_FOUND_PATH', `not a bundle (no ${name}): ${dir}`, {
      location: { file: path },
    });
  }
  const real = realpathSync(path);
  if (real !== join(realpathSync(dir), name)) {
    throw new GraphmemixError('INVALID_INPUT', `${name} of the bundle is a link`, {
      location: { file: path },
    });
  }
  return real;
}
