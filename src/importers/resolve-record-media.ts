import type { MediaAsset, MemoryRecord } from '../types/memory-record.ts';
import { hasDerivedText, isReadableFile, locateMedia, mimeForPath, sha256File } from './media-files.ts';

export interface MediaProblem {
  field: string;
  message: string;
}

/**
 * Makes a user-written record's media concrete: relative uris resolve against the directory of the file
 * that names them, local files get MIME and sha256 when absent, remote URLs are kept as given (never
 * fetched). A missing local file follows the one missing-media rule (docs/archive-format.md): the asset
 * keeps its derived text without `uri`, or is dropped when it has none; each case is a problem to warn about.
 * `record` is undefined when dropping assets left a record with no content at all.
 */
export async function resolveRecordMedia(
  record: MemoryRecord,
  baseDirectory: string,
): Promise<{ record: MemoryRecord | undefined; problems: MediaProblem[] }> {
  if (record.assets.length === 0) return { record, problems: [] };
  const problems: MediaProblem[] = [];
  const assets: MediaAsset[] = [];
  for (const [index, asset] of record.assets.entries()) {
    const frames = asset.frames?.map((frame) => {
      const location = locateMedia(frame, baseDirectory);
      return location.remote ? location.uri : location.path;
    });
    const withFrames: MediaAsset = frames === undefined ? asset : { ...asset, frames };
    if (asset.uri === undefined) {
      assets.push(withFrames);
      continue;
    }
    const location = locateMedia(asset.uri, baseDirectory);
    if (location.remote) {
      assets.push(withFrames);
      continue;
    }
    if (await isReadableFile(location.path)) {
      const mime = asset.mime ?? mimeForPath(location.path);
      assets.push({
        ...withFrames,
        uri: location.path,
        ...(mime === undefined ? {} : { mime }),
        sha256: asset.sha256 ?? (await sha256File(location.path)),
      });
      continue;
    }
    const { uri: _missing, ...rest } = withFrames;
    const keep = asset.derived !== undefined && hasDerivedText(asset.derived);
    problems.push({
      field: `assets.${index}.uri`,
      message: keep
        ? `media file not found: ${location.path}; asset ${asset.id} kept without uri (its derived text stays)`
        : `media file not found: ${location.path}; asset ${asset.id} dropped (no derived text)`,
    });
    if (keep) assets.push(rest);
  }
  const empty = record.text.trim() === '' && assets.length === 0;
  return { record: empty ? undefined : { ...record, assets }, problems };
}
