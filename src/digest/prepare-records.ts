import type { SourcePosition } from '../importers/importer-spec.ts';
import type { MemoryWrite } from '../store/archive-store-spec.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import { buildViews } from './build-views.ts';
import { contentHash } from './content-hash.ts';
import { relationKeys } from './incremental/relation-keys.ts';
import { checkRecordItem, type ValidatedItem } from './ingest-stages.ts';

/** The validate stage's outcome for a record item, and when valid, what the write needs of it. */
export interface PreparedRecord {
  validated: Extract<ValidatedItem, { type: 'record' | 'rejected' }>;
  /** The record's views, content hash and relation keys (absent for a rejection). */
  write?: MemoryWrite;
}

/** Import options the record stages read (the same in the calling thread and in the prepare helper). */
export interface PrepareOptions {
  contextId: string | undefined;
  maxTextBytes: number | undefined;
}

/**
 * Validate, stamp, hash, views and relation keys of one record whose sequence is known: everything of a
 * record's way into the archive that reads nothing but the record, so a helper thread can do it ahead of the
 * writes (prepared-items.ts). The calling thread's ingest path makes the same steps in the same order.
 */
export function prepareRecord(
  item: { record: unknown; source: SourcePosition },
  options: PrepareOptions,
  sequence: number,
): PreparedRecord {
  const validated = checkRecordItem(item, options, sequence);
  if (validated.type === 'rejected') return { validated };
  const hash = stampAndHash(validated.record);
  return { validated, write: writeOf(validated.record, hash) };
}

/** Sets the second clock (when this version entered the archive; a restored backup keeps its own) and hashes. */
export function stampAndHash(record: MemoryRecord): string {
  record.recordedAt ??= new Date().toISOString();
  return contentHash(record);
}

/** Views stage: views, content hash and relation keys of a record ready to write. */
export function writeOf(record: MemoryRecord, hash: string): MemoryWrite {
  return { record, views: buildViews(record), contentHash: hash, keys: relationKeys(record) };
}

/** Most values and deepest nesting a record may have to be handed to the helper (else it is prepared here). */
const PLAIN_VALUES = 4096;
const PLAIN_DEPTH = 32;

/**
 * The approximate size in bytes (string lengths, 8 a value) of a record input that is plain data (what
 * JSON.parse makes: plain objects, arrays, strings, finite numbers, booleans, null) small enough to copy to
 * the helper cheaply; undefined for anything else. A copy of anything else could differ from what the
 * validation would read here (a class instance loses its prototype's getters, a function cannot be copied),
 * so such records, and very large ones, are prepared in the calling thread as always.
 */
export function plainRecordSize(input: unknown): number | undefined {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return undefined;
  const stack: unknown[] = [input];
  const depths: number[] = [0];
  let values = 0;
  let bytes = 0;
  while (stack.length > 0) {
    const value = stack.pop();
    const depth = depths.pop()!;
    if (++values > PLAIN_VALUES) return undefined;
    bytes += 8;
    if (value === null) continue;
    switch (typeof value) {
      case 'string':
        bytes += value.length;
        continue;
      case 'boolean':
      case 'number':
        continue;
      case 'object':
        break;
      default:
        return undefined;
    }
    if (depth >= PLAIN_DEPTH) return undefined;
    if (Array.isArray(value)) {
      if (Object.getPrototypeOf(value) !== Array.prototype) return undefined;
      for (let i = 0; i < value.length; i++) {
        stack.push(value[i]);
        depths.push(depth + 1);
      }
      continue;
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return undefined;
    // A non-enumerable own field would be read by the validation but not copied.
    const keys = Object.keys(value);
    if (Object.getOwnPropertyNames(value).length !== keys.length) return undefined;
    for (const key of keys) {
      bytes += key.length;
      stack.push((value as Record<string, unknown>)[key]);
      depths.push(depth + 1);
    }
  }
  return bytes;
}
