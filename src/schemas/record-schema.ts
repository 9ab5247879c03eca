import { z } from 'zod';
import {
  type DerivedFields,
  MEMORY_KINDS,
  type MediaAsset,
  type MemoryKind,
  type MemoryRecord,
} from '../types/memory-record.ts';
import {
  checkRecordCounts,
  checkRecordShape,
  type RecordLimits,
  resolveRecordLimits,
} from './record-limits.ts';

/**
 * The record as users write it (unified archive format, `addMemories`, HTTP/MCP bodies): camelCase
 * `MemoryRecord` fields with `id` required and everything else optional. One schema for every boundary;
 * the JSON Schema of the unified format is generated from it (`z.toJSONSchema(memoryRecordInputSchema)`).
 *
 * Objects are strict: an unknown key is almost always a typo ("timestmap"), and silently dropping it would
 * lose data. Source-specific extras belong in `metadata`.
 */

/** ISO 8601 calendar date, optionally with time (minutes, seconds, fraction) and an offset (Z, +02:00, +0200). */
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

export const isoTimestampSchema = z
  .string()
  .regex(ISO_8601, 'expected an ISO 8601 date or date-time, e.g. 2024-06-03 or 2024-06-03T14:05:00Z')
  .refine(isCalendarValid, 'not a real calendar date or time');

const nonEmptyString = z.string().min(1);

/** agent_id / run_id: short printable scope names (they are indexed and used in filters). */
export const scopeIdSchema = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[^\u0000-\u001f]*$/, 'no control characters');

export const geoLocationSchema = z.strictObject({
  name: z.string().optional(),
  lat: z.number().min(-90).max(90).optional(),
  lon: z.number().min(-180).max(180).optional(),
});

export const derivedFieldsSchema = z.strictObject({
  captions: z.array(z.string()).optional(),
  ocr: z.string().optional(),
  summary: z.string().optional(),
  tags: z.array(z.string()).optional(),
});

export const exifDataSchema = z.strictObject({
  takenAt: isoTimestampSchema.optional(),
  lat: z.number().min(-90).max(90).optional(),
  lon: z.number().min(-180).max(180).optional(),
  make: z.string().optional(),
  model: z.string().optional(),
});

export const mediaAssetInputSchema = z.strictObject({
  /** Unique within the record; defaults to `asset-<index>` when absent. */
  id: nonEmptyString.optional(),
  kind: z.enum(['image', 'video', 'audio', 'document']),
  uri: nonEmptyString.optional(),
  mime: z.string().optional(),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/i, 'expected a sha256 hex digest')
    .optional(),
  derived: derivedFieldsSchema.optional(),
  exif: exifDataSchema.optional(),
  frames: z.array(nonEmptyString).optional(),
  frameTimes: z.array(z.number().nonnegative()).optional(),
  frameText: z.array(z.string()).optional(),
  durationSeconds: z.number().nonnegative().optional(),
  /** Written by the media digest (a file in the archive's media folder); sources' values are dropped. */
  thumbnail: nonEmptyString.optional(),
});

/** Written by ingest's media digest (src/digest/media/); accepted so stored records round-trip. */
export const mediaDigestStateSchema = z.strictObject({
  status: z.enum(['pending', 'done', 'failed']),
  sourceHash: z.string().regex(/^[0-9a-f]{64}$/, 'expected a sha256 hex digest'),
  error: z.string().max(2000).optional(),
});

/**
 * Longest memory id: what every verb that names a memory accepts (`memoryIdSchema`, list cursors), so a stored
 * memory can always be read, updated, deleted and paged past (a 300-character id was stored and then refused
 * by get/update/delete, and a page ending on it gave a cursor the archive refused).
 */
export const MAX_MEMORY_ID_CHARS = 256;
/**
 * Largest sequence a record may set: room for 2^52 more after it below 2^53 (the next add without a sequence
 * takes the highest + 1; past 2^53 those were no longer distinct and their list cursors were refused).
 */
