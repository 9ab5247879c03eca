import type { MemoryRecord } from '../../types/memory-record.ts';
import { calendarDay, timestampMs } from '../date-extraction.ts';

/** When and where a media memory was captured, as far as its metadata says. */
export interface MediaCapture {
  id: string;
  /** Capture time in ms (zone-less timestamps read as UTC). */
  timeMs: number;
  /** Calendar day of the capture as written ('YYYY-MM-DD'). */
  day: string;
  lat?: number;
  lon?: number;
  placeName?: string;
}

/**
 * The capture of a media memory: kind 'photo' or 'video', or any record with an asset carrying an EXIF
 * capture time. Time: the first asset's EXIF `takenAt`, else the record timestamp. Coordinates: the record
 * location when it has both lat and lon, else the first asset's EXIF GPS. Undefined when the record is not
 * media or has no usable time.
 */
export function mediaCapture(record: MemoryRecord): MediaCapture | undefined {
  const exifTime = record.assets.find((asset) => asset.exif?.takenAt)?.exif?.takenAt;
  if (exifTime === undefined && record.kind !== 'photo' && record.kind !== 'video') return undefined;
  const stamp = exifTime ?? record.timestamp;
  if (stamp === undefined) return undefined;
  const timeMs = timestampMs(stamp);
  const day = calendarDay(stamp);
  if (timeMs === undefined || day === undefined) return undefined;
  const capture: MediaCapture = { id: record.id, timeMs, day };
  const point = coordinates(record);
  if (point) {
    capture.lat = point.lat;
    capture.lon = point.lon;
  }
  const name = record.location?.name?.trim();
  if (name) capture.placeName = name;
  return capture;
}

function coordinates(record: MemoryRecord): { lat: number; lon: number } | undefined {
  const { lat, lon } = record.location ?? {};
  if (isCoordinate(lat, 90) && isCoordinate(lon, 180)) return { lat, lon };
  for (const asset of record.assets) {
    const exif = asset.exif;
    if (isCoordinate(exif?.lat, 90) && isCoordinate(exif?.lon, 180)) return { lat: exif.lat, lon: exif.lon };
  }
  return undefined;
}

function isCoordinate(value: number | undefined, limit: number): value is number {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= limit;
}
