import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A bold font Debian ships with ffmpeg's drawtext dependencies (fonts-dejavu-core). */
const FONT_CANDIDATES = [
  '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf',
  '/usr/share/fonts/dejavu/DejaVuSans-Bold.ttf',
];

export interface GeneratedVideoSpec {
  /** Text shown in the middle of every frame from `textFrom` seconds on (uppercase reads best for OCR). */
  text: string;
  /** When the text appears (seconds; before it the frame is blank). Default 0. */
  textFrom?: number;
  seconds: number;
  /** Container creation time (ISO 8601, UTC). */
  createdAt?: string;
  /** Container location (ISO 6709 latitude/longitude). */
  lat?: number;
  lon?: number;
}

/**
 * Writes a short H.264 MP4 with text drawn into its frames (ffmpeg lavfi `color` + `drawtext`; execFile
 * with fixed arguments, no shell), the demo's and tests' generated video. Throws when ffmpeg is missing.
 */
export async function writeTextVideo(path: string, spec: GeneratedVideoSpec): Promise<void> {
  const font = FONT_CANDIDATES.find((candidate) => existsSync(candidate));
  const fontArg = font === undefined ? '' : `fontfile=${font}:`;
  const text = spec.text.replace(/[^A-Za-z0-9 .,-]/g, ' ');
  const from = spec.textFrom ?? 0;
  const args = [
    '-nostdin',
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `color=c=white:s=640x360:d=${spec.seconds}:r=10`,
    '-vf',
    `drawtext=${fontArg}text='${text}':fontsize=48:fontcolor=black:x=(w-tw)/2:y=(h-th)/2:enable='gte(t,${from})'`,
    '-c:v',
    'libx264',
    '-pix_fmt',
    'yuv420p',
  ];
  if (spec.createdAt) args.push('-metadata', `creation_time=${spec.createdAt}`);
  if (spec.lat !== undefined && spec.lon !== undefined) {
    args.push('-metadata', `location=${iso6709(spec.lat, spec.lon)}`);
  }
  args.push(path);
  await run('ffmpeg', args, { timeout: 60_000 });
}

function iso6709(lat: number, lon: number): string {
  const part = (value: number, width: number) =>
    `${value < 0 ? '-' : '+'}${Math.abs(value)
      .toFixed(4)
      .padStart(width + 5, '0')}`;
  return `${part(lat, 2)}${part(lon, 3)}/`;
}
