import { createHash } from 'node:crypto';
import type { MemoryRecord } from '../types/memory-record.ts';
import { VIEWS_VERSION } from './build-views.ts';

/**
 * sha256 (hex) of the canonical record JSON: keys sorted at every level, undefined values dropped, so the
 * same record always hashes the same whatever order its source wrote the fields in. The views version is
 * mixed in, so records get fresh views when the view rules change.
 */
export function contentHash(record: MemoryRecord): string {
  return createHash('sha256').update(`views:${VIEWS_VERSION}\n`).update(canonicalJson(record)).digest('hex');
}

/** JSON with object keys sorted recursively (the stable form hashed by contentHash). Same as JSON.stringify otherwise. */
export function canonicalJson(value: unknown): string {
  return write(value) ?? 'null';
}

/** Hand-written rather than a JSON.stringify replacer: hashing runs once per record and this is ~3x faster. */
function write(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') {
    return typeof value === 'function' || typeof value === 'symbol' ? undefined : JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((entry) => write(entry) ?? 'null').join(',')}]`;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(value);
  const parts: string[] = [];
  for (const key of Object.keys(value).sort()) {
    const entry = write((value as Record<string, unknown>)[key]);
    if (entry !== undefined) parts.push(`${JSON.stringify(key)}:${entry}`);
  }
  return `{${parts.join(',')}}`;
}
