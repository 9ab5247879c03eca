import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { compactSemantic } from './digest/incremental/compact-semantic.ts';
import { defaultKnnThreads } from './digest/incremental/parallel-knn-lists.ts';
import {
  DEFAULT_CONTEXT_ID,
  type IngestMedia,
  ingestItems,
  settleDigest,
  settleParts,
} from './digest/ingest.ts';
import type { IngestRejection, IngestReport } from './digest/ingest-report.ts';
import { type BoundedOcr, createBoundedOcr } from './digest/media/bounded-ocr.ts';
import { digestRecordMedia, type MediaDigestDeps } from './digest/media/digest-record-media.ts';
import { DEFAULT_MEDIA_LIMITS } from './digest/media/media-limits.ts';
import { MediaQueue } from './digest/media/media-queue.ts';
import { compactRelations, updateRelations } from './digest/update-relations.ts';
import type {
  CloseOptions,
  CompactReport,
  ForgetReport,
  Graphmemix,
  MemoryRecordInput,
  SearchFlag,
  SearchResult,
} from './graphmemix-api.ts';
import { BackgroundCompactions } from './graphmemix-compactions.ts';
import { assertNotForgetting, forgetInSteps, ResumedForgets } from './graphmemix-forget.ts';
import {
  addConversation,
  historyOf,
  historyPageOf,
  listMemoryPage,
  listUserPage,
  statsOf,
  updateStoredMemory,
} from './graphmemix-memory-verbs.ts';
import { WriteQueue } from './graphmemix-write-queue.ts';
import { getImporter } from './importers/importer-registry.ts';
import type { DialogueShape, ImportFormat, ImportItem } from './importers/importer-spec.ts';
import { importRootOf } from './importers/media-files.ts';
import type { OcrEngine } from './importers/ocr/tesseract-ocr.ts';
import { readAnswer } from './pipeline/answer-question.ts';
import { startQuestionDeadline } from './pipeline/question-deadline.ts';
import type {
  AnswerResult,
  QuestionInput,
  RetrievalResult,
  RetrieveOptions,
} from './pipeline/retrieval-result.ts';
import { retrieveEvidence } from './pipeline/retrieve-evidence.ts';
import type { ResolvedModelConfig } from './providers/model-config.ts';
import type { ModelSet } from './providers/model-spec.ts';
import { allowMediaRoot, mediaAccessPolicy } from './providers/to-image-url.ts';
import {
  type ReadWorkersOption,
  wantsReadWorkers,
  withReadWorkers,
} from './read-workers/with-read-workers.ts';
import { multiViewSearch } from './retrieval/multi-view-retriever.ts';
import { parseWithSchema } from './schemas/parse-with-schema.ts';
import { questionInputSchema } from './schemas/question-schema.ts';
import { checkRecordShape, resolveRecordLimits } from './schemas/record-limits.ts';
import type { ArchiveStore, MemoryFilter } from './store/archive-store-spec.ts';
import { createMediaFolder } from './store/media-folder.ts';
import { openStore } from './store/open-store.ts';
import type { MemoryRecord } from './types/memory-record.ts';
import { WriteWorkerClient } from './write-worker/write-worker-client.ts';

