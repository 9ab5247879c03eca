import { sep } from 'node:path';
import { compactSemantic } from './digest/incremental/compact-semantic.ts';
import { defaultKnnThreads } from './digest/incremental/parallel-knn-lists.ts';
import { DEFAULT_CONTEXT_ID, type IngestMedia, ingestItems } from './digest/ingest.ts';
import type { IngestReport } from './digest/ingest-report.ts';
import { type BoundedOcr, createBoundedOcr } from './digest/media/bounded-ocr.ts';
import { digestRecordMedia, type MediaDigestDeps } from './digest/media/digest-record-media.ts';
import { DEFAULT_MEDIA_LIMITS } from './digest/media/media-limits.ts';
import { MediaQueue } from './digest/media/media-queue.ts';
import { settleDigest, settleParts } from './digest/media/settle-digest.ts';
import { compactRelations, updateRelations } from './digest/update-relations.ts';
import { GraphmemixError } from './errors/graphmemix-error.ts';
import type {
  CloseOptions,
  CompactReport,
  ForgetOptions,
  ForgetReport,
  Graphmemix,
  MemoryRecordInput,
  WriteOptions,
} from './graphmemix-api.ts';
import { BackgroundCompactions } from './graphmemix-compactions.ts';
import { assertNotForgetting, forgetInSteps, ResumedForgets } from './graphmemix-forget.ts';
import { derivedFolderFor, lazyTesseract } from './graphmemix-media.ts';
import {
  addConversation,
  historyOf,
  historyPageOf,
  listMemoryPage,
  listUserPage,
  statsOf,
  updateStoredMemory,
} from './graphmemix-memory-verbs.ts';
import type { OpenGraphmemixOptions } from './graphmemix-options.ts';
import { RelationRecovery } from './graphmemix-relation-recovery.ts';
import { searchMemoryHits } from './graphmemix-search.ts';
import { SemanticDrains } from './graphmemix-semantic-drains.ts';
import { WriteAdmission } from './graphmemix-write-admission.ts';
import { WriteQueue } from './graphmemix-write-queue.ts';
import { addThroughWorker, startWriteWorker, withOptions } from './graphmemix-write-worker.ts';
import { getImporter } from './importers/importer-registry.ts';
import type { DialogueShape, ImportFormat, ImportItem } from './importers/importer-spec.ts';
import { importRootOf } from './importers/media-files.ts';
import { readAnswer } from './pipeline/answer-question.ts';
import { startQuestionDeadline } from './pipeline/question-deadline.ts';
import type {
  AnswerResult,
  QuestionInput,
  RetrievalResult,
  RetrieveOptions,
} from './pipeline/retrieval-result.ts';
import { retrieveEvidence } from './pipeline/retrieve-evidence.ts';
import { allowMediaRoot } from './providers/to-image-url.ts';
import { wantsReadWorkers, withReadWorkers } from './read-workers/with-read-workers.ts';
import { parseWithSchema } from './schemas/parse-with-schema.ts';
import { questionInputSchema } from './schemas/question-schema.ts';
import { createMediaFolder } from './store/media-folder.ts';
import { openStore } from './store/open-store.ts';
import type { MemoryRecord } from './types/memory-record.ts';

