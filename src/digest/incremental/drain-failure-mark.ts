import type { ArchiveStore } from '../../store/archive-store-spec.ts';

/**
 * Meta key `semantic-drain-failed:<context>`: the last failure of the context's after-write semantic update
 * (graphmemix-semantic-drains.ts), kept in the store so that every process and thread reading the archive
 * (a server's main thread, whose write worker ran the drain; HTTP and MCP stats) can show it. Stats show it
 * only while the context's backlog holds rows (`semanticPending`): a mark left past the rows is stale and means
 * nothing. A successful drain of the process that failed, a compaction and a forget drop it.
 */
export const DRAIN_FAILURE_META_PREFIX = 'semantic-drain-failed:';

const failureKey = (contextId: string) => `${DRAIN_FAILURE_META_PREFIX}${contextId}`;

/** Why the context's backlog is still waiting, and when it is tried again. */
export interface DrainFailure {
  /** The last attempt's error message. */
  error: string;
  /** When the first of the consecutive failures happened (ISO). */
  since: string;
  /** When the last one happened (ISO). */
  at: string;
  /** Consecutive failed attempts. */
  attempts: number;
  /** When the next automatic attempt runs (ISO); absent: none is planned (the next write or open asks again). */
  nextRetryAt?: string;
}

export async function readDrainFailure(
  store: ArchiveStore,
  contextId: string,
): Promise<DrainFailure | undefined> {
  return store.getMeta<DrainFailure>(failureKey(contextId));
}

/** Writes the failure, or drops it (`undefined`). */
export async function writeDrainFailure(
  store: ArchiveStore,
  contextId: string,
  failure: DrainFailure | undefined,
): Promise<void> {
  await store.setMeta(failureKey(contextId), failure);
}

/** A thrown value's message, bounded (a store error can carry a whole statement). */
export function failureMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > 500 ? `${text.slice(0, 500)}...` : text;
}
