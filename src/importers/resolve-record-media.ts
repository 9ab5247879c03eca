import type { MediaAsset, MemoryRecord } from '../types/memory-record.ts';
import { hasDerivedText, isMediaFileInside, locateMedia, mimeForPath, sha256File } from './media-files.ts';

export interface MediaProblem {
  field: string;
  message: string;
}

/**
 * Makes a user-written record's media concrete: relative uris resolve against the directory of the file
 * that names them (the import root: a file whose real path lies outside it is handled as missing), local files get MIME and sha256 when absent, remote URLs are kept as given (never
 * fetched). A missing local file follows the one missing-media rule (docs/archive-format.md): the asset
 * keeps its derived text without `uri`, or is dropped when it has none; each case is a problem to warn about.
 * `record` is undefined when dropping assets left a record with no content at all.
 */
export async function resolveRecordMedia(
  record: MemoryRecord,
  baseDirectory: string,
  root: string = baseDirectory,
): Promise<{ record: MemoryRecord | undefined; problems: MediaProblem[] }> {
  if (record.assets.length === 0) return { record, problems: [] };
  const problems: MediaProblem[] = [];
  const assets: MediaAsset[] = [];
  for (const [index, source] of record.assets.entries()) {
    // A stored thumbnail is the media digest's own file: one named by a source is dropped, never served.
    const { thumbnail: _sourceThumbnail, ...asset } = source;
    let frames: string[] | undefined;
    if (asset.frames !== undefined) {
      frames = [];
      for (const frame of asset.frames) {
        const location = locateMedia(frame, baseDirectory);
        if (location.remote) frames.push(location.uri);
        else if (await isMediaFileInside(location.path, root)) frames.push(location.path);
        else
          problems.push({
            field: `assets.${index}.frames`,
            message: 'frame outside the import folder dropped',
          });
      }
    }
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
    if (await isMediaFileInside(location.path, root)) {
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
        ? `media file not found in the import folder: ${location.path}; asset ${asset.id} kept without uri (its derived text stays)`
        : `media file not found in the import folder: ${location.path}; asset ${asset.id} dropped (no derived text)`,
    });
    if (keep) assets.push(rest);
  }
  const empty = record.text.trim() === '' && assets.length === 0;
  return { record: empty ? undefined : { ...record, assets }, problems };
}
