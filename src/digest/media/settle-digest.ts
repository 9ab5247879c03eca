import { toMemoryRecord } from '../../schemas/record-schema.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';
import { hasLocalMedia, type MediaDigestOutcome } from './digest-record-media.ts';

/**
 * The part memories a digest made (PDF pages), ready to write next to the settled record: checked by the
 * one record path, stamped with the record's write time, and with `media.status: done` when they hold
 * local media (a page image: already OCR'd, never digested again). None when the record's digest failed.
 */
export function settleParts(
  settled: MemoryRecord,
  outcome: MediaDigestOutcome,
  warn: (message: string) => void,
): MemoryRecord[] {
  if (settled.media?.status !== 'done') return [];
  const parts: MemoryRecord[] = [];
  for (const part of outcome.parts ?? []) {
    const candidate: MemoryRecord = { ...part, contextId: settled.contextId };
    if (settled.recordedAt !== undefined) candidate.recordedAt = settled.recordedAt;
    if (hasLocalMedia(candidate)) candidate.media = { status: 'done', sourceHash: settled.media.sourceHash };
    const checked = toMemoryRecord(candidate, { contextId: settled.contextId, sequence: settled.sequence });
    if (checked.ok) parts.push(checked.record);
    else warn(`record ${settled.id}: part ${part.id} dropped: ${checked.message}`);
  }
  return parts;
}

/**
 * The record a digest outcome leaves: the digested record when it still passes the record limits, else the
 * input with status failed. Shared by the inline stage and the background queue.
 */
export function settleDigest(
  input: MemoryRecord,
  outcome: MediaDigestOutcome,
  sourceHash: string,
): MemoryRecord {
  const status = outcome.error === undefined ? 'done' : 'failed';
  const media = { status, sourceHash, ...(outcome.error ? { error: outcome.error } : {}) } as const;
  const candidate = { ...outcome.record, media };
  const checked = toMemoryRecord(candidate, { contextId: input.contextId, sequence: input.sequence });
  if (checked.ok) return checked.record;
  return {
    ...input,
    media: { status: 'failed', sourceHash, error: `digest result rejected: ${checked.message}` },
  };
}
