import type { ImportItem } from '../importers/importer-spec.ts';
import type { EmbeddingModel } from '../providers/model-spec.ts';
import { type ArchiveStore, inUnitOfWork, type MemoryWrite } from '../store/archive-store-spec.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { EvalQuestion } from '../types/question.ts';
import type { RelationType } from '../types/relation.ts';
import { contentHash } from './content-hash.ts';
import { ImportSeen } from './import-seen.ts';
import type { CompactionScheduler } from './incremental/semantic-compaction-mark.ts';
import type { IngestReport } from './ingest-report.ts';
import {
  DEFAULT_CONTEXT_ID,
  type IngestClock,
  IngestReportBuilder,
  type Place,
  validateItem,
} from './ingest-stages.ts';
import { hasLocalMedia, type MediaDigestOutcome } from './media/digest-record-media.ts';
import { settleDigest, settleParts } from './media/settle-digest.ts';
import { stampAndHash, writeOf } from './prepare-records.ts';
import { preparedItems } from './prepared-items.ts';
import { SequenceAssigner } from './sequence-assigner.ts';
import { updateRelations } from './update-relations.ts';

export { DEFAULT_CONTEXT_ID };

/**
 * Records per write transaction when each batch is its own turn of a write queue (`schedule`): big enough to
 * amortise commits, small enough that other writers queued behind a batch wait little (~40 ms at 1M memories).
 */
export const INGEST_BATCH_SIZE = 500;
/**
 * Records per write transaction of an import that holds the writer throughout (no `schedule`: `addMemories`,
 * an import naming no user, the library's direct call), where a batch's length delays no other writer. Larger
 * batches share each commit's fixed costs (the lexical statistics flush, the FTS5 segment, the statements
 * re-prepared after the foreign-key switch of sqlite-bulk-write-pragmas.ts) over more records: a 100k
 * import's memory writes 9.3-9.9 s of CPU at 500 -> 8.8 s at 2,000 (8.0 s with the switch); a crash loses at
 * most one batch, which re-running the import writes again.
 */
export const UNSCHEDULED_INGEST_BATCH_SIZE = 2000;

/**
 * The media digest as ingest sees it (src/digest/media/): `inline` digests before the write (CLI imports,
 * the library), `background` stores the record as `media.status: pending` and hands its id to `enqueue`
 * after the batch commits (servers: a write is acknowledged once stored; the queue digests later and
 * writes the result back through this same path). Pending records carry a relation key, so work left by a
 * crash is found again at the next start (src/digest/media/media-queue.ts).
 */
export interface IngestMedia {
  mode: 'inline' | 'background';
  digest(record: MemoryRecord): Promise<MediaDigestOutcome>;
  enqueue?(contextId: string, ids: readonly string[]): void;
}

export interface IngestOptions {
  /** Put every record and question into this context (overrides what the source says). */
  contextId?: string;
  /** Rebuild schema + semantic relations of every touched context afterwards. Default true. */
  relations?: boolean;
  /** Dense embeddings for views and semantic kNN; offline TF-IDF when absent. */
  embedding?: EmbeddingModel;
  /** Largest text field in bytes (UTF-8). Default RECORD_LIMITS.maxTextBytes (1 MiB); larger is TOO_LARGE. */
  maxTextBytes?: number;
  /** Called after every committed batch with the number of items read so far. */
  onProgress?: (itemsRead: number) => void;
  /** Records per transaction (default INGEST_BATCH_SIZE with `schedule`, else UNSCHEDULED_INGEST_BATCH_SIZE). */
  batchSize?: number;
  /** Media digest of records with local media; absent: records are stored as given. */
  media?: IngestMedia;
  /** Clock for step times (ms); default performance.now. */
  clock?: IngestClock;
  /**
   * Runs each write of the import (a batch, the relation update; a small add's single unit) as its own turn
   * of the caller's write queue, so other writes go between them (the library's `WriteQueue`, with the
   * import's context held). Default: each runs at once.
   */
  schedule?: <T>(work: () => Promise<T>) => Promise<T>;
  /** Automatic compactions of the relation update run in steps through it (BuildRelationsOptions). */
  compactInBackground?: CompactionScheduler;
  /** The semantic side of incremental updates after the write (BuildRelationsOptions.semanticAfterWrite). */
  semanticAfterWrite?: (contextId: string) => void;
  /**
   * Records after which a helper thread validates and builds views ahead of the writes (prepared-items.ts;
   * default PREPARE_HELPER_FROM; Infinity: never). The archive is the same either way.
   */
  prepareHelperFrom?: number;
}

