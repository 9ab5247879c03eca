import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { ArchiveStore } from '../../store/archive-store-spec.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';
import { readDrainFailure, writeDrainFailure } from './drain-failure-mark.ts';

/**
 * A compaction written in steps (compact-semantic-steps.ts) marks its context in meta
 * `semantic-compaction:<context>` from the write that decided it to the step that finishes it. While the mark is
 * live the semantic side of every relation update of that context is not applied: the ids it would have
 * changed go to the backlog (one meta row per update, `backlogKeyPrefix`), and the compaction's last steps
 * apply the backlog under the new snapshot. So the compaction's steps are the only writer of the context's
 * semantic state while it runs, and nothing a write did is lost.
 */
export const COMPACTION_META_PREFIX = 'semantic-compaction:';
const BACKLOG_META_PREFIX = 'semantic-backlog:';
/**
 * Set (`true`) while the context's backlog may hold rows: one point read tells a question (`semanticPending`)
 * what a list of the rows would, on every backend (PostgreSQL reads it ahead with the question's BEGIN).
 */
const PENDING_META_PREFIX = 'semantic-pending:';
const pendingKey = (contextId: string) => `${PENDING_META_PREFIX}${contextId}`;

/** Whether the context's backlog holds ids whose semantic update is not in yet (a question's flag). */
export async function semanticPending(store: ArchiveStore, contextId: string): Promise<boolean> {
  return (await store.getMeta<boolean>(pendingKey(contextId))) === true;
}

/** Beyond this age a mark whose owner is not known to be running is taken for a dead run (another host). */
export const COMPACTION_LEASE_MS = 10 * 60_000;

export interface SemanticCompactionMark {
  /** The run's token: its steps check it before each write, so a superseded run stops. */
  token: string;
  pid: number;
  /** The machine of `pid` (absent in marks of older versions): there a dead pid means a dead run at once. */
  host?: string;
  /** Set when the mark is written and by each documents step (a heartbeat for other processes). */
  at: string;
  startedAt: string;
  /**
   * Set when the run was stopped on purpose (a facade closed with `background: 'stop'`, e.g. a server's
   * shutdown): the mark is stale at once, for any process, so the context's next write starts a new run
   * instead of waiting out the lease.
   */
  stoppedAt?: string;
}

/** Tokens of the runs alive in this process, with how many holders each (the authority for marks with this pid). */
const running = new Map<string, number>();

export function newCompactionMark(now = new Date()): SemanticCompactionMark {
  return {
    token: randomUUID(),
    pid: process.pid,
    host: hostname(),
    at: now.toISOString(),
    startedAt: now.toISOString(),
  };
}

export async function readCompactionMark(
  store: ArchiveStore,
  contextId: string,
): Promise<SemanticCompactionMark | undefined> {
  return store.getMeta<SemanticCompactionMark>(`${COMPACTION_META_PREFIX}${contextId}`);
}

export async function writeCompactionMark(
  store: ArchiveStore,
  contextId: string,
  mark: SemanticCompactionMark | undefined,
): Promise<void> {
  await store.setMeta(`${COMPACTION_META_PREFIX}${contextId}`, mark);
}

/**
 * Registers a run of this process for the lifetime of `work` (from this call, synchronously: a write right after
 * a run was scheduled must find it live). Nested holders of one token count.
 */
export async function whileRunning<T>(token: string, work: () => Promise<T>): Promise<T> {
  running.set(token, (running.get(token) ?? 0) + 1);
  try {
    return await work();
  } finally {
    const left = running.get(token)! - 1;
    if (left === 0) running.delete(token);
    else running.set(token, left);
  }
}

/**
 * Whether the run that wrote `mark` may still be going: one of this process's live runs, or another process's
 * mark younger than the lease and not marked stopped. A mark of this process that no live run holds was left by
 * a run that stopped (a closed facade, a crash of an earlier process with the same pid): stale.
 */
