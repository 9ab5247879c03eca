import { buildRelations } from './digest/build-relations.ts';
import { DEFAULT_CONTEXT_ID, ingestItems } from './digest/ingest.ts';
import type { IngestReport } from './digest/ingest-report.ts';
import { GraphmemixError } from './errors/index.ts';
import type { Graphmemix, MemoryRecordInput, SearchHit } from './graphmemix-api.ts';
import { getImporter } from './importers/importer-registry.ts';
import type { ImportFormat, ImportItem } from './importers/importer-spec.ts';
import { importRootOf } from './importers/media-files.ts';
import { readAnswer } from './pipeline/answer-question.ts';
import type {
  AnswerResult,
  QuestionInput,
  RetrievalResult,
  RetrieveOptions,
} from './pipeline/retrieval-result.ts';
import { retrieveEvidence } from './pipeline/retrieve-evidence.ts';
import type { ModelSet } from './providers/model-spec.ts';
import { allowMediaRoot } from './providers/to-image-url.ts';
import { multiViewSearch } from './retrieval/multi-view-retriever.ts';
import type { ArchiveStore } from './store/archive-store-spec.ts';
import { openStore } from './store/open-store.ts';
import type { MemoryRecord } from './types/memory-record.ts';

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
}

/**
 * Opens an archive and returns the public API (src/graphmemix-api.ts). Every method is scoped by context.
 * `retrieve` and `answer` never throw for a model fault: degradation shows in `trace.flags`.
 */
export async function openGraphmemix(options: OpenGraphmemixOptions): Promise<Graphmemix> {
  const store = options.store ?? (await openStore(options.db, options.readonly ? { readonly: true } : {}));
  const ownsStore = options.store === undefined;
  const models = options.models ?? {};
  const deps = { store, models };
  let closed = false;

  const toQuestion = (question: string | QuestionInput): QuestionInput => {
    const input = typeof question === 'string' ? { prompt: question } : question;
    if (
      typeof input.prompt !== 'string' ||
      (input.prompt.trim() === '' && (input.images ?? []).length === 0)
    ) {
      throw new GraphmemixError('INVALID_INPUT', 'a question needs a non-empty prompt or an image', {
        location: { field: 'prompt' },
      });
    }
    return input;
  };

  return {
    store,
    async ingest(
      path: string,
      ingestOptions: { format: ImportFormat; contextId?: string; onProgress?: (items: number) => void },
    ): Promise<IngestReport> {
      const importer = await getImporter(ingestOptions.format);
      // The import root is where this archive's imported media live: the one local place (with the media
      // store) whose files may later be sent to a model as images (src/providers/to-image-url.ts).
      const mediaRoot = await importRootOf(path);
      allowMediaRoot(mediaRoot);
      const items = importer.read(path, {
        ...(ingestOptions.contextId === undefined ? {} : { contextId: ingestOptions.contextId }),
        ...(models.vision === undefined ? {} : { vision: models.vision }),
        ...(options.ocr === undefined ? {} : { ocr: options.ocr }),
        mediaRoot,
      });
      return ingestItems(store, items, {
        ...(ingestOptions.contextId === undefined ? {} : { contextId: ingestOptions.contextId }),
        ...(models.embedding === undefined ? {} : { embedding: models.embedding }),
        ...(ingestOptions.onProgress === undefined ? {} : { onProgress: ingestOptions.onProgress }),
      });
    },
    async addMemories(contextId: string, records: readonly MemoryRecordInput[]): Promise<IngestReport> {
      const context = contextId || DEFAULT_CONTEXT_ID;
      const items: ImportItem[] = records.map((record, index) => ({
        type: 'record',
        record: record as unknown as MemoryRecord,
        source: { file: 'addMemories', line: index + 1, recordId: record.id },
      }));
      return ingestItems(store, items, {
        contextId: context,
        ...(models.embedding === undefined ? {} : { embedding: models.embedding }),
      });
    },
    getMemory: (contextId, id) => store.getMemory(contextId, id),
    async deleteMemory(contextId: string, id: string): Promise<boolean> {
      const deleted = await store.deleteMemory(contextId, id);
      // The store drops the memory's own edges; rebuilding relations also re-links what it separated (the
      // turns around a deleted message) and refreshes the kNN lists, as after any ingest.
      if (deleted) {
        await buildRelations(
          store,
          contextId,
          models.embedding === undefined ? {} : { embedding: models.embedding },
        );
      }
      return deleted;
    },
    async search(contextId: string, query: string, searchOptions: { k?: number } = {}): Promise<SearchHit[]> {
      const k = searchOptions.k ?? 10;
      const result = await multiViewSearch(
        store,
        contextId,
        { text: query, imageUris: [] },
        { limit: Math.max(k, 24), ...(models.embedding ? { embedding: models.embedding } : {}) },
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
      return top.flatMap((m) => {
        const record = records.get(m.memoryId);
        return record ? [{ memoryId: m.memoryId, score: m.score, bestView: m.bestView, record }] : [];
      });
    },
    async retrieve(
      contextId: string,
      question: string | QuestionInput,
      retrieveOptions?: RetrieveOptions,
    ): Promise<RetrievalResult> {
      return retrieveEvidence(deps, contextId, toQuestion(question), retrieveOptions);
    },
    async answer(
      contextId: string,
      question: string | QuestionInput,
      retrieveOptions?: RetrieveOptions,
    ): Promise<AnswerResult> {
      const result = await retrieveEvidence(deps, contextId, toQuestion(question), retrieveOptions);
      return readAnswer(result, models.reader, retrieveOptions?.signal);
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      if (ownsStore) await store.close();
    },
  };
}
