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

/** JSON with object keys sorted recursively (the stable form hashed by contentHash). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, entry: unknown) => {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return entry;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(entry).sort()) sorted[key] = (entry as Record<string, unknown>)[key];
    return sorted;
  });
}
