import type { MemoryRecord } from './memory-record.ts';

/** The ids a record explicitly supersedes (input field `supersedes`): trimmed, deduplicated, never itself. */
export function explicitSupersedes(record: MemoryRecord): string[] {
  const ids = new Set<string>();
  for (const id of record.supersedes ?? []) {
    const trimmed = id.trim();
    if (trimmed !== '' && trimmed !== record.id) ids.add(trimmed);
  }
  return [...ids];
}

/**
 * Which end of a `supersedes` edge is the newer version: the one that lists the other explicitly, else the
 * later one in (sequence, id) order (detection only links a later memory of a thread to an earlier one;
 * src/digest/relations/supersedes.ts). The one rule for the packet, the verifiers and the viewer.
 */
export function supersessionOrder(
  x: MemoryRecord,
  y: MemoryRecord,
): { newer: MemoryRecord; older: MemoryRecord } {
  if (explicitSupersedes(x).includes(y.id)) return { newer: x, older: y };
  if (explicitSupersedes(y).includes(x.id)) return { newer: y, older: x };
  const later = x.sequence - y.sequence || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
  return later > 0 ? { newer: x, older: y } : { newer: y, older: x };
}
