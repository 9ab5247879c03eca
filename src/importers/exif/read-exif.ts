import type { ExifData } from '../../types/memory-record.ts';
import { loadOptionalPackage } from '../optional-package.ts';

/**
 * What the photos importer needs from an image's EXIF block. `warnings` are non-fatal (the photo is still
 * imported): an EXIF block that exists but cannot be parsed, or a capture time that is not a real time.
 */
export interface ExifReadResult {
  /** Absent when the image has no EXIF block or nothing usable in it. */
  exif?: ExifData;
  warnings: string[];
}

/** The EXIF tags readExif uses (exifr derives `latitude` / `longitude` from the four GPS ones). */
const EXIF_TAGS = [
  'DateTimeOriginal',
  'OffsetTimeOriginal',
  'CreateDate',
  'OffsetTimeDigitized',
  'Make',
  'Model',
  'GPSLatitude',
  'GPSLatitudeRef',
  'GPSLongitude',
  'GPSLongitudeRef',
] as const;

/**
 * Reads capture time, GPS position and camera make/model from an image buffer (JPEG, PNG, WebP, HEIC).
 *
 * Time zones: EXIF `DateTimeOriginal` is the camera's local wall-clock time with no zone. We keep it as
 * given ("2024-04-20T12:30:00", no offset, never shifted to UTC) unless the file also carries
 * `OffsetTimeOriginal` (EXIF 2.31), in which case the offset is appended ("...T12:30:00+01:00"). Falls back
 * to `CreateDate` (DateTimeDigitized); `ModifyDate` is ignored because editors rewrite it.
 *
 * Never throws: a broken block becomes a warning and whatever was readable is kept.
 */
export async function readExif(image: Buffer): Promise<ExifReadResult> {
  const warnings: string[] = [];
  const { default: exifr } = await loadOptionalPackage('exifr', 'photo EXIF reading');
  let raw: Record<string, unknown> | undefined;
  try {
    // reviveValues: false keeps dates as the raw "YYYY:MM:DD HH:MM:SS" strings, so the process time zone
    // never leaks into the result (exifr would build a Date in local time).
    const parsed: unknown = await exifr.parse(image, {
      tiff: true,
      exif: true,
      gps: true,
      ifd1: false,
      interop: false,
      xmp: false,
      icc: false,
      iptc: false,
      jfif: false,
      ihdr: false,
      reviveValues: false,
      translateValues: false,
      mergeOutput: true,
      // Only the tags read below. Without a list exifr parses every entry of every IFD into its own array:
      // a 0.85 MB TIFF of 65,531 entries pointing at one shared 80 KB value filled the heap (4 GB) and killed
      // the server ~17 s after its upload was acknowledged (round 55); with the list it is read in ~15 ms.
      pick: [...EXIF_TAGS],
    });
    if (isRecord(parsed)) raw = parsed;
  } catch (error) {
    warnings.push(`unreadable EXIF block: ${errorMessage(error)}`);
  }
  if (!raw) return { warnings };

  const errors = raw.errors;
  if (Array.isArray(errors) && errors.length > 0) {
    warnings.push(`unreadable EXIF block: ${errors.map(errorMessage).join('; ')}`);
  }

  const exif: ExifData = {};
  const takenAt = captureTime(raw, warnings);
  if (takenAt !== undefined) exif.takenAt = takenAt;
  const lat = raw.latitude;
  const lon = raw.longitude;
  if (isCoordinate(lat, 90) && isCoordinate(lon, 180)) {
    exif.lat = roundCoordinate(lat);
    exif.lon = roundCoordinate(lon);
  }
  const make = cleanString(raw.Make);
  if (make !== undefined) exif.make = make;
  const model = cleanString(raw.Model);
  if (model !== undefined) exif.model = model;

  return Object.keys(exif).length === 0 ? { warnings } : { exif, warnings };
}

/** "2024:04:20 12:30:00" (+ optional "+01:00") -> "2024-04-20T12:30:00[+01:00]"; undefined when invalid. */
export function exifDateToIso(value: string, offset?: string): string | undefined {
  const match = /^(\d{4})[:-](\d{2})[:-](\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?/.exec(value.trim());
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second = '00'] = match;
  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  if (y < 1800 || mo < 1 || mo > 12 || d < 1) return undefined;
  if (d > new Date(Date.UTC(y, mo, 0)).getUTCDate()) return undefined;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined;
  const base = `${year}-${month}-${day}T${hour}:${minute}:${second}`;
  const zone = offset === undefined ? undefined : normaliseOffset(offset);
  return zone === undefined ? base : `${base}${zone}`;
}

function captureTime(raw: Record<string, unknown>, warnings: string[]): string | undefined {
  const candidates: [string, string][] = [
    ['DateTimeOriginal', 'OffsetTimeOriginal'],
    ['CreateDate', 'OffsetTimeDigitized'],
  ];
  for (const [dateTag, offsetTag] of candidates) {
    const value = cleanString(raw[dateTag]);
    if (value === undefined) continue;
    const iso = exifDateToIso(value, cleanString(raw[offsetTag]));
    if (iso !== undefined) return iso;
    // Cameras without a set clock write "0000:00:00 00:00:00"; say so instead of inventing a time.
    warnings.push(`EXIF ${dateTag} "${value}" is not a valid time; photo kept without a timestamp`);
  }
  return undefined;
}

function normaliseOffset(offset: string): string | undefined {
  const match = /^([+-])(\d{2}):?(\d{2})$/.exec(offset.trim());
  if (!match) return undefined;
  return `${match[1]}${match[2]}:${match[3]}`;
}

function isCoordinate(value: unknown, limit: number): value is number {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= limit;
}

/** 7 decimals (about 1 cm): drops float noise from the degrees/minutes/seconds conversion. */
function roundCoordinate(value: number): number {
  return Math.round(value * 1e7) / 1e7;
}

function cleanString(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  // EXIF ASCII fields are NUL-padded.
  const trimmed = value.replace(/\u0000+/g, '').trim();
  return trimmed === '' ? undefined : trimmed;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').trim();
}
