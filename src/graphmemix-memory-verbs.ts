import { randomBytes } from 'node:crypto';
import { readApproximateMark } from './digest/incremental/approximate-knn-mark.ts';
import { readDrainFailure } from './digest/incremental/drain-failure-mark.ts';
import { semanticPending } from './digest/incremental/semantic-compaction-mark.ts';
import type { IngestReport } from './digest/ingest-report.ts';
import { GraphmemixError } from './errors/graphmemix-error.ts';
import type {
  AddMessagesReport,
  ListMemoriesOptions,
  ListUsersOptions,
  MemoryHistoryPage,
  MemoryPage,
  MemoryRecordInput,
  UpdateReport,
  UserPage,
  UserStats,
} from './graphmemix-api.ts';
import {
  type ConversationMessage,
  type ConversationScope,
  conversationMessageSchema,
  MAX_MESSAGES,
  messagesToRecords,
} from './schemas/conversation-schema.ts';
import { parseWithSchema } from './schemas/parse-with-schema.ts';
import { MAX_MEMORY_ID_CHARS, type MemoryPatch, memoryPatchSchema } from './schemas/record-schema.ts';
import type { ArchiveStore, MemoryVersion } from './store/archive-store-spec.ts';
import type { MemoryRecord } from './types/memory-record.ts';

/** The list verbs' page bounds (library, HTTP, MCP and CLI share them). */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;
/** A cursor longer than this is not one of ours (ids are at most 256 characters). */
export const MAX_CURSOR_CHARS = 1024;

type Add = (contextId: string, records: readonly MemoryRecordInput[]) => Promise<IngestReport>;

/** listMemories: keyset pages over (sequence, id), the filter applied by the store's indexes before paging. */
export async function listMemoryPage(
  store: ArchiveStore,
  contextId: string,
  options: ListMemoriesOptions = {},
): Promise<MemoryPage> {
  const limit = pageLimit(options.limit);
  const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
  const keyset = {
    limit: limit + 1,
    ...(after === undefined ? {} : { afterSequence: after.sequence, afterId: after.id }),
  };
  if (options.filter === undefined) {
    const page = await store.listMemories(contextId, keyset);
    const memories = page.slice(0, limit);
    const last = memories[memories.length - 1];
    return page.length > limit && last ? { memories, nextCursor: encodeCursor(last) } : { memories };
  }
  // A filtered page does bounded work (FILTER_PAGE_WORK): one that stopped before it was full goes on from
  // where it stopped, so it may hold fewer than `limit` memories, or none, and still have a next cursor.
  const page = await store.listFiltered(contextId, options.filter, keyset);
  const memories = page.items.slice(0, limit);
  const last = memories[memories.length - 1];
  if (page.items.length > limit && last) return { memories, nextCursor: encodeCursor(last) };
  return page.stoppedAfter ? { memories, nextCursor: encodeCursor(page.stoppedAfter) } : { memories };
}

/** listUsers: keyset pages over user (context) ids; the cursor is the last id of the page. */
export async function listUserPage(store: ArchiveStore, options: ListUsersOptions = {}): Promise<UserPage> {
  const limit = pageLimit(options.limit);
  const afterId = options.cursor === undefined ? undefined : decodeUserCursor(options.cursor);
  const page = await store.listContexts({ limit: limit + 1, ...(afterId === undefined ? {} : { afterId }) });
  const users = page.slice(0, limit).map((context) => ({ userId: context.id, memories: context.memories }));
  const last = users[users.length - 1];
  return page.length > limit && last ? { users, nextCursor: encodeUserCursor(last.userId) } : { users };
}

