import { clearCompactionState } from './digest/incremental/semantic-compaction-mark.ts';
import { recordPages } from './digest/load-records.ts';
import { BACKGROUND_RETRY_DELAYS_MS, RetryTimers } from './digest/retry-timers.ts';
import { KEYS_VERSION_META_PREFIX, RELATION_KEYS_VERSION } from './digest/update-relations.ts';
import { GraphmemixError } from './errors/graphmemix-error.ts';
import type { ForgetReport } from './graphmemix-api.ts';
import type { ArchiveStore } from './store/archive-store-spec.ts';
import { MEDIA_KEY, type MediaFolder } from './store/media-folder.ts';

/** The library's write queue: one write of this process at a time, in call order. */
export type Exclusive = <T>(work: () => Promise<T>) => Promise<T>;

/**
 * Forgets a context through the write queue one store step at a time (ArchiveStore.deleteContext with
 * `schedule`), so other writes of this process, other users' adds included, run between the steps of a large
 * forget instead of after all of it. The media the context owns are read (in pages, outside the queue) once
 * writes to it are refused and before anything is deleted, and removed after the last step. `onStarted` fires
 * when the context is marked (the write worker's queue goes on from there).
 */
export async function forgetInSteps(
  store: ArchiveStore,
  media: MediaFolder,
  exclusive: Exclusive,
  contextId: string,
  onStarted?: () => void,
): Promise<ForgetReport> {
  let memories = 0;
  let paths = new Set<string>();
  const deleted = await store.deleteContext(contextId, {
    schedule: exclusive,
    started: async () => {
      onStarted?.();
      // A compaction in steps of this user stops at its next step (its mark is gone).
      await clearCompactionState(store, contextId);
      memories = await store.countMemories(contextId);
      paths = await ownedMediaOf(store, media, contextId);
    },
  });
  const mediaFiles = await exclusive(() => media.removeContext(store, contextId, paths));
  return { contextId, deleted, memories: deleted ? memories : 0, mediaFiles };
}

/**
 * The forgets a stopped process left (SQLite: a server restarted or killed half-way through a user's forget),
 * finished in the background after open (OpenGraphmemixOptions.resumeForgets, set by `serve` and `mcp`): a
 * forget is an erasure someone asked for, and it must not wait for that someone to ask again. Each goes
 * through the write queue step by step like any forget; until it ends the user's reads and writes answer
 * CONFLICT, as during every forget. A client's forget of the same user waits for it and gets its report.
 * close('stop') (a shutdown) makes the next step fail, so the forget stops between two steps (each a
 * transaction) and the next open resumes it. A failure is tried again after each of BACKGROUND_RETRY_DELAYS_MS
 * (round 51; each retry first checks that the user is still marked: another process may have finished it, and
 * the user may hold new memories since), then left for the next open or a client's forget; meanwhile the
 * user's requests answer CONFLICT as before. Nothing awaits these runs but `running` and close.
 */
export class ResumedForgets {
  private readonly runs = new Map<string, Promise<ForgetReport | undefined>>();
  private stopping = false;
  private readonly retries: RetryTimers;
  /** The last failure per context (until one of its runs succeeds). */
  readonly failures = new Map<string, unknown>();

  constructor(
    private readonly store: ArchiveStore,
    private readonly media: MediaFolder,
    /** The write queue's turn for a context (WriteQueue.forContext). */
    private readonly queued: (contextId: string) => Exclusive,
    /** Waits before the automatic retries of a failed forget (tests shorten them). */
    retryDelaysMs: readonly number[] = BACKGROUND_RETRY_DELAYS_MS,
  ) {
    this.retries = new RetryTimers(retryDelaysMs);
  }

  /** Starts the forget of each context (those `forgettingContexts` lists), not awaited. */
  start(contextIds: readonly string[]): void {
    for (const contextId of contextIds) if (!this.runs.has(contextId)) this.launch(contextId, false);
  }