export function compactionLive(mark: SemanticCompactionMark, now = Date.now()): boolean {
  if (running.has(mark.token)) return true;
  if (mark.pid === process.pid || mark.stoppedAt !== undefined) return false;
  // A mark of this machine whose process is gone (SIGKILL, a crash) is stale now, not after the lease: its
  // user's writes went to the backlog for 10 minutes and an open did not drain it (round 52 audit). Another
  // process that reuses the pid only keeps the lease rule; a live run wrongly taken for dead is superseded by
  // token, never mixed.
  if (mark.host === hostname() && !processAlive(mark.pid)) return false;
  const at = Date.parse(mark.at);
  return Number.isFinite(at) && now - at < COMPACTION_LEASE_MS;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The backlog's key prefix: the context as JSON (quotes escaped), so no other context's keys share it.
 */
export function backlogKeyPrefix(contextId: string): string {
  return `${BACKLOG_META_PREFIX}${JSON.stringify(contextId)}/`;
}

let backlogCounter = 0;

/** Records the ids an update did not apply (upserted or removed: the replay reads their current state). */
export async function appendBacklog(
  store: ArchiveStore,
  contextId: string,
  ids: readonly string[],
): Promise<void> {
  if (ids.length === 0) return;
  // Time first (keys sort by arrival), then this process and a counter (two writers never share a key).
  backlogCounter = (backlogCounter + 1) % 1_000_000;
  const key = `${backlogKeyPrefix(contextId)}${Date.now().toString().padStart(15, '0')}-${process.pid}-${backlogCounter}`;
  await store.setMeta(key, [...new Set(ids)]);
  await store.setMeta(pendingKey(contextId), true);
}

/**
 * Up to `perStep` backlog ids (at least one), oldest rows first; `settle` drops what was taken (a row taken in
 * part is written back with the ids left) and says whether no row is left. The caller applies the ids' current
 * state between the two (order within and across rows does not matter), in the same unit of work as `settle`.
 */
export async function takeBacklog(
  store: ArchiveStore,
  contextId: string,
  perStep: number,
): Promise<{ ids: string[]; settle: () => Promise<boolean> }> {
  const keys = await backlogKeys(store, contextId);
  const ids = new Set<string>();
  const taken: string[] = [];
  let rest: { key: string; ids: string[] } | undefined;
  for (const key of keys) {
    const room = Math.max(1, perStep) - ids.size;
    if (room <= 0) break;
    const row = (await store.getMeta<string[]>(key)) ?? [];
    if (row.length > room) {
      for (const id of row.slice(0, room)) ids.add(id);
      rest = { key, ids: row.slice(room) };
      break;
    }
    for (const id of row) ids.add(id);
    taken.push(key);
  }
  const settle = async () => {
    for (const key of taken) await store.setMeta(key, undefined);
    if (rest !== undefined) await store.setMeta(rest.key, rest.ids);
    const done = rest === undefined && taken.length === keys.length;
    if (done) await store.setMeta(pendingKey(contextId), undefined);
    return done;
  };
  return { ids: [...ids], settle };
}

/** Backlog ids as a delta of their current state: stored ones upserted, the others removed. */
export async function currentState(
  store: ArchiveStore,
  contextId: string,
  ids: readonly string[],
): Promise<{ upserted: Array<{ after: MemoryRecord }>; removed: MemoryRecord[] }> {
  const current = await store.getMemories(contextId, ids);
  const found = new Set(current.map((record) => record.id));
  const removed = ids.filter((id) => !found.has(id)).map((id) => ({ id, contextId }) as MemoryRecord);
  return { upserted: current.map((after) => ({ after })), removed };
}

/**
 * The contexts with backlog rows (one list of the rows' keys: proportional to the rows, not to the archive).
 * Needs `listMetaKeys`.
 */
export async function contextsWithBacklog(store: ArchiveStore): Promise<string[]> {
  const contexts = new Set<string>();
  for (const key of (await store.listMetaKeys?.(BACKLOG_META_PREFIX)) ?? []) {
    const rest = key.slice(BACKLOG_META_PREFIX.length);
    // The context is JSON (backlogKeyPrefix), then '/' and the row's own part.
    const end = rest.lastIndexOf('"/');
    if (end < 0) continue;
    try {
      contexts.add(JSON.parse(rest.slice(0, end + 1)) as string);
    } catch {
      // Not a row this code wrote: left alone.
    }
  }
  return [...contexts];
}

/** The backlog's keys, oldest first. Needs `listMetaKeys` (callers check `canCompactInSteps`). */
export async function backlogKeys(store: ArchiveStore, contextId: string): Promise<string[]> {
  return (await store.listMetaKeys?.(backlogKeyPrefix(contextId))) ?? [];
}

/**
 * Drops the mark, every backlog row and a failed drain's mark: a full compaction read every record, so it
 * applied them all (and a forget removes them with the user).
 */
export async function clearCompactionState(store: ArchiveStore, contextId: string): Promise<void> {
  if ((await store.getMeta(pendingKey(contextId))) !== undefined)
    await store.setMeta(pendingKey(contextId), undefined);
  if ((await readDrainFailure(store, contextId)) !== undefined)
    await writeDrainFailure(store, contextId, undefined);
  if (store.listMetaKeys === undefined) return;
  for (const key of await backlogKeys(store, contextId)) await store.setMeta(key, undefined);
  if ((await readCompactionMark(store, contextId)) !== undefined) {
    await writeCompactionMark(store, contextId, undefined);
  }
}

/** A store the steps can run on (else compaction stays one turn). */
export function canCompactInSteps(store: ArchiveStore): boolean {
  return store.listMetaKeys !== undefined && store.semantic.replaceSnapshot !== undefined;
}

/**
 * Starts a run for a context whose mark was just written (the facade queues its steps after this write).
 * `deferred`, when given, hears of every relation update that left ids in a live run's backlog (the facade
 * holds the context's next writes while its backlog is over the compaction rule's limit).
 */
export type CompactionScheduler = ((contextId: string, mark: SemanticCompactionMark) => void) & {
  deferred?: (contextId: string, ids: number) => void;
  /**
   * False while the context may not start a run yet (its last one ended too recently): the update stays
   * incremental and the next write asks again.
   */
  ready?: (contextId: string) => boolean;
};