/** A page size from 1 to MAX_PAGE_SIZE (default DEFAULT_PAGE_SIZE); anything else names `limit`. */
export function pageLimit(limit: number | undefined): number {
  const value = limit ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(value) || value < 1 || value > MAX_PAGE_SIZE) {
    throw new GraphmemixError('INVALID_INPUT', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`, {
      location: { field: 'limit' },
    });
  }
  return value;
}

/** A history cursor: ["v", last version of the page] in base64url (tagged, as user cursors are). */
export function encodeVersionCursor(version: number): string {
  return Buffer.from(JSON.stringify(['v', version])).toString('base64url');
}

export function decodeVersionCursor(cursor: string): number {
  const [tag, version] = decodeCursorPair(cursor, 'cursor is not a history cursor this archive gave out');
  if (tag !== 'v' || !Number.isSafeInteger(version) || (version as number) < 0) {
    throw invalidCursor('cursor is not a history cursor this archive gave out');
  }
  return version as number;
}

/** A user cursor: ["u", last user id] in base64url (tagged, so a memory cursor is not taken for one). */
export function encodeUserCursor(userId: string): string {
  return Buffer.from(JSON.stringify(['u', userId])).toString('base64url');
}

export function decodeUserCursor(cursor: string): string {
  const [tag, userId] = decodeCursorPair(cursor, 'cursor is not a user cursor this archive gave out');
  if (tag !== 'u' || typeof userId !== 'string' || userId.length === 0 || userId.length > 256) {
    throw invalidCursor('cursor is not a user cursor this archive gave out');
  }
  return userId;
}

export function encodeCursor(record: Pick<MemoryRecord, 'sequence' | 'id'>): string {
  return Buffer.from(JSON.stringify([record.sequence, record.id])).toString('base64url');
}

export function decodeCursor(cursor: string): { sequence: number; id: string } {
  const [sequence, id] = decodeCursorPair(cursor, 'cursor is not a cursor this archive gave out');
  if (!Number.isSafeInteger(sequence) || typeof id !== 'string' || id.length > MAX_MEMORY_ID_CHARS) {
    throw invalidCursor('cursor is not a cursor this archive gave out');
  }
  return { sequence: sequence as number, id };
}

/** The two-element JSON array inside a base64url cursor; anything else is INVALID_INPUT naming `cursor`. */
function decodeCursorPair(cursor: string, message: string): [unknown, unknown] {
  if (cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalidCursor(message);
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor(message);
  }
  if (!Array.isArray(value) || value.length !== 2) throw invalidCursor(message);
  return [value[0], value[1]];
}

function invalidCursor(message: string): GraphmemixError {
  return new GraphmemixError('INVALID_INPUT', message, { location: { field: 'cursor' } });
}

/**
 * updateMemory without a write worker: read, merge, write through the one ingest path (`add`), so the
 * replaced version is kept by the store and relations follow through the journal. Runs inside the write
 * worker when there is one, so concurrent updates of one memory apply one after the other.
 */
export async function updateStoredMemory(
  store: ArchiveStore,
  add: Add,
  contextId: string,
  id: string,
  patch: MemoryPatch,
): Promise<UpdateReport> {
  const fields = parseWithSchema(memoryPatchSchema, patch);
  const current = await store.getMemory(contextId, id);
  if (!current) throw new GraphmemixError('NOT_FOUND', `memory ${id} not found for this user`);
  // The write clock is the archive's: the new version gets its own recordedAt.
  const { contextId: _context, recordedAt: _clock, ...kept } = current;
  const merged = { ...kept, ...fields, id } as MemoryRecordInput;
  const report = await add(contextId, [merged]);
  const rejection = report.rejected[0];
  if (rejection) {
    throw new GraphmemixError(
      rejection.code === 'TOO_LARGE' ? 'TOO_LARGE' : 'INVALID_INPUT',
      `${rejection.field ?? 'memory'}: ${rejection.message}`,
      rejection.field === undefined ? {} : { location: { field: rejection.field } },
    );
  }
  const memory = await store.getMemory(contextId, id);
  if (!memory) throw new GraphmemixError('NOT_FOUND', `memory ${id} not found for this user`);
  return { memory, version: (await latestVersion(store, contextId, id)) + 1, changed: report.updated > 0 };
}

/** The number of a memory's latest replaced version (versions are numbered 1, 2, ...; 0 when none): one row. */
async function latestVersion(store: ArchiveStore, contextId: string, id: string): Promise<number> {
  return (await store.memoryVersions(contextId, id, { newest: true, limit: 1 }))[0]?.version ?? 0;
}

/** Every version, oldest first, the current one last (library: as many as the memory has). */
export async function historyOf(
  store: ArchiveStore,
  contextId: string,
  id: string,
): Promise<MemoryVersion[] | undefined> {
  const current = await store.getMemory(contextId, id);
  if (!current) return undefined;
  const versions = await store.memoryVersions(contextId, id);
  return [...versions, { version: versions.length + 1, record: current }];
}

/**
 * memoryHistory in keyset pages (HTTP, MCP): versions oldest first, at most `limit` (DEFAULT_PAGE_SIZE, at most
 * MAX_PAGE_SIZE), the current one last on the last page. A memory updated 100,000 times has as many versions:
 * a request reads and returns one page of them, never the whole history.
 */
export async function historyPageOf(
  store: ArchiveStore,
  contextId: string,
  id: string,
  options: { limit?: number; cursor?: string } = {},
): Promise<MemoryHistoryPage | undefined> {
  const limit = pageLimit(options.limit);
  const after = options.cursor === undefined ? 0 : decodeVersionCursor(options.cursor);
  const current = await store.getMemory(contextId, id);
  if (!current) return undefined;
  const page = await store.memoryVersions(contextId, id, { afterVersion: after, limit: limit + 1 });
  if (page.length > limit) {
    const versions = page.slice(0, limit);
    return { versions, nextCursor: encodeVersionCursor(versions[versions.length - 1]!.version) };
  }
  // The last page: the current record is the version after the latest replaced one.
  const latest = page.length > 0 ? page[page.length - 1]!.version : await latestVersion(store, contextId, id);
  if (latest < after) throw invalidCursor('cursor is past the history of this memory');
  const versions = page.length < limit ? [...page, { version: latest + 1, record: current }] : page;
  return page.length < limit ? { versions } : { versions, nextCursor: encodeVersionCursor(latest) };
}
/** addMessages: validate, turn into message records (no model), add through the one ingest path. */
export async function addConversation(
  add: Add,
  contextId: string,
  messages: readonly ConversationMessage[],
  scope: ConversationScope = {},
): Promise<AddMessagesReport> {
  if (!Array.isArray(messages) || messages.length === 0 || messages.length > MAX_MESSAGES) {
    throw new GraphmemixError('INVALID_INPUT', `messages must hold 1 to ${MAX_MESSAGES} messages`, {
      location: { field: 'messages' },
    });
  }
  messages.forEach((message, index) => {
    parseWithSchema(conversationMessageSchema, message, `messages.${index}`);
  });
  // The stamp keeps ids of two calls on one run apart (time, then randomness for calls in the same ms).
  const stamp = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const records = messagesToRecords(messages, scope, new Date(), stamp) as MemoryRecordInput[];
  const report = await add(contextId, records);
  const rejected = new Set(report.rejected.map((rejection) => rejection.recordId));
  return { ...report, memoryIds: records.map((record) => record.id).filter((id) => !rejected.has(id)) };
}

export async function statsOf(store: ArchiveStore, userId: string): Promise<UserStats | undefined> {
  const stats = await store.contextStats(userId);
  if (!stats) return undefined;
  const edges: Record<string, number> = {};
  for (const [type, n] of Object.entries(await store.countEdges(userId))) if (n > 0) edges[type] = n;
  const approximate = await readApproximateMark(store, userId);
  // A failure mark counts only while rows wait: one left past them (another process's) is stale.
  const pending = await semanticPending(store, userId);
  const failure = pending ? await readDrainFailure(store, userId) : undefined;
  return {
    userId,
    ...stats,
    edges,
    ...(approximate === undefined ? {} : { knnApproximate: approximate }),
    ...(pending ? { semanticPending: failure === undefined ? {} : { drainFailure: failure } } : {}),
  };
}