/**
 * The one ingest path: every importer, `addMemories`, the HTTP import route, the CLI and the media queue go
 * through it. Stages per record: validate (toMemoryRecord: schema and limits) -> deduplicate within the
 * import -> media digest -> views (+ content hash, relation keys) -> write (batched transactions); then
 * relations per touched context (the relation journal written with each memory). From PREPARE_HELPER_FROM
 * records on, a helper thread validates, hashes and builds the views of the next records while this one
 * writes (prepared-items.ts: the same archive, the second core busy). Invalid records are
 * rejected with file/line/field and the rest continue. The same id twice in one import with different
 * content is DUPLICATE_ID (the first stays); an identical repeat is skipped. Nothing committed is lost when
 * a later batch fails, and re-running an interrupted import reaches the same state (writes are idempotent by
 * id and content hash; a media record is unchanged when its input equals the stored record's `sourceHash`).
 *
 * Records without a sequence (plain objects from `addMemories`) keep their stored sequence when the id
 * already exists, and otherwise continue after the context's highest sequence, so re-adding is idempotent.
 */
export async function ingestItems(
  store: ArchiveStore,
  items: AsyncIterable<ImportItem> | Iterable<ImportItem>,
  options: IngestOptions = {},
): Promise<IngestReport> {
  const trace = new IngestReportBuilder(options.clock ?? (() => performance.now()));
  const report = trace.report;
  const batchSize =
    options.batchSize ?? (options.schedule === undefined ? UNSCHEDULED_INGEST_BATCH_SIZE : INGEST_BATCH_SIZE);
  const sequences = new SequenceAssigner(store);
  const seen = new ImportSeen();
  const recordContexts = new Set<string>();
  const allContexts = new Set<string>();
  const batch = new WriteBatch(store, trace, options);
  const schedule = options.schedule ?? (<T>(work: () => Promise<T>) => work());
  let itemsRead = 0;
  let flushed = false;

  let parseStarted = trace.now();
  const prepareOptions = { contextId: options.contextId, maxTextBytes: options.maxTextBytes };
  const stream = preparedItems(items, {
    ...prepareOptions,
    ...(options.prepareHelperFrom === undefined ? {} : { helperFrom: options.prepareHelperFrom }),
  });
  for await (const chunk of stream) {
    for (const { item, prepared } of chunk) {
      itemsRead++;
      const validated =
        prepared?.validated ??
        (await validateItem(item, {
          ...prepareOptions,
          sequenceFor: (contextId, id) => sequences.forMissing(contextId, id),
        }));
      if (validated.type === 'warning') trace.warn(validated.message);
      else if (validated.type === 'rejected') trace.reject(validated.rejection);
      else if (validated.type === 'question') {
        batch.questions.push(validated.question);
        allContexts.add(validated.question.contextId);
      } else {
        const { record, place } = validated;
        const hash = prepared?.write?.contentHash ?? stampAndHash(record);
        if (!firstInImport(seen, record, hash, place, trace)) continue;
        sequences.saw(record.contextId, record.sequence);
        recordContexts.add(record.contextId);
        allContexts.add(record.contextId);
        report.assets += record.assets.length;
        trace.addStep('parse', parseStarted);
        const digested = await trace.timed('media', () => mediaStage(store, record, hash, options, trace));
        parseStarted = trace.now();
        for (const part of digested) {
          // The helper's views when the media stage left the record as it was.
          const write = prepared?.write;
          batch.records.push(write?.record === part.record ? write : writeOf(part.record, part.hash));
        }
        if (item.type === 'record' && item.legacyIds !== undefined) {
          for (const legacyId of item.legacyIds) {
            if (legacyId !== record.id) batch.legacy.push({ legacyId, record });
          }
        }
      }
      if (batch.full(batchSize)) {
        trace.addStep('parse', parseStarted);
        flushed = true;
        await schedule(() => batch.flush());
        options.onProgress?.(itemsRead);
        parseStarted = trace.now();
      }
    }
  }
  trace.addStep('parse', parseStarted);
  // Every id and content hash of the import (~85 MB at 1M records): not needed by the relations stage.
  seen.clear();
  const contexts = [...recordContexts].sort();
  const relations = options.relations !== false;
  // Edge counts read at the end of a unit, collected after it (the report's figures are the same).
  const counted = new Map<string, Promise<Record<RelationType, number>>>();
  if (relations && batch.oneUnit(flushed, contexts)) {
    // A small write into one context (an add): its records and their relation update commit together, one
    // transaction instead of two (all or nothing: a crash leaves neither, and the write is simply redone).
    await schedule(() =>
      inUnitOfWork(
        store,
        contexts[0]!,
        async () => {
          await batch.flush();
          await relationsStage(store, contexts, options, trace);
          // Not awaited here: PostgreSQL sends this read with the unit's COMMIT (no round trip of its own).
          const counts = store.countEdges(contexts[0]!);
          counts.catch(() => {}); // a failing unit throws first; its read's rejection is the same failure
          counted.set(contexts[0]!, counts);
        },
        { recordWrite: true, adds: batch.records.length },
      ),
    );
    options.onProgress?.(itemsRead);
  } else {
    await schedule(() => batch.flush());
    options.onProgress?.(itemsRead);
    // Its own turns (a rebuild takes several: other users' writes go between them; updateRelations).
    if (relations) await relationsStage(store, contexts, options, trace, options.schedule);
  }
  for (const contextId of recordContexts) {
    const counts = await (counted.get(contextId) ?? store.countEdges(contextId));
    for (const type of Object.keys(report.edges) as RelationType[]) report.edges[type] += counts[type] ?? 0;
  }
  return trace.finish(allContexts);
}

