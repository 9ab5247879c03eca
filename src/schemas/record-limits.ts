import type { DerivedFields, MemoryRecord } from '../types/memory-record.ts';

/**
 * The size limits of one record, checked by `toMemoryRecord` (the one record path of JSONL, HTTP, MCP and
 * addMemories) BEFORE anything is written. Every builder downstream (views, content hash, relations, the
 * store's JSON) walks a record; these bounds keep each walk small, so one oversized record is rejected on its
 * own instead of committing and then failing every later rebuild of its user's relations.
 * Documented in docs/interfaces.md (Record limits); change both together.
 */
export const RECORD_LIMITS = {
  /** Bytes (UTF-8) of one text field: text, each caption, OCR, summary. Importers may lower/raise it. */
  maxTextBytes: 1024 * 1024,
  /** Media assets per record. */
  maxAssets: 256,
  /** Captions per derived block (the record's own, and each asset's). */
  maxCaptions: 64,
  /** Tags per derived block. */
  maxTags: 256,
  /** Sampled frames per video asset. */
  maxFrames: 256,
  /** Object keys and array items in `metadata`, counted over the whole tree. */
  maxMetadataKeys: 1000,
  /** Nesting depth of `metadata` ({"a":1} is depth 1). */
  maxMetadataDepth: 32,
  /** The whole record serialized as JSON, in bytes (approximate: counted while walking). */
  maxRecordBytes: 8 * 1024 * 1024,
  /**
   * Array items and object keys of the whole record. The schema reports each bad value (~0.5 KB, ~10 us), so
   * an 8 MiB line of 4M bad array items took ~35 s and ~2.5 GB before this bound (1M: 8.8 s, 687 MB), and
   * ~125k bad values in one nested array overflow zod's stack. A record at every count limit above with 16
   * videos of 256 frames is ~13k.
   */
  maxRecordValues: 100_000,
} as const;

export type RecordLimits = { -readonly [K in keyof typeof RECORD_LIMITS]: number };

export interface LimitProblem {
  code: 'TOO_LARGE' | 'INVALID_INPUT';
  field: string;
  message: string;
}

/** Containers of the record itself above metadata's own levels (record -> metadata). */
const RECORD_LEVELS = 1;

/**
 * Walks a raw (unvalidated) record once, iteratively, measuring nesting depth, the metadata key count and
 * the serialized size, and stops at the first bound crossed. Runs before the schema so neither the schema
 * nor anything after it ever sees an input deep enough to overflow a recursive walk.
 */
export function checkRecordShape(input: unknown, limits: RecordLimits): LimitProblem | undefined {
  if (input === null || typeof input !== 'object') return undefined;
  const maxDepth = limits.maxMetadataDepth + RECORD_LEVELS;
  let bytes = 0;
  let values = 0;
  let metadataKeys = 0;
  // Each entry: a value, its depth (root = 0) and the top-level field it sits under.
  const stack: { value: unknown; depth: number; top: string }[] = [{ value: input, depth: 0, top: '' }];
  while (stack.length > 0) {
    const { value, depth, top } = stack.pop()!;
    // Values JSON cannot carry: the content hash and the stored row would throw on them mid-write (a BigInt in
    // one record of 2,501 left 2,000 stored and a raw TypeError).
    if (typeof value === 'bigint' || typeof value === 'function' || typeof value === 'symbol') {
      return invalid(top || '(record)', `a ${typeof value} is not a JSON value`);
    }
    bytes += scalarBytes(value);
    if (bytes > limits.maxRecordBytes) {
      return tooLarge(top || '(record)', `record is over ${limits.maxRecordBytes} bytes serialized`);
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth + 1 > maxDepth) {
      return tooLarge(top, `nested deeper than ${limits.maxMetadataDepth} levels`);
    }
    const inMetadata = top === 'metadata' && depth >= 1;
    const children = Array.isArray(value) ? value.length : Object.keys(value).length;
    values += children;
    if (values > limits.maxRecordValues) {
      return tooLarge(top || '(record)', `more than ${limits.maxRecordValues} array items and object keys`);
    }
    if (inMetadata) metadataKeys += children;
    if (metadataKeys > limits.maxMetadataKeys) {
      return tooLarge('metadata', `more than ${limits.maxMetadataKeys} keys and items`);
    }
    if (Array.isArray(value)) {
      bytes += 2 + value.length;
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], depth: depth + 1, top });
      continue;
    }
    const keys = Object.keys(value);
    // JSON.parse makes "__proto__" an own key, which the schema then drops without a word (a metadata filter
    // of only that key matched everything): refused by name instead.
    if (Object.hasOwn(value, '__proto__')) {
      return invalid(top ? `${top}.__proto__` : '__proto__', 'the key "__proto__" is not allowed');
    }
    bytes += 2;
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      bytes += Buffer.byteLength(key, 'utf8') + 4;
      stack.push({ value: (value as Record<string, unknown>)[key], depth: depth + 1, top: top || key });
    }
  }
  return undefined;
}