export type { OpenGraphmemixOptions } from './graphmemix-options.ts';

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
  // Imports, adds, deletes and the media queue's write-backs, in one lane per user: one write at a time with one
  // writer connection (SQLite), up to PARALLEL_WRITE_LANES users side by side where the store lets them
  // (PostgreSQL). Users take turns (a user's next write queues behind the others' waiting ones), so one user's
  // backlog delays another's write by one turn, not by all of it. A user's import and a forget queue their
  // pieces one by one (other users' writes go between them).
  const writes = new WriteQueue({
    perContext: true,
    ...(store.independentContextWrites === true ? {} : { parallel: 1 }),
  });
  // Automatic compactions run in steps through the same queue (other writes go between them).
  const compactions =
    options.readonly || writer !== undefined || options.compaction === 'inline'
      ? undefined
      : new BackgroundCompactions(store, writes, (contextId) => compactSemantic(store, contextId));
  options.stopCompactions?.addEventListener('abort', () => compactions?.stop(), { once: true });
  const inBackground = compactions === undefined ? {} : { compactInBackground: compactions.schedule };
  // Every writer facade drains the semantic backlog rows a stopped process left; only 'after-write' leaves new ones.
  const drains =
    options.readonly || writer !== undefined
      ? undefined
      : new SemanticDrains(store, writes, () => ({ ...inBackground }));
  drains?.recover();
  // 'after-write' is the default since round 38: an add returns once its records, postings and schema edges are in.
  const afterWrite = options.semanticUpdates === 'in-write' ? undefined : drains;
  /**
   * The relation options of a write asked in `lane`. An import (`inWrite`) applies its semantic side in the write
   * in either mode: its report counts the edges it made, and a bulk import's rebuild is one pass anyway.
   */
  const relationOptions = (lane?: string, inWrite = false) => ({
    ...inBackground,
    ...(afterWrite === undefined || inWrite
      ? {}
      : { semanticAfterWrite: (contextId: string) => afterWrite.schedule(contextId, lane) }),
  });
  // Every writer facade applies the relation journal a stopped process left (a killed import's relation stage).
  const recovery =
    options.readonly || writer !== undefined || options.recoverRelations === false
      ? undefined
      : new RelationRecovery(store, writes, () => ({
          ...(models.embedding === undefined ? {} : { embedding: models.embedding }),
          ...relationOptions(),
        }));
  recovery?.start();
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
                ...relationOptions(),
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

  /** An add's ingest, run inside a turn of `context`'s writes that the caller holds (addMemories, updateMemory). */
  const addInTurn = (context: string, records: readonly MemoryRecordInput[], options?: WriteOptions) => {
    const items: ImportItem[] = records.map((record, index) => ({
      type: 'record',
      record: record as unknown as MemoryRecord,
      // A null or non-object entry is rejected by the record schema with its line; its id is read safely here.
      source: {
        file: 'addMemories',
        line: index + 1,
        recordId: String((record as { id?: unknown } | null)?.id ?? `line ${index + 1}`),
      },
    }));
    return ingestItems(store, items, {
      contextId: context,
      ...(models.embedding === undefined ? {} : { embedding: models.embedding }),
      media: ingestMedia,
      ...relationOptions(options?.lane),
    });
  };

  // THE question schema (src/schemas/question-schema.ts), shared with the HTTP/MCP bodies.
  const toQuestion = (question: string | QuestionInput): QuestionInput =>
    parseWithSchema(
      questionInputSchema,
      typeof question === 'string' ? { prompt: question } : question,
    ) as QuestionInput;

  async function forgetContext(contextId: string, forgetOptions: ForgetOptions = {}): Promise<ForgetReport> {
    const { onStarted, lane } = forgetOptions;
    if (writer) {
      // The worker's progress reply says the forget has begun (once).
      const sent = [contextId, ...withOptions(lane === undefined ? undefined : { lane })];
      return writer.call('forgetContext', sent, onStarted && once(onStarted));
    }
    // A forget of this user resumed after open: this one is the same erasure. Started already (the write
    // worker's queue goes on); one that failed is taken up below.
    const resumed = resumedForgets?.running(contextId);
    if (resumed !== undefined) {
      onStarted?.();
      const report = await resumed;
      if (report !== undefined) return report;
    }
    // Its steps wait for an import into the same user to finish (and then refuse its later writes).
    const queued = <T>(work: () => Promise<T>) => writes.forContext(contextId, work, { asker: lane });
    return forgetInSteps(store, media, queued, contextId, resumed === undefined ? onStarted : undefined);
  }

  async function deleteMemory(contextId: string, id: string, options?: WriteOptions): Promise<boolean> {
    if (writer) return writer.call('deleteMemory', [contextId, id, ...withOptions(options)]);
    // Its journal entry and relation update would land in a user the forget's steps are deleting.
    await assertNotForgetting(store, contextId);
    const record = await store.getMemory(contextId, id);
    const deleted = await store.deleteMemory(contextId, id);
    // The store drops the memory's own edges and journals the delete; the relation update re-links what it
    // separated (the turns around a deleted message) and the kNN lists it was in.
    if (deleted) {
      await updateRelations(store, contextId, {
        ...(models.embedding === undefined ? {} : { embedding: models.embedding }),
        ...relationOptions(options?.lane),
      });
    }
    if (deleted && record) await media.removeUnreferenced(store, media.ownedPaths([record]));
    // Last: the relation update has consumed the journal entry, which holds the record. The store erased
    // before it until round 53, and that copied the entry into the file, where it stayed after the delete
    // returned (test/store/delete-erasure.test.ts). In the delete's own turn: never inside another write's
    // open transaction.
    if (deleted) await store.eraseDeleted?.();
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
        lane?: string;
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
          ...relationOptions(ingestOptions.lane, true),
        });
      };
      // An import into one user queues its batches and relation update one by one, holding that user: other
      // users' writes go between them (a 10k import held every write of the process for its whole run).
      // Without a user the file may name any, so it is one turn, after any import that holds a user.
      const contextId = ingestOptions.contextId;
      if (contextId === undefined) return writes.forAny(() => run());
      return writes.holding(contextId, () => run((work) => writes.turn(contextId, work, ingestOptions.lane)));
    },
    async addMemories(
      contextId: string,
      records: readonly MemoryRecordInput[],
      options?: WriteOptions,
    ): Promise<IngestReport> {
      if (!Array.isArray(records)) {
        throw new GraphmemixError('INVALID_INPUT', 'records must be an array of memory records', {
          location: { field: 'records' },
        });
      }
      if (writer) return addThroughWorker(writer, contextId, records, options);
      const context = contextId || DEFAULT_CONTEXT_ID;
      return writes.forContext(context, () => addInTurn(context, records, options), { asker: options?.lane });
    },
    async waitForCompactions(): Promise<void> {
      if (writer) return writer.call('waitForCompactions', []);
      await recovery?.idle();
      // A drain may start a compaction, whose end may leave nothing to drain: until both are idle.
      for (;;) {
        await drains?.idle();
        await compactions?.idle();
        if (drains === undefined || drains.settled()) return;
      }
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
    async updateMemory(contextId, id, patch, options) {
      if (writer) return writer.call('updateMemory', [contextId, id, patch, ...withOptions(options)]);
      // The read of the stored version and the write of the merged one are one turn of the user's writes:
      // two updates at once each merged into the same old version (one patch lost), and an update beside a
      // delete wrote the deleted memory back.
      const context = contextId || DEFAULT_CONTEXT_ID;
      const add = (ctx: string, records: readonly MemoryRecordInput[]) => addInTurn(ctx, records, options);
      return writes.forContext(context, () => updateStoredMemory(store, add, context, id, patch), {
        asker: options?.lane,
      });
    },
    async memoryHistory(contextId, id) {
      await assertNotForgetting(store, contextId);
      return historyOf(store, contextId, id);
    },
    async memoryHistoryPage(contextId, id, pageOptions) {
      await assertNotForgetting(store, contextId);
      return historyPageOf(store, contextId, id, pageOptions);
    },
    addMessages(contextId, messages, scope, options) {
      const add = (ctx: string, records: readonly MemoryRecordInput[]) =>
        api.addMemories(ctx, records, options);
      return addConversation(add, contextId, messages, scope);
    },
    listUsers: (listOptions) => listUserPage(store, listOptions),
    async userStats(userId) {
      await assertNotForgetting(store, userId);
      return statsOf(store, userId);
    },
    // Through the write worker straight away: its own queue orders them (a turn of this thread's queue would
    // last the worker's whole call, holding every later delete and compaction of any user behind it).
    deleteMemory: (contextId: string, id: string, options?: WriteOptions) =>
      writer
        ? deleteMemory(contextId, id, options)
        : writes.forContext(contextId, () => deleteMemory(contextId, id, options), {
            asker: options?.lane,
          }),
    // Not in the write queue as a whole: forgetInSteps queues each step (other writes go between them).
    forgetContext: (contextId: string, forgetOptions?: ForgetOptions) =>
      forgetContext(contextId, forgetOptions),
    async compact(contextId: string, compactOptions: { k?: number } = {}): Promise<CompactReport> {
      if (writer) return compact(contextId, compactOptions);
      return writes.forContext(contextId, async () => {
        await assertNotForgetting(store, contextId);
        return compact(contextId, compactOptions);
      });
    },
    deleteUser: (contextId: string, forgetOptions?: ForgetOptions) => forgetContext(contextId, forgetOptions),
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
    searchMemories: (contextId, query, searchOptions = {}) =>
      searchMemoryHits(store, models, contextId, query, searchOptions),
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
      // Stopped at its next turn; what is left stays journaled for the next open.
      await recovery?.close();
      // Before the compactions: a drain may start one.
      await drains?.close(mode);
      await compactions?.close(mode);
      await resumedForgets?.close(mode);
      await writer?.close(mode);
      await ocr?.terminate();
      if (ownsStore) await store.close();
    },
  };
  // Every write call counted at this one door (HTTP, MCP and library alike): a backlog past the bound is BUSY.
  return new WriteAdmission(options.maxPendingWrites).wrap(api);
}

/** `f` called at most once. */
function once(f: () => void): () => void {
  let called = false;
  return () => {
    if (called) return;
    called = true;
    f();
  };
}