/** Dedup stage: false (and a skip or DUPLICATE_ID) when this id was already seen in this import. */
function firstInImport(
  seen: ImportSeen,
  record: MemoryRecord,
  hash: string,
  place: Place,
  trace: IngestReportBuilder,
): boolean {
  const earlier = seen.get(record.contextId, record.id);
  // The fingerprint only for an id seen before (most are not; `set` makes the one it keeps).
  if (earlier !== undefined && earlier === seen.fingerprint(hash)) {
    trace.report.skipped++;
    return false;
  }
  if (earlier !== undefined) {
    trace.reject({
      ...place,
      code: 'DUPLICATE_ID',
      field: 'id',
      message: `id "${record.id}" appears twice in this import with different content; the first is kept`,
    });
    return false;
  }
  seen.set(record.contextId, record.id, hash);
  return true;
}

/**
 * Media stage: a record with local media that has not been digested gets `media.sourceHash` (the hash of
 * its input) and is digested now (inline) or marked pending (background). Returns undefined when the stored
 * record was made from the same input (unchanged; its digest is not redone).
 */
async function mediaStage(
  store: ArchiveStore,
  record: MemoryRecord,
  hash: string,
  options: IngestOptions,
  trace: IngestReportBuilder,
): Promise<{ record: MemoryRecord; hash: string }[]> {
  const media = options.media;
  if (media === undefined || record.media !== undefined || !hasLocalMedia(record)) return [{ record, hash }];
  const stored = await store.getMemory(record.contextId, record.id);
  // Same input as the stored record: unchanged (a failed digest is retried: a tool may be installed since).
  if (stored?.media?.sourceHash === hash && stored.media.status !== 'failed') {
    trace.report.unchanged++;
    trace.mediaCount('unchanged');
    return [];
  }
  if (media.mode === 'background') {
    trace.mediaCount('pending');
    const pending: MemoryRecord = { ...record, media: { status: 'pending', sourceHash: hash } };
    return [{ record: pending, hash: contentHash(pending) }];
  }
  const outcome = await media.digest(record);
  for (const warning of outcome.warnings) trace.warn(`record ${record.id}: ${warning}`);
  const digested = settleDigest(record, outcome, hash);
  trace.mediaCount(digested.media!.status === 'done' ? 'done' : 'failed');
  if (digested.media?.error) trace.warn(`record ${record.id}: media digest failed: ${digested.media.error}`);
  const out = [{ record: digested, hash: contentHash(digested) }];
  for (const part of settleParts(digested, outcome, (message) => trace.warn(message))) {
    trace.report.assets += part.assets.length;
    out.push({ record: part, hash: contentHash(part) });
  }
  return out;
}

/** Write stage: records and questions collected into one transaction per context and batch. */
class WriteBatch {
  records: MemoryWrite[] = [];
  questions: EvalQuestion[] = [];
  /** Memories under an importer's older id for a record of this batch (ImportItem `legacyIds`). */
  legacy: { legacyId: string; record: MemoryRecord }[] = [];