export const MAX_SEQUENCE = 2 ** 52;

export const memoryRecordInputSchema = z.strictObject({
  id: nonEmptyString.max(MAX_MEMORY_ID_CHARS),
  /** Accepted so exported records round-trip; the caller's context always wins (see toMemoryRecord). */
  contextId: z.string().optional(),
  kind: z.enum(MEMORY_KINDS as [MemoryKind, ...MemoryKind[]]).optional(),
  sequence: z.number().int().nonnegative().max(MAX_SEQUENCE).optional(),
  sessionId: z.string().optional(),
  roundId: z.string().optional(),
  sourceId: z.string().optional(),
  role: z.string().optional(),
  speaker: z.string().optional(),
  timestamp: isoTimestampSchema.optional(),
  location: geoLocationSchema.optional(),
  text: z.string().optional(),
  assets: z.array(mediaAssetInputSchema).optional(),
  derived: derivedFieldsSchema.optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  agentId: scopeIdSchema.optional(),
  runId: scopeIdSchema.optional(),
  supersedes: z
    .array(nonEmptyString.max(256))
    .max(64)
    .optional()
    .describe(
      'Ids of memories of the same user this one replaces (relation supersedes; also detected for corrections, docs/supersession.md).',
    ),
  /** The write clock; set by the archive when absent (a restored backup keeps its own). */
  recordedAt: isoTimestampSchema.optional(),
  media: mediaDigestStateSchema.optional(),
});

export type MemoryRecordInputParsed = z.infer<typeof memoryRecordInputSchema>;

/**
 * An update of a stored memory (PATCH /v1/memories/:id, MCP update_memory, `updateMemory`): any record field
 * but the identity ones; each given field replaces the stored one (metadata as a whole), the rest is kept.
 */
export const memoryPatchSchema = memoryRecordInputSchema
  .omit({ id: true, contextId: true, recordedAt: true })
  .partial();
export type MemoryPatch = z.infer<typeof memoryPatchSchema>;

export type ToMemoryRecordResult =
  | { ok: true; record: MemoryRecord }
  | { ok: false; code: 'INVALID_INPUT' | 'TOO_LARGE'; field: string; message: string };

/**
 * Validates one user-written record and fills the defaults:
 * - `contextId` is always `defaults.contextId` (the caller decides the archive; a record cannot move itself);
 * - `sequence` is `defaults.sequence` when absent;
 * - `kind` when absent: 'message' if the record has a role or speaker, else 'photo'/'video' for a record with
 *   no text whose first asset is an image/video, else 'note';
 * - `text` '' and `assets` [] when absent; asset ids `asset-<index>` when absent.
 * A record needs some content: non-empty text or at least one asset.
 * Size limits (RECORD_LIMITS in record-limits.ts; `limits` overrides them) are checked first for depth,
 * total size and value count, without recursion, then per field: a failure is TOO_LARGE, other failures INVALID_INPUT.
 * On failure names the first failing field as a dotted path ("assets.0.kind").
 */