export interface OpenGraphmemixOptions {
  /** SQLite file path, ':memory:' (private SQLite in memory) or 'memory:' (plain in-memory backend). */
  db: string;
  /** Models to use; each optional. Nothing: everything offline. */
  models?: ModelSet;
  /** An already open store (tests, embedding hosts); `db` is then only a label. Not closed by close(). */
  store?: ArchiveStore;
  /** Open the store read-only. */
  readonly?: boolean;
  /** Run OCR on imported photos (default true; importers decide). */
  ocr?: boolean;
  /**
   * Run writes (ingest, addMemories, deleteMemory, forgetContext) in a worker thread that owns its own
   * connection to the same SQLite file, so digest work never blocks this thread's event loop (servers). The
   * worker builds its models from `modelConfig` (plain data; functions cannot cross threads). Ignored for
   * in-memory stores and an injected `store`, which cannot be shared across threads.
   */
  writeWorker?: boolean | { modelConfig?: ResolvedModelConfig };
  /**
   * The archive's own media folder (where the HTTP server saves uploads). Files inside it that a deleted
   * memory or user referenced are removed with it; files elsewhere are never touched.
   */
  mediaDir?: string;
  /** Default question deadline in ms (see DEFAULT_QUESTION_DEADLINE_MS); RetrieveOptions.deadlineMs wins. */
  questionDeadlineMs?: number;
  /**
   * Run questions (retrieve, answer, search) in a pool of read worker threads, each with its own read-only
   * connection to the same SQLite file, so the pipeline never blocks this thread's event loop (servers:
   * health checks, other requests). A size (`true`: one per core but one, at most 8), or
   * `{ size, concurrency, maxQueue, modelConfig }`; a full queue refuses calls with BUSY. Ignored, like
   * writeWorker, for in-memory and injected stores, and when `models` are given without the `modelConfig`
   * the workers would rebuild them from. See src/read-workers/read-worker-pool.ts.
   */
  readWorkers?: ReadWorkersOption;
  /**
   * When records with local media get their digest (EXIF, OCR, frames, pages, captions; src/digest/media/):
   * 'inline' (default: the write returns digested records; CLI imports, scripts) or 'background' (servers:
   * a write returns once the records are stored with `media.status: pending`; a queue digests them and
   * updates their views; pending work survives a restart). `waitForMedia()` waits for the queue.
   */
  mediaDigest?: 'inline' | 'background';
  /**
   * Where a write's automatic (5%-rule) compaction runs: 'steps' (default) after the write, in bounded turns of
   * the write queue (docs/living-archive.md "Round 22"); 'inline' inside the write (one turn, as before).
   */
  compaction?: 'steps' | 'inline';
  /**
   * Finish in the background, after open, the forgets a stopped process left (SQLite; default false). The
   * long-running shells (`serve`, `mcp`) set it: an erasure must not wait for its requester to ask again.
   * One-shot commands leave it off (their close would wait for the forget). See ResumedForgets.
   */
  resumeForgets?: boolean;
}

/**
 * Opens an archive and returns the public API (src/graphmemix-api.ts). Every method is scoped by context.
 * `retrieve` and `answer` never throw for a model fault: degradation shows in `trace.flags`.
 */