  constructor(
    private readonly store: ArchiveStore,
    private readonly trace: IngestReportBuilder,
    private readonly options: IngestOptions,
  ) {}

  private async replaceLegacy(legacyId: string, record: MemoryRecord): Promise<void> {
    if (await replaceLegacyMemory(this.store, legacyId, record)) {
      this.trace.warn(
        `record ${record.id}: replaces ${legacyId}, the same file under its id from before content ids`,
      );
    }
  }

  /**
   * Whether the last flush and the relation update can be one unit of work: nothing was flushed before, the
   * records are of one context, and nothing in it waits on anything but the store or must follow a commit
   * (a model's embeddings, the background media queue reading the records, a legacy id's delete).
   */
  oneUnit(flushedBefore: boolean, contexts: readonly string[]): boolean {
    return (
      !flushedBefore &&
      contexts.length === 1 &&
      this.records.length <= INGEST_BATCH_SIZE &&
      this.legacy.length === 0 &&
      this.options.embedding === undefined &&
      this.options.media?.mode !== 'background'
    );
  }

  full(size: number): boolean {
    return this.records.length >= size || this.questions.length >= size;
  }

  async flush(): Promise<void> {
    const { report } = this.trace;
    const since = this.trace.now();
    const byContext = new Map<string, MemoryWrite[]>();
    for (const write of this.records) {
      const list = byContext.get(write.record.contextId);
      if (list) list.push(write);
      else byContext.set(write.record.contextId, [write]);
    }
    for (const [contextId, writes] of byContext) {
      const outcome = await this.store.writeMemories(contextId, writes);
      report.imported += outcome.inserted.length;
      report.updated += outcome.updated.length;
      report.unchanged += outcome.unchanged.length;
      // Only after the commit: a pending record the queue reads must exist.
      const pending = writes.filter((w) => w.record.media?.status === 'pending').map((w) => w.record.id);
      if (pending.length > 0) this.options.media?.enqueue?.(contextId, pending);
    }
    if (this.questions.length > 0) report.questions += await this.store.putQuestions(this.questions);
    for (const { legacyId, record } of this.legacy) await this.replaceLegacy(legacyId, record);
    this.records = [];
    this.questions = [];
    this.legacy = [];
    this.trace.addStep('write', since);
  }
}

/**
 * Deletes the memory an importer stored under an older id for `record`'s source, after `record` is written,
 * when it is the same file: the same `sourceId` and the same non-empty set of asset sha256. Anything else
 * under that id (another file that happens to have had that path) stays. The store journals the delete, so
 * the relations stage drops its edges.
 */
async function replaceLegacyMemory(
  store: ArchiveStore,
  legacyId: string,
  record: MemoryRecord,
): Promise<boolean> {
  const old = await store.getMemory(record.contextId, legacyId);
  if (old === undefined || old.sourceId === undefined || old.sourceId !== record.sourceId) return false;
  const hashes = (r: MemoryRecord) =>
    [...new Set(r.assets.flatMap((asset) => (asset.sha256 === undefined ? [] : [asset.sha256])))].sort();
  const before = hashes(old);
  const after = hashes(record);
  if (before.length === 0 || before.join() !== after.join()) return false;
  return store.deleteMemory(record.contextId, legacyId);
}

/** Relations stage: the journal of this import's writes (and any left by a killed process) becomes edges. */
async function relationsStage(
  store: ArchiveStore,
  contexts: readonly string[],
  options: IngestOptions,
  trace: IngestReportBuilder,
  /** The caller's write queue, when this runs outside any turn of it (never inside one: it would wait on itself). */
  turn?: <T>(work: () => Promise<T>) => Promise<T>,
): Promise<void> {
  for (const contextId of contexts) {
    const since = trace.now();
    const built = await updateRelations(store, contextId, {
      ...(options.embedding === undefined ? {} : { embedding: options.embedding }),
      ...(turn === undefined ? {} : { turn }),
      ...(options.compactInBackground === undefined
        ? {}
        : { compactInBackground: options.compactInBackground }),
      ...(options.semanticAfterWrite === undefined ? {} : { semanticAfterWrite: options.semanticAfterWrite }),
    });
    trace.addStep('relations', since);
    for (const warning of built.warnings) trace.warn(`context ${contextId}: ${warning}`);
    for (const [step, seconds] of Object.entries(built.seconds)) {
      const key = `relations.${step}`;
      trace.report.stepSeconds[key] = (trace.report.stepSeconds[key] ?? 0) + seconds;
    }
  }
}