export function toMemoryRecord(
  input: unknown,
  defaults: { contextId: string; sequence: number },
  limits: Partial<RecordLimits> = {},
): ToMemoryRecordResult {
  const bounds = resolveRecordLimits(limits);
  let shape: ReturnType<typeof checkRecordShape>;
  try {
    shape = checkRecordShape(input, bounds);
  } catch (error) {
    // A library caller's object whose getter throws (or a proxy): refused like any other bad record.
    const reason = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      code: 'INVALID_INPUT',
      field: '(record)',
      message: `record could not be read: ${reason}`,
    };
  }
  if (shape) return { ok: false, ...shape };
  let parsed: ReturnType<typeof memoryRecordInputSchema.safeParse>;
  try {
    parsed = memoryRecordInputSchema.safeParse(input);
  } catch (error) {
    // zod hands nested issues up as call arguments; the value bound above keeps this out of reach.
    if (!(error instanceof RangeError)) throw error;
    return { ok: false, code: 'TOO_LARGE', field: '(record)', message: 'record too large to validate' };
  }
  if (!parsed.success) return firstIssue(parsed.error);
  const value = parsed.data;

  const text = value.text ?? '';
  const assets: MediaAsset[] = [];
  const seenAssetIds = new Set<string>();
  for (const [index, asset] of (value.assets ?? []).entries()) {
    const id = asset.id ?? `asset-${index}`;
    if (seenAssetIds.has(id)) {
      return {
        ok: false,
        code: 'INVALID_INPUT',
        field: `assets.${index}.id`,
        message: `asset id "${id}" appears twice in the record`,
      };
    }
    seenAssetIds.add(id);
    assets.push(stripUndefined({ ...asset, id }) as MediaAsset);
  }
  if (text.trim() === '' && assets.length === 0) {
    return {
      ok: false,
      code: 'INVALID_INPUT',
      field: 'text',
      message: 'record has no content: give non-empty text or at least one asset',
    };
  }

  const counts = checkRecordCounts(
    { text, assets, ...(value.derived ? { derived: value.derived as DerivedFields } : {}) },
    bounds,
  );
  if (counts) return { ok: false, ...counts };

  const { contextId: _ignored, kind, sequence, assets: _assets, text: _text, ...rest } = value;
  const record = stripUndefined({
    ...rest,
    id: value.id,
    contextId: defaults.contextId,
    kind: kind ?? defaultKind(value, text, assets),
    sequence: sequence ?? defaults.sequence,
    text,
    assets,
  }) as MemoryRecord;
  return { ok: true, record };
}

/** Zod issue -> dotted field path; unknown keys are named themselves. */
function firstIssue(error: z.ZodError): ToMemoryRecordResult & { ok: false } {
  const code = 'INVALID_INPUT';
  const issue = error.issues[0];
  if (!issue) return { ok: false, code, field: '(record)', message: 'invalid record' };
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    return { ok: false, code, field: [...path, key].join('.'), message: `unknown field "${key}"` };
  }
  // An issue of the record itself (not an object at all) names the record, as the limit checks do.
  return { ok: false, code, field: path.length === 0 ? '(record)' : path.join('.'), message: issue.message };
}

function defaultKind(value: MemoryRecordInputParsed, text: string, assets: MediaAsset[]): MemoryKind {
  if (value.role !== undefined || value.speaker !== undefined) return 'message';
  const first = assets[0];
  if (text.trim() === '' && first) {
    if (first.kind === 'image') return 'photo';
    if (first.kind === 'video') return 'video';
  }
  return 'note';
}

function isCalendarValid(value: string): boolean {
  const match = ISO_8601.exec(value);
  if (!match) return false;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  // Date.UTC reads years 0-99 as 1900-1999 (0000-02-29 was refused): the day count from a Date whose year is set.
  const lastDay = new Date(Date.UTC(2000, month, 0));
  lastDay.setUTCFullYear(year, month, 0);
  if (day > lastDay.getUTCDate()) return false;
  if (match[4] !== undefined && (Number(match[4]) > 23 || Number(match[5]) > 59)) return false;
  // Seconds 00-59: a leap second's 60 is ISO but no JavaScript date reads it (Date.parse gave NaN downstream).
  if (match[6] !== undefined && Number(match[6]) > 59) return false;
  // Offsets are within +-14:00 (every zone in use), minutes 0-59 (+99:99 was taken and read as no date).
  const offset = /([+-])(\d{2}):?(\d{2})$/.exec(value);
  if (match[4] !== undefined && offset && (Number(offset[2]) > 14 || Number(offset[3]) > 59)) return false;
  return true;
}

/** exactOptionalPropertyTypes: optional fields are absent, never `undefined`. */
function stripUndefined<T extends Record<string, unknown>>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) if (entry !== undefined) out[key] = entry;
  return out as T;
}