/** Count limits on a schema-valid record (assets, captions, tags, frames) and the text bytes per field. */
export function checkRecordCounts(
  record: Pick<MemoryRecord, 'text' | 'assets' | 'derived'>,
  limits: RecordLimits,
): LimitProblem | undefined {
  if (record.assets.length > limits.maxAssets) {
    return tooLarge('assets', `${record.assets.length} assets, over the limit of ${limits.maxAssets}`);
  }
  const derivedProblem = (prefix: string, derived: DerivedFields | undefined): LimitProblem | undefined => {
    const captions = derived?.captions?.length ?? 0;
    if (captions > limits.maxCaptions) {
      return tooLarge(`${prefix}.captions`, `${captions} captions, over the limit of ${limits.maxCaptions}`);
    }
    const tags = derived?.tags?.length ?? 0;
    if (tags > limits.maxTags) {
      return tooLarge(`${prefix}.tags`, `${tags} tags, over the limit of ${limits.maxTags}`);
    }
    return undefined;
  };
  const own = derivedProblem('derived', record.derived);
  if (own) return own;
  for (const [index, asset] of record.assets.entries()) {
    const problem = derivedProblem(`assets.${index}.derived`, asset.derived);
    if (problem) return problem;
    const frames = asset.frames?.length ?? 0;
    if (frames > limits.maxFrames) {
      return tooLarge(`assets.${index}.frames`, `${frames} frames, over the limit of ${limits.maxFrames}`);
    }
  }
  const oversized = oversizedTextField(record, limits.maxTextBytes);
  if (oversized) {
    return tooLarge(
      oversized.field,
      `${oversized.bytes} bytes exceed the limit of ${limits.maxTextBytes} bytes (maxTextBytes)`,
    );
  }
  return undefined;
}

/**
 * The first text field of a record over `maxBytes` (UTF-8), as a dotted path ("text",
 * "assets.0.derived.ocr"), or undefined when all fit. Checked field by field so the report names the one
 * to fix, not just the record.
 */
export function oversizedTextField(
  record: Pick<MemoryRecord, 'text' | 'assets' | 'derived'>,
  maxBytes: number,
): { field: string; bytes: number } | undefined {
  const fields: [string, string][] = [['text', record.text]];
  derivedTexts('derived', record.derived, fields);
  for (const [index, asset] of record.assets.entries()) {
    derivedTexts(`assets.${index}.derived`, asset.derived, fields);
  }
  for (const [field, value] of fields) {
    // Cheap bound first: a UTF-8 encoding is at most 3 bytes per UTF-16 unit.
    if (value.length * 3 <= maxBytes) continue;
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > maxBytes) return { field, bytes };
  }
  return undefined;
}

function derivedTexts(prefix: string, derived: DerivedFields | undefined, out: [string, string][]): void {
  if (derived === undefined) return;
  for (const [index, caption] of (derived.captions ?? []).entries())
    out.push([`${prefix}.captions.${index}`, caption]);
  if (derived.ocr !== undefined) out.push([`${prefix}.ocr`, derived.ocr]);
  if (derived.summary !== undefined) out.push([`${prefix}.summary`, derived.summary]);
}

/** The limits in force: defaults, with `maxTextBytes` overridable and the record cap never below 4 texts. */
export function resolveRecordLimits(overrides: Partial<RecordLimits> = {}): RecordLimits {
  const limits: RecordLimits = { ...RECORD_LIMITS, ...overrides };
  if (overrides.maxRecordBytes === undefined) {
    limits.maxRecordBytes = Math.max(RECORD_LIMITS.maxRecordBytes, limits.maxTextBytes * 4);
  }
  return limits;
}

function scalarBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8') + 2;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value).length;
  if (typeof value === 'boolean') return 5;
  if (value === null || value === undefined) return 4;
  return 0;
}

function tooLarge(field: string, message: string): LimitProblem {
  return { code: 'TOO_LARGE', field, message };
}

function invalid(field: string, message: string): LimitProblem {
  return { code: 'INVALID_INPUT', field, message };
}