export async function openGraphmemix(options: OpenGraphmemixOptions): Promise<Graphmemix> {
  if (wantsReadWorkers(options)) {
    // This thread opens (creates, migrates) the file first; the workers then attach to it read-only.
    const here = await openGraphmemix({ ...options, readWorkers: false });
    return withReadWorkers(here, options);
  }
  // A writer may rebuild a context's kNN lists on several threads: a bad GRAPHMEMIX_KNN_THREADS fails the open,
  // not an import half-way.
  if (!options.readonly) defaultKnnThreads();
  const store = options.store ?? (await openStore(options.db, options.readonly ? { readonly: true } : {}));
  const ownsStore = options.store === undefined;
  const models = options.models ?? {};
  const deps = {
    store,
    models,
    ...(options.questionDeadlineMs === undefined ? {} : { questionDeadlineMs: options.questionDeadlineMs }),
  };
  // Frames and page images the digest writes: the media folder, else a folder beside the archive file.
  const derivedDir = options.mediaDir ?? derivedFolderFor(options);
  const media = createMediaFolder(derivedDir);
  // Derived images may be sent to a model (reader packet frames) like imported ones.
  allowMediaRoot(media.dir);
  let closed = false;
  const writer = await startWriteWorker(options);
  let ocr: BoundedOcr | undefined;
  const digestDeps = (): MediaDigestDeps => {
    if (options.ocr !== false) {
      ocr ??= createBoundedOcr(
        // Loaded on first use: a text-only archive never loads tesseract.
        lazyTesseract(),
        DEFAULT_MEDIA_LIMITS.ocrTimeoutMs,
      );
    }
    return {
      ...(ocr === undefined ? {} : { ocr }),
      ...(models.vision === undefined ? {} : { vision: models.vision }),
      derivedDir: media.dir,
      limits: DEFAULT_MEDIA_LIMITS,
    };
  };
  const digest = (record: MemoryRecord) => digestRecordMedia(record, digestDeps());
  // One writer at a time in this thread: imports, adds, deletes and the media queue's write-backs. A user's
  // import and a forget queue their pieces one by one (other users' writes go between them).
  const writes = new WriteQueue();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => writes.exclusive(work);
  // Automatic compactions run in steps through the same queue (other writes go between them).
  const compactions =
    options.readonly || writer !== undefined || options.compaction === 'inline'
      ? undefined
      : new BackgroundCompactions(
          store,
          (contextId) => (work) => writes.forContext(contextId, work),
          (contextId) => compactSemantic(store, contextId),
        );
  const inBackground = compactions === undefined ? {} : { compactInBackground: compactions.schedule };
  const resumedForgets =
    options.resumeForgets && !options.readonly && writer === undefined && store.forgettingContexts
      ? new ResumedForgets(store, media, (contextId) => (work) => writes.forContext(contextId, work))
      : undefined;
  resumedForgets?.start((await store.forgettingContexts?.()) ?? []);
  const background = options.mediaDigest === 'background' && !options.readonly && writer === undefined;
  const queue = background
    ? new MediaQueue({
        store,
        digest,
        writeBack: (record, outcome) =>
          writes.forContext(record.contextId, async () => {
            const current = await store.getMemory(record.contextId, record.id);
            // A newer write of the same id replaced the pending record: its own job digests it.
            if (
              current?.media?.sourceHash !== record.media?.sourceHash ||
              current?.media?.status !== 'pending'
            )
              return;
            const settled = settleDigest(record, outcome, record.media!.sourceHash);
            const parts = settleParts(settled, outcome, () => undefined);
            await ingestItems(
              store,
              [settled, ...parts].map((write) => ({
                type: 'record' as const,
                record: write,
                source: { file: 'media-digest', recordId: write.id },
              })),
              {
                contextId: record.contextId,
                ...(models.embedding ? { embedding: models.embedding } : {}),
                ...inBackground,
              },
            );
          }),
      })
    : undefined;
  const ingestMedia: IngestMedia = queue
    ? { mode: 'background', digest, enqueue: (contextId, ids) => queue.enqueue(contextId, ids) }
    : { mode: 'inline', digest };
  // Work a stopped or crashed process left pending.
  const recovering = queue ? queue.recover().catch(() => 0) : Promise.resolve(0);

  // THE question schema (src/schemas/question-schema.ts), shared with the HTTP/MCP bodies.
  const toQuestion = (question: string | QuestionInput): QuestionInput =>
    parseWithSchema(
      questionInputSchema,
      typeof question === 'string' ? { prompt: question } : question,
    ) as QuestionInput;

  async function forgetContext(contextId: string, onStarted?: () => void): Promise<ForgetReport> {
    if (writer) return writer.call('forgetContext', [contextId]);
    // A forget of this user resumed after open: this one is the same erasure. Started already (the write
    // worker's queue goes on); one that failed is taken up below.
    const resumed = resumedForgets?.running(contextId);
    if (resumed !== undefined) {
      onStarted?.();
      const report = await resumed;
      if (report !== undefined) return report;
    }
    // Its steps wait for an import into the same user to finish (and then refuse its later writes).
    const queued = <T>(work: () => Promise<T>) => writes.forContext(contextId, work);
    return forgetInSteps(store, media, queued, contextId, resumed === undefined ? onStarted : undefined);
  }

  async function deleteMemory(contextId: string, id: string): Promise<boolean> {
    if (writer) return writer.call('deleteMemory', [contextId, id]);
    // Its journal entry and relation update would land in a user the forget's steps are deleting.
    await assertNotForgetting(store, contextId);
    const record = await store.getMemory(contextId, id);
    const deleted = await store.deleteMemory(contextId, id);
    // The store drops the memory's own edges and journals the delete; the relation update re-links what it
    // separated (the turns around a deleted message) and the kNN lists it was in.
    if (deleted) {
      await updateRelations(store, contextId, {
        ...(models.embedding === undefined ? {} : { embedding: models.embedding }),
        ...inBackground,
      });
    }
    if (deleted && record) await media.removeUnreferenced(store, media.ownedPaths([record]));
    return deleted;
  }

  async function compact(contextId: string, compactOptions: { k?: number }): Promise<CompactReport> {
    if (writer) return writer.call('compact', [contextId, compactOptions]);
    const started = performance.now();
    const report = await compactRelations(store, contextId, {
      ...(models.embedding === undefined ? {} : { embedding: models.embedding }),
      ...(compactOptions.k === undefined ? {} : { k: compactOptions.k }),
    });
    return {
      contextId,
      memories: await store.countMemories(contextId),
      edges: report.counts,
      seconds: (performance.now() - started) / 1000,
    };
  }

  const api: Graphmemix = {
    store,
    ...(options.mediaDir === undefined ? {} : { mediaDir: media.dir }),
    async ingest(
      path: string,
      ingestOptions: {
        format: ImportFormat;
        contextId?: string;
        shape?: DialogueShape;
        onProgress?: (items: number) => void;
      },
    ): Promise<IngestReport> {
      if (writer) {
        const { onProgress, ...rest } = ingestOptions;
        return writer.call('ingest', [path, rest], onProgress);
      }
      const run = async (schedule?: <T>(work: () => Promise<T>) => Promise<T>) => {
        const importer = await getImporter(ingestOptions.format);
        // The import root is where this archive's imported media live: the one local place (with the media
        // store) whose files may later be sent to a model as images (src/providers/to-image-url.ts).
        const mediaRoot = await importRootOf(path);
        allowMediaRoot(mediaRoot);
        const items = importer.read(path, {
          ...(ingestOptions.contextId === undefined ? {} : { contextId: ingestOptions.contextId }),
          ...(models.vision === undefined ? {} : { vision: models.vision }),
          ...(options.ocr === undefined ? {} : { ocr: options.ocr }),
          ...(ingestOptions.shape === undefined ? {} : { shape: ingestOptions.shape }),
          mediaRoot,
        });
        return ingestItems(store, items, {
          ...(ingestOptions.contextId === undefined ? {} : { contextId: ingestOptions.contextId }),
          ...(models.embedding === undefined ? {} : { embedding: models.embedding }),
          ...(ingestOptions.onProgress === undefined ? {} : { onProgress: ingestOptions.onProgress }),
          media: ingestMedia,
          ...(schedule === undefined ? {} : { schedule }),
          ...inBackground,
        });
      };
      // An import into one user queues its batches and relation update one by one, holding that user: other
      // users' writes go between them (a 10k import held every write of the process for its whole run).
      // Without a user the file may name any, so it is one turn, after any import that holds a user.
      const contextId = ingestOptions.contextId;
      if (contextId === undefined) return writes.forAny(() => run());
      return writes.holding(contextId, () => run(exclusive));
    },
    async addMemories(contextId: string, records: readonly MemoryRecordInput[]): Promise<IngestReport> {
      if (writer) return addThroughWorker(writer, contextId, records);
      const context = contextId || DEFAULT_CONTEXT_ID;
      const items: ImportItem[] = records.map((record, index) => ({
        type: 'record',
        record: record as unknown as MemoryRecord,
        source: { file: 'addMemories', line: index + 1, recordId: record.id },
      }));
      return writes.forContext(context, () =>
        ingestItems(store, items, {
          contextId: context,
          ...(models.embedding === undefined ? {} : { embedding: models.embedding }),
          media: ingestMedia,
          ...inBackground,
        }),
      );
    },
    async waitForCompactions(): Promise<void> {
      if (writer) return writer.call('waitForCompactions', []);
      await compactions?.idle();
    },
    async waitForMedia(): Promise<void> {
      if (writer) return writer.call('waitForMedia', []);
      await recovering;
      await queue?.idle();
    },
    async getMemory(contextId, id) {
      await assertNotForgetting(store, contextId);
      return store.getMemory(contextId, id);
    },
    async listMemories(contextId, listOptions) {
      await assertNotForgetting(store, contextId);
      return listMemoryPage(store, contextId, listOptions);
    },
    async updateMemory(contextId, id, patch) {
      if (writer) return writer.call('updateMemory', [contextId, id, patch]);
      return updateStoredMemory(store, (ctx, records) => api.addMemories(ctx, records), contextId, id, patch);
    },
    async memoryHistory(contextId, id) {
      await assertNotForgetting(store, contextId);
      return historyOf(store, contextId, id);
    },
    async memoryHistoryPage(contextId, id, pageOptions) {
      await assertNotForgetting(store, contextId);
      return historyPageOf(store, contextId, id, pageOptions);
    },
    addMessages(contextId, messages, scope) {
      return addConversation((ctx, records) => api.addMemories(ctx, records), contextId, messages, scope);
    },
    listUsers: (listOptions) => listUserPage(store, listOptions),
    async userStats(userId) {
      await assertNotForgetting(store, userId);
      return statsOf(store, userId);
    },
    deleteMemory: (contextId: string, id: string) =>
      writes.forContext(contextId, () => deleteMemory(contextId, id)),
    // Not in the write queue as a whole: forgetInSteps queues each step (other writes go between them).
    forgetContext: (contextId: string, forgetOptions?: { onStarted?: () => void }) =>
      forgetContext(contextId, forgetOptions?.onStarted),
    async compact(contextId: string, compactOptions: { k?: number } = {}): Promise<CompactReport> {
      return writes.forContext(contextId, async () => {
        await assertNotForgetting(store, contextId);
        return compact(contextId, compactOptions);
      });
    },
    deleteUser: (contextId: string, forgetOptions?: { onStarted?: () => void }) =>
      forgetContext(contextId, forgetOptions?.onStarted),
    async releaseMedia(contextId: string, uris: readonly string[]): Promise<number> {
      // Only the context's own upload folder: a caller cannot release another user's files.
      const folder = media.contextFolder(contextId);
      if (folder === undefined || options.mediaDir === undefined) return 0;
      const paths = uris
        .flatMap((uri) => media.owned(uri) ?? [])
        .filter((path) => path.startsWith(`${folder}${sep}`));
      return media.removeUnreferenced(store, paths);
    },
    async search(contextId, query, searchOptions) {
      return (await api.searchMemories(contextId, query, searchOptions)).hits;
    },
    async searchMemories(
      contextId: string,
      query: string,
      searchOptions: { k?: number; signal?: AbortSignal; filter?: MemoryFilter } = {},
    ): Promise<SearchResult> {
      const k = searchOptions.k ?? 10;
      await assertNotForgetting(store, contextId);
      const result = await multiViewSearch(
        store,
        contextId,
        { text: query, imageUris: [] },
        {
          limit: Math.max(k, 24),
          ...(models.embedding ? { embedding: models.embedding } : {}),
          ...(searchOptions.signal ? { signal: searchOptions.signal } : {}),
          ...(searchOptions.filter ? { filter: searchOptions.filter } : {}),
        },
      );
      const top = result.ranked.slice(0, k);
      const records = new Map(
        (
          await store.getMemories(
            contextId,
            top.map((m) => m.memoryId),
          )
        ).map((r) => [r.id, r]),
      );
      const hits = top.flatMap((m) => {
        const record = records.get(m.memoryId);
        return record ? [{ memoryId: m.memoryId, score: m.score, bestView: m.bestView, record }] : [];
      });
      const flags: SearchFlag[] = [];
      if (result.lexicalBounded.length > 0) flags.push('lexical_search_bounded');
      if (result.denseFailed) flags.push('dense_retrieval_failed');
      return { hits, flags };
    },
    async retrieve(
      contextId: string,
      question: string | QuestionInput,
      retrieveOptions?: RetrieveOptions,
    ): Promise<RetrievalResult> {
      const input = toQuestion(question);
      await assertNotForgetting(store, contextId);
      return retrieveEvidence(deps, contextId, input, retrieveOptions);
    },
    async answer(
      contextId: string,
      question: string | QuestionInput,
      retrieveOptions?: RetrieveOptions,
    ): Promise<AnswerResult> {
      // One deadline for the whole question: retrieval's calls and the reader share it.
      const deadline = startQuestionDeadline(
        retrieveOptions?.deadlineMs ?? options.questionDeadlineMs,
        retrieveOptions?.signal,
      );
      const input = toQuestion(question);
      await assertNotForgetting(store, contextId);
      const result = await retrieveEvidence(deps, contextId, input, retrieveOptions, deadline);
      return readAnswer(result, models.reader, deadline.signal, deadline);
    },
    async close(closeOptions?: CloseOptions): Promise<void> {
      if (closed) return;
      closed = true;
      const mode = closeOptions?.background ?? 'finish';
      // The media queue's write-backs are writes that may start a compaction: it closes first.
      await queue?.close();
      await compactions?.close(mode);
      await resumedForgets?.close(mode);
      await writer?.close(mode);
      await ocr?.terminate();
      if (ownsStore) await store.close();
    },
  };
  return api;
}

