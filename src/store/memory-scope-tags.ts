import type { MemoryRecord } from '../types/memory-record.ts';
import type { MemoryFilter } from './archive-store-spec.ts';
import { eventTimeKey } from './event-time-key.ts';

/**
 * Scope tags: the (name, value) pairs of a memory that filters can select on, stored in an index by every
 * backend (SQLite `memory_tags`, migration 6). `agent_id` and `run_id` from the record's scopes, and
 * `metadata.<key>` for each top-level metadata value that is a string, number or boolean. Values are
 * JSON-encoded so "1" and 1 stay different. Longer values are not indexed (a filter on them cannot match):
 * they are content, not a scope.
 */
export const MAX_TAG_VALUE_CHARS = 256;
/** Metadata keys indexed per memory (the record limits allow 1,000 entries; scopes are few). */
export const MAX_METADATA_TAGS = 64;

export interface ScopeTag {
  name: string;
  value: string;
}

export function scopeTags(record: MemoryRecord): ScopeTag[] {
  const tags: ScopeTag[] = [];
  if (record.agentId !== undefined) tags.push({ name: 'agent_id', value: JSON.stringify(record.agentId) });
  if (record.runId !== undefined) tags.push({ name: 'run_id', value: JSON.stringify(record.runId) });
  let indexed = 0;
  for (const [key, value] of Object.entries(record.metadata ?? {})) {
    if (indexed >= MAX_METADATA_TAGS) break;
    const tag = scalarTag(`metadata.${key}`, value);
    if (tag) {
      tags.push(tag);
      indexed++;
    }
  }
  return tags;
}

/** The tags a filter requires (all of them), in a stable order. */
export function filterTags(filter: MemoryFilter): ScopeTag[] {
  const tags: ScopeTag[] = [];
  if (filter.agentId !== undefined) tags.push({ name: 'agent_id', value: JSON.stringify(filter.agentId) });
  if (filter.runId !== undefined) tags.push({ name: 'run_id', value: JSON.stringify(filter.runId) });
  for (const key of Object.keys(filter.metadata ?? {}).sort()) {
    const value = filter.metadata![key]!;
    tags.push({ name: `metadata.${key}`, value: JSON.stringify(value) });
  }
  return tags;
}

/** True when the record passes the filter (the in-memory store's check, and the reference for SQLite's). */
export function recordMatches(record: MemoryRecord, filter: MemoryFilter): boolean {
  const have = new Set(scopeTags(record).map((tag) => `${tag.name}\u0000${tag.value}`));
  for (const tag of filterTags(filter)) if (!have.has(`${tag.name}\u0000${tag.value}`)) return false;
  const time = record.timestamp === undefined ? undefined : eventTimeKey(record.timestamp);
  if (filter.from !== undefined && (time === undefined || time < eventTimeKey(filter.from))) return false;
  if (filter.to !== undefined && (time === undefined || time > upperBound(filter.to))) return false;
  return true;
}

/** A date-only `to` ("2024-06-03") includes that whole day: every time of day sorts below "T99". */
export function upperBound(to: string): string {
  return to.length === 10 ? `${to}T99` : eventTimeKey(to);
}

function scalarTag(name: string, value: unknown): ScopeTag | undefined {
  if (typeof value === 'number' && !Number.isFinite(value)) return undefined;
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return undefined;
  const encoded = JSON.stringify(value);
  return encoded.length > MAX_TAG_VALUE_CHARS + 2 ? undefined : { name, value: encoded };
}
