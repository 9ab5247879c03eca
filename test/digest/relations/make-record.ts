import type { MemoryRecord } from '../../../src/types/memory-record.ts';

let nextSequence = 0;

/** A record with defaults for the fields a relation test does not care about. */
export function makeRecord(id: string, fields: Partial<MemoryRecord> = {}): MemoryRecord {
  return {
    id,
    contextId: 'ctx',
    kind: 'message',
    sequence: fields.sequence ?? nextSequence++,
    text: '',
    assets: [],
    ...fields,
  };
}

/** A photo captured at `takenAt` at (lat, lon), with optional caption and place name. */
export function makePhoto(
  id: string,
  takenAt: string,
  lat?: number,
  lon?: number,
  extra: { caption?: string; place?: string; ocr?: string } = {},
): MemoryRecord {
  const location = {
    ...(extra.place === undefined ? {} : { name: extra.place }),
    ...(lat === undefined ? {} : { lat }),
    ...(lon === undefined ? {} : { lon }),
  };
  return makeRecord(id, {
    kind: 'photo',
    timestamp: takenAt,
    ...(Object.keys(location).length === 0 ? {} : { location }),
    assets: [
      {
        id: 'a1',
        kind: 'image',
        exif: { takenAt },
        derived: {
          ...(extra.caption === undefined ? {} : { captions: [extra.caption] }),
          ...(extra.ocr === undefined ? {} : { ocr: extra.ocr }),
        },
      },
    ],
  });
}

/** An email with headers in metadata.email. */
export function makeEmail(
  id: string,
  sentAt: string,
  subject: string,
  body = '',
  headers: { messageId?: string; inReplyTo?: string; references?: string[] } = {},
): MemoryRecord {
  return makeRecord(id, {
    kind: 'email',
    timestamp: sentAt,
    text: `${subject}\n\n${body}`,
    metadata: { email: { subject, ...headers } },
  });
}

/** Sorted "a|b" strings of pairs, for order-free comparison. */
export function pairKeys(pairs: ReadonlyArray<readonly [string, string]>): string[] {
  return pairs.map(([a, b]) => `${a}|${b}`).sort();
}