async function startWriteWorker(options: OpenGraphmemixOptions): Promise<WriteWorkerClient | undefined> {
  const wanted = options.writeWorker;
  if (!wanted || options.store !== undefined || options.readonly) return undefined;
  if (options.db === ':memory:' || options.db.startsWith('memory:')) return undefined;
  const modelConfig = typeof wanted === 'object' ? wanted.modelConfig : undefined;
  const client = new WriteWorkerClient({
    db: options.db,
    mediaPolicy: mediaAccessPolicy(),
    ...(options.mediaDir === undefined ? {} : { mediaDir: options.mediaDir }),
    ...(modelConfig === undefined ? {} : { modelConfig }),
    ...(options.ocr === undefined ? {} : { ocr: options.ocr }),
    ...(options.mediaDigest === undefined ? {} : { mediaDigest: options.mediaDigest }),
    ...(options.compaction === undefined ? {} : { compaction: options.compaction }),
    ...(options.resumeForgets === undefined ? {} : { resumeForgets: options.resumeForgets }),
  });
  await client.started();
  return client;
}

/**
 * addMemories through the write worker. Crossing a thread is a structured clone, which recurses: a record
 * nested deep enough to be rejected by the record limits would overflow it before ingest could reject it.
 * So the same iterative shape check ingest runs first (checkRecordShape) screens records here, those records
 * are rejected exactly as ingest would, the rest go to the worker, and the two reports are merged with the
 * original line numbers.
 */
