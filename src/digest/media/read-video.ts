import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { runTool } from './external-tool.ts';
import type { MediaLimits } from './media-limits.ts';

export interface VideoFacts {
  durationSeconds?: number;
  /** ISO 8601 creation time from the container tags (`creation_time`), as written (UTC when it ends in Z). */
  createdAt?: string;
  lat?: number;
  lon?: number;
  width?: number;
  height?: number;
}

/**
 * The demuxers a video may be read with: containers that hold their own streams. A client's upload is only
 * bytes under a video name, and ffmpeg picks the demuxer from the content, so without this list a playlist
 * (HLS `#EXTM3U`, DASH, `ffconcat`) saved as "clip.mp4" made ffmpeg open the files it names: any local file
 * by absolute or relative path, another user's video included, whose frames then became this user's memory.
 * The mov demuxer leaves data references (`enable_drefs`) off by default; matroska, avi, MPEG-TS/PS, FLV,
 * Ogg and ASF name no other file.
 */
export const VIDEO_DEMUXERS = 'mov,matroska,avi,mpegts,mpeg,flv,ogg,asf';

/** Input options of every ffprobe/ffmpeg run on a video: the local file itself, one of VIDEO_DEMUXERS. */
const CONFINED_INPUT = ['-protocol_whitelist', 'file', '-format_whitelist', VIDEO_DEMUXERS] as const;

/**
 * Duration, creation time and location of a video from ffprobe's JSON (format and stream tags). Location
 * is the ISO 6709 string phones write (`location`, `com.apple.quicktime.location.ISO6709`:
 * "+38.7139-009.1394+010.000/"). A file ffprobe cannot read is INVALID_INPUT.
 */
export async function probeVideo(file: string, limits: MediaLimits): Promise<VideoFacts> {
  const out = await runTool(
    'ffprobe',
    ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', ...CONFINED_INPUT, '-i', file],
    {
      timeoutMs: limits.toolTimeoutMs,
      maxOutputBytes: 4 * 1024 * 1024,
      maxMemoryBytes: limits.toolMaxMemoryBytes,
    },
  );
  let parsed: {
    format?: { duration?: string; tags?: Record<string, string> };
    streams?: { codec_type?: string; width?: number; height?: number; tags?: Record<string, string> }[];
  };
  try {
    parsed = JSON.parse(out.toString('utf8'));
  } catch {
    throw new GraphmemixError('INVALID_INPUT', 'ffprobe printed no readable description of the video');
  }
  const video = (parsed.streams ?? []).find((stream) => stream.codec_type === 'video');
  if (video === undefined) throw new GraphmemixError('INVALID_INPUT', 'the file has no video stream');
  const facts: VideoFacts = {};
  const duration = Number(parsed.format?.duration);
  if (Number.isFinite(duration) && duration > 0) facts.durationSeconds = Math.round(duration * 1000) / 1000;
  if (typeof video.width === 'number') facts.width = video.width;
  if (typeof video.height === 'number') facts.height = video.height;
  const tags = lowerKeys({ ...(video.tags ?? {}), ...(parsed.format?.tags ?? {}) });
  const created = tags.creation_time ?? tags['com.apple.quicktime.creationdate'];
  if (created !== undefined && !Number.isNaN(Date.parse(created)))
    facts.createdAt = created.replace(/\.0+Z$/, 'Z');
  const where = parseIso6709(tags['com.apple.quicktime.location.iso6709'] ?? tags.location ?? '');
  if (where) Object.assign(facts, where);
  return facts;
}

/** "+38.7139-009.1394+010.000/" -> {lat, lon}; undefined when it is not a plausible position. */
export function parseIso6709(value: string): { lat: number; lon: number } | undefined {
  const match = /^([+-]\d+(?:\.\d+)?)([+-]\d+(?:\.\d+)?)/.exec(value.trim());
  if (!match) return undefined;
  const lat = Number(match[1]);
  const lon = Number(match[2]);
  if (!(Math.abs(lat) <= 90 && Math.abs(lon) <= 180)) return undefined;
  return { lat, lon };
}

/** Times of `count` uniformly sampled frames: the middles of `count` equal slices of the video. */
export function frameTimes(durationSeconds: number | undefined, count: number): number[] {
  if (durationSeconds === undefined || durationSeconds <= 0) return [0];
  return Array.from(
    { length: count },
    (_, i) => Math.round(((i + 0.5) * durationSeconds * 1000) / count) / 1000,
  );
}

/**
 * Extracts one JPEG per time into `outDir` (`frame-<i>.jpg`, longest edge at most limits.renderEdge), one
 * bounded ffmpeg run per frame (input seeking, so a long video costs N short decodes, not one full pass).
 * A time past the real end yields no file; such frames are skipped.
 */
export async function extractFrames(
  file: string,
  times: readonly number[],
  outDir: string,
  limits: MediaLimits,
  /** Called before each frame (the caller's time limit throws from it). */
  beforeFrame: (time: number) => void = () => {},
): Promise<{ path: string; time: number }[]> {
  await mkdir(outDir, { recursive: true });
  const frames: { path: string; time: number }[] = [];
  const edge = limits.renderEdge;
  for (const [i, time] of times.entries()) {
    beforeFrame(time);
    const path = join(outDir, `frame-${i}.jpg`);
    await runTool(
      'ffmpeg',
      [
        '-nostdin',
        '-v',
        'error',
        '-y',
        '-ss',
        time.toFixed(3),
        ...CONFINED_INPUT,
        '-i',
        file,
        '-frames:v',
        '1',
        '-vf',
        `scale='min(${edge},iw)':'min(${edge},ih)':force_original_aspect_ratio=decrease`,
        '-q:v',
        '3',
        '-f',
        'image2',
        path,
      ],
      {
        timeoutMs: limits.toolTimeoutMs,
        maxOutputBytes: 1024 * 1024,
        maxMemoryBytes: limits.toolMaxMemoryBytes,
      },
    );
    if (await exists(path)) frames.push({ path, time });
  }
  return frames;
}

async function exists(path: string): Promise<boolean> {
  try {
    return (await stat(path)).size > 0;
  } catch {
    return false;
  }
}

function lowerKeys(tags: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(tags))
    if (typeof value === 'string') out[key.toLowerCase()] = value;
  return out;
}
