import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Whether an executable `name` is on PATH (the media digest runs its external tools by name). */
export function onPath(name: string): boolean {
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    if (folder === '') continue;
    try {
      accessSync(join(folder, name), constants.X_OK);
      return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

/**
 * The Debian packages the video and PDF digest tests need (`.ci/run` installs them): on a machine without
 * them those tests skip and say why, as the Chromium and PostgreSQL tests do; `npm test` still passes there.
 */
export const MEDIA_TOOLS = {
  ffmpeg: onPath('ffmpeg') && onPath('ffprobe'),
  poppler: onPath('pdfinfo') && onPath('pdftotext') && onPath('pdftoppm'),
} as const;

/** Prints, once per test file, which media tests skip and why (nothing when every tool is there). */
export function reportMissingMediaTools(file: string): void {
  const missing = [
    ...(MEDIA_TOOLS.ffmpeg ? [] : ['ffmpeg (video tests)']),
    ...(MEDIA_TOOLS.poppler ? [] : ['poppler-utils (PDF tests)']),
  ];
  if (missing.length > 0) {
    console.warn(
      `${file}: skipping tests that need ${missing.join(', ')}: apt-get install them (.ci/run does)`,
    );
  }
}