async function addThroughWorker(
  writer: WriteWorkerClient,
  contextId: string,
  records: readonly MemoryRecordInput[],
): Promise<IngestReport> {
  const limits = resolveRecordLimits();
  const sent: MemoryRecordInput[] = [];
  const lineOf: number[] = [];
  const screened: IngestRejection[] = [];
  records.forEach((record, index) => {
    const problem = checkRecordShape(record, limits);
    if (!problem) {
      sent.push(record);
      lineOf.push(index + 1);
      return;
    }
    const id = (record as { id?: unknown } | null)?.id;
    screened.push({
      file: 'addMemories',
      line: index + 1,
      ...(typeof id === 'string' && id !== '' ? { recordId: id } : {}),
      code: problem.code,
      field: problem.field,
      message: problem.message,
    });
  });
  const report = await writer.call<IngestReport>('addMemories', [contextId, sent]);
  if (screened.length === 0) return report;
  for (const rejection of report.rejected) {
    if (rejection.file === 'addMemories' && rejection.line !== undefined) {
      rejection.line = lineOf[rejection.line - 1] ?? rejection.line;
    }
  }
  report.rejected = [...report.rejected, ...screened].sort((x, y) => (x.line ?? 0) - (y.line ?? 0));
  return report;
}

/** Where digest outputs go without a media folder: beside a file archive, else a per-process temp folder. */
function derivedFolderFor(options: OpenGraphmemixOptions): string {
  const inMemory =
    options.db === ':memory:' || options.db.startsWith('memory:') || options.store !== undefined;
  return inMemory ? join(tmpdir(), `graphmemix-derived-${process.pid}`) : `${options.db}.media`;
}

/** The tesseract OCR engine factory, loading tesseract.js only when the first image is read. */
function lazyTesseract(): () => OcrEngine {
  return () => {
    let engine: Promise<OcrEngine> | undefined;
    const get = () => {
      engine ??= import('./importers/ocr/tesseract-ocr.ts').then((m) => m.createTesseractOcr());
      return engine;
    };
    return {
      recognize: async (image: Buffer) => (await get()).recognize(image),
      terminate: async () => {
        if (engine) await (await engine).terminate();
      },
    };
  };
}