  private launch(contextId: string, retry: boolean): void {
    const exclusive: Exclusive = (work) =>
      this.stopping
        ? Promise.reject(
            new GraphmemixError(
              'CONFLICT',
              `the forget of ${contextId} was stopped; the next open resumes it`,
            ),
          )
        : this.queued(contextId)(work);
    const attempt = async (): Promise<ForgetReport | undefined> => {
      // A retry forgets only a user still marked: another process may have finished the forget since, and
      // the user may hold new memories that nobody asked to forget.
      if (retry && !(await this.store.isForgetting?.(contextId))) return undefined;
      return forgetInSteps(this.store, this.media, exclusive, contextId);
    };
    const run = attempt().then(
      (report) => {
        this.retries.reset(contextId);
        this.failures.delete(contextId);
        return report;
      },
      (error: unknown) => {
        this.failures.set(contextId, error);
        this.retries.failed(contextId, () => this.launch(contextId, true), !this.stopping);
        return undefined;
      },
    );
    this.runs.set(contextId, run);
    void run.finally(() => {
      if (this.runs.get(contextId) === run) this.runs.delete(contextId);
    });
  }

  /**
   * The resumed forget of the context under way, if any: its report, or undefined when it failed. A retry
   * planned for it is dropped: the caller (a client's forget) runs the forget now.
   */
  running(contextId: string): Promise<ForgetReport | undefined> | undefined {
    this.retries.cancel(contextId);
    return this.runs.get(contextId);
  }

  /** Retries planned now (a failed forget's next attempt). */
  retriesPlanned(): number {
    return this.retries.planned();
  }

  /** Resolves once none is running. */
  async idle(): Promise<void> {
    while (this.runs.size > 0) await Promise.allSettled([...this.runs.values()]);
  }

  /** Waits for the forgets under way (`finish`), or stops each before its next step (`stop`). */
  async close(mode: 'finish' | 'stop'): Promise<void> {
    if (mode === 'stop') this.stopping = true;
    await this.idle();
    // A planned retry is left for the next open (the user stays marked).
    this.stopping = true;
    this.retries.clear();
  }
}

/**
 * Refuses a read of a context being forgotten (a forget under way, or one a killed process left: calling
 * forget again finishes it). Nobody reads a half-deleted user. One indexed lookup on SQLite; other stores
 * forget in one transaction and have no such state.
 */
export async function assertNotForgetting(store: ArchiveStore, contextId: string): Promise<void> {
  if (store.isForgetting && (await store.isForgetting(contextId))) {
    throw new GraphmemixError(
      'CONFLICT',
      `context ${contextId} is being forgotten (if no forget is running, forget it again to finish)`,
      { details: { contextId, reason: 'context_being_forgotten' } },
    );
  }
}

/** Rows per read of the context's media keys or records. */
const MEDIA_PAGE = 2000;

/**
 * The archive's own media files the context's records reference. A context whose records all carry the
 * current relation keys (version 2 came after the `media:` key per local file) answers from those keys: an
 * index range, only as long as its media references. Older contexts are walked record by record.
 */
async function ownedMediaOf(
  store: ArchiveStore,
  media: MediaFolder,
  contextId: string,
): Promise<Set<string>> {
  const version = (await store.getMeta<number>(`${KEYS_VERSION_META_PREFIX}${contextId}`)) ?? 0;
  if (version >= RELATION_KEYS_VERSION) return ownedMediaByKeys(store, media, contextId);
  const paths = new Set<string>();
  for await (const page of recordPages(store, contextId, MEDIA_PAGE)) {
    for (const path of media.ownedPaths(page)) paths.add(path);
  }
  return paths;
}

async function ownedMediaByKeys(
  store: ArchiveStore,
  media: MediaFolder,
  contextId: string,
): Promise<Set<string>> {
  const paths = new Set<string>();
  // Every key that starts with MEDIA_KEY sorts between it and the same text with its last character one up.
  const to = `${MEDIA_KEY.slice(0, -1)}${String.fromCharCode(MEDIA_KEY.charCodeAt(MEDIA_KEY.length - 1) + 1)}`;
  let from = MEDIA_KEY;
  for (;;) {
    const page = await store.findKeyRange(contextId, from, to, { limit: MEDIA_PAGE });
    for (const { key } of page) {
      const path = media.owned(key.slice(MEDIA_KEY.length));
      if (path !== undefined) paths.add(path);
    }
    if (page.length < MEDIA_PAGE) return paths;
    // Past the last key's other records (a path holds no NUL): a file referenced by many memories is one key.
    from = `${page[page.length - 1]!.key}\u0000`;
  }
}
