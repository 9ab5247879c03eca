import { type GraphmemixError, isGraphmemixError } from '../errors/graphmemix-error.ts';
import type { ImportItem, SourcePosition } from '../importers/importer-spec.ts';
import type { EmbeddingModel } from '../providers/model-spec.ts';
import { toMemoryRecord } from '../schemas/record-schema.ts';
import type { ArchiveStore, MemoryWrite } from '../store/archive-store-spec.ts';
import { emptyEdgeCounts } from '../store/edge-merge.ts';
import type { EvalQuestion } from '../types/question.ts';
import type { RelationType } from '../types/relation.ts';
import { buildViews } from './build-views.ts';
import { contentHash } from './content-hash.ts';
import { relationKeys } from './incremental/relation-keys.ts';
import type { IngestRejection, IngestReport } from './ingest-report.ts';
import { updateRelations } from './update-relations.ts';

/** Records per write transaction: big enough to amortise commits, small enough that a crash loses little. */
export const INGEST_BATCH_SIZE = 500;

/** Context of records and questions that name none and get no `contextId` option. */
export const DEFAULT_CONTEXT_ID = 'default';

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
  /** Records per transaction (default INGEST_BATCH_SIZE). */
  batchSize?: number;
}

/**
 * The one ingest path: every importer, `addMemories`, the HTTP import route and the CLI go through it.
 *
 * Each record is validated (toMemoryRecord), size-checked, given its views and content hash, and written in
 * batched transactions. Invalid records are rejected with file/line/field and the rest continue. The same id
 * twice in one import with different content is DUPLICATE_ID (the first stays); an identical repeat is
 * skipped. Nothing committed is lost when a later batch fails, and re-running an interrupted import reaches
 * the same state (writes are idempotent by id and content hash). Then relations are rebuilt per touched
 * context, and questions are stored.
 *
 * Records without a sequence (plain objects from `addMemories`) keep their stored sequence when the id
 * already exists, and otherwise continue after the context's highest sequence, so re-adding is idempotent.
 */
export async function ingestItems(
  store: ArchiveStore,
  items: AsyncIterable<ImportItem> | Iterable<ImportItem>,
  options: IngestOptions = {},
): Promise<IngestReport> {
  const started = performance.now();
  const report: IngestReport = {
    contexts: [],
    imported: 0,
    updated: 0,
    unchanged: 0,
    skipped: 0,
    rejected: [],
    warnings: [],
    questions: 0,
    assets: 0,
    edges: emptyEdgeCounts(),
    seconds: 0,
    stepSeconds: { parse: 0, write: 0, relations: 0 },
  };
  const limits = options.maxTextBytes === undefined ? {} : { maxTextBytes: options.maxTextBytes };
  const batchSize = options.batchSize ?? INGEST_BATCH_SIZE;
  const sequences = new SequenceAssigner(store);
  const seen = new Map<string, string>();
  const recordContexts = new Set<string>();
  const allContexts = new Set<string>();
  let pending: MemoryWrite[] = [];
  let pendingQuestions: EvalQuestion[] = [];
  let itemsRead = 0;

  const flush = async (): Promise<void> => {
    const writeStarted = performance.now();
    const byContext = new Map<string, MemoryWrite[]>();
    for (const write of pending) {
      const list = byContext.get(write.record.contextId);
      if (list) list.push(write);
      else byContext.set(write.record.contextId, [write]);
    }
    for (const [contextId, writes] of byContext) {
      const outcome = await store.writeMemories(contextId, writes);
      report.imported += outcome.inserted.length;
      report.updated += outcome.updated.length;
      report.unchanged += outcome.unchanged.length;
    }
    if (pendingQuestions.length > 0) report.questions += await store.putQuestions(pendingQuestions);
    pending = [];
    pendingQuestions = [];
    report.stepSeconds.write! += (performance.now() - writeStarted) / 1000;
    options.onProgress?.(itemsRead);
  };

  let parseStarted = performance.now();
  for await (const item of items) {
    itemsRead++;
    if (item.type === 'warning') {
      report.warnings.push(item.message);
    } else if (item.type === 'reject') {
      report.rejected.push(rejectionOf(item.error, item.source));
    } else if (item.type === 'question') {
      const question = checkQuestion(item.question, options.contextId);
      if ('code' in question) report.rejected.push({ ...positionOf(item.source), ...question });
      else {
        pendingQuestions.push(question);
        allContexts.add(question.contextId);
      }
    } else {
      const raw = item.record as unknown as Record<string, unknown>;
      const contextId = options.contextId ?? nonEmptyString(raw?.contextId) ?? DEFAULT_CONTEXT_ID;
      const explicitSequence = typeof raw?.sequence === 'number' ? raw.sequence : undefined;
      const sequence = explicitSequence ?? (await sequences.forMissing(contextId, nonEmptyString(raw?.id)));
      // Limits (depth, size, counts) are checked here, before the record can reach any builder or the store.
      const checked = toMemoryRecord(item.record, { contextId, sequence }, limits);
      const place = positionOf(item.source, nonEmptyString(raw?.id));
      if (!checked.ok) {
        report.rejected.push({
          ...place,
          code: checked.code,
          message: checked.message,
          field: checked.field,
        });
        continue;
      }
      const record = checked.record;
      // The second clock: when this version entered the archive (a restored backup keeps its own).
      record.recordedAt ??= recordedNow();
      const hash = contentHash(record);
      const key = `${contextId}\u0000${record.id}`;
      const earlier = seen.get(key);
      if (earlier === hash) {
        report.skipped++;
        continue;
      }
      if (earlier !== undefined) {
        report.rejected.push({
          ...place,
          code: 'DUPLICATE_ID',
          field: 'id',
          message: `id "${record.id}" appears twice in this import with different content; the first is kept`,
        });
        continue;
      }
      seen.set(key, hash);
      sequences.saw(contextId, record.sequence);
      recordContexts.add(contextId);
      allContexts.add(contextId);
      report.assets += record.assets.length;
      pending.push({ record, views: buildViews(record), contentHash: hash, keys: relationKeys(record) });
    }
    if (pending.length >= batchSize || pendingQuestions.length >= batchSize) {
      report.stepSeconds.parse! += (performance.now() - parseStarted) / 1000;
      await flush();
      parseStarted = performance.now();
    }
  }
  report.stepSeconds.parse! += (performance.now() - parseStarted) / 1000;
  await flush();

  for (const contextId of [...recordContexts].sort()) {
    if (options.relations === false) break;
    const relationsStarted = performance.now();
    // Incremental: the journal of this import's writes (and any left by a killed process) becomes edges.
    const built = await updateRelations(
      store,
      contextId,
      options.embedding === undefined ? {} : { embedding: options.embedding },
    );
    report.stepSeconds.relations! += (performance.now() - relationsStarted) / 1000;
    report.warnings.push(...built.warnings.map((warning) => `context ${contextId}: ${warning}`));
    for (const [step, seconds] of Object.entries(built.seconds)) {
      report.stepSeconds[`relations.${step}`] = (report.stepSeconds[`relations.${step}`] ?? 0) + seconds;
    }
  }
  for (const contextId of recordContexts) {
    const counts = await store.countEdges(contextId);
    for (const type of Object.keys(report.edges) as RelationType[]) report.edges[type] += counts[type] ?? 0;
  }
  report.contexts = [...allContexts].sort();
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

/** ISO write time; one per record so versions written in one request still order by their clock. */
function recordedNow(): string {
  return new Date().toISOString();
}

/**
 * Sequence numbers for records that arrive without one: the stored sequence of a known id (so re-adding is
 * unchanged), else one past the highest sequence of the context (stored or seen in this import).
 */
class SequenceAssigner {
  private readonly next = new Map<string, number>();
  /** One past the highest explicit sequence seen per context before its stored maximum was read. */
  private readonly seen = new Map<string, number>();

  constructor(private readonly store: ArchiveStore) {}

  async forMissing(contextId: string, id: string | undefined): Promise<number> {
    if (id !== undefined) {
      const stored = await this.store.getMemory(contextId, id);
      if (stored) return stored.sequence;
    }
    const value = await this.nextFor(contextId);
    this.next.set(contextId, value + 1);
    return value;
  }

  saw(contextId: string, sequence: number): void {
    this.seen.set(contextId, Math.max(this.seen.get(contextId) ?? 0, sequence + 1));
    const next = this.next.get(contextId);
    if (next !== undefined) this.next.set(contextId, Math.max(next, sequence + 1));
  }

  /** One index probe per context the first time it is seen (never a walk over every context). */
  private async nextFor(contextId: string): Promise<number> {
    let value = this.next.get(contextId);
    if (value === undefined) {
      const max = await this.store.maxSequence(contextId);
      value = Math.max(max === undefined ? 0 : max + 1, this.seen.get(contextId) ?? 0);
      this.next.set(contextId, value);
    }
    return value;
  }
}

function checkQuestion(
  question: EvalQuestion,
  contextOverride: string | undefined,
): EvalQuestion | { code: string; message: string; field: string; recordId?: string } {
  const raw = question as unknown as Record<string, unknown>;
  const id = nonEmptyString(raw?.id);
  if (id === undefined)
    return { code: 'INVALID_INPUT', field: 'id', message: 'question id must be a non-empty string' };
  const fail = (field: string, message: string) => ({ code: 'INVALID_INPUT', field, message, recordId: id });
  if (typeof raw.prompt !== 'string') return fail('prompt', 'question prompt must be a string');
  if (typeof raw.answer !== 'object' || raw.answer === null)
    return fail('answer', 'answer must be an object');
  if (!Array.isArray(raw.evidence) || !raw.evidence.every((ref) => typeof ref === 'string')) {
    return fail('evidence', 'evidence must be a list of memory ids');
  }
  const contextId = contextOverride ?? nonEmptyString(raw.contextId) ?? DEFAULT_CONTEXT_ID;
  return { ...question, contextId };
}

function rejectionOf(error: GraphmemixError | unknown, source: SourcePosition): IngestRejection {
  const base = positionOf(source);
  if (!isGraphmemixError(error)) return { ...base, code: 'INVALID_INPUT', message: String(error) };
  const location = error.location;
  const rejection: IngestRejection = { ...base, code: error.code, message: withoutLocation(error) };
  if (location.file !== undefined) rejection.file = location.file;
  if (location.line !== undefined) rejection.line = location.line;
  if (location.recordId !== undefined) rejection.recordId = location.recordId;
  if (location.field !== undefined) rejection.field = location.field;
  return rejection;
}

/** GraphmemixError prefixes its message with the location; the rejection carries those as fields already. */
function withoutLocation(error: GraphmemixError): string {
  const { file, line, recordId, field } = error.location;
  const parts: string[] = [];
  if (file) parts.push(line === undefined ? file : `${file}:${line}`);
  if (recordId) parts.push(`record ${recordId}`);
  if (field) parts.push(`field ${field}`);
  const prefix = `${parts.join(', ')}: `;
  return parts.length > 0 && error.message.startsWith(prefix)
    ? error.message.slice(prefix.length)
    : error.message;
}

function positionOf(
  source: SourcePosition,
  recordId?: string,
): { file: string; line?: number; recordId?: string } {
  const place: { file: string; line?: number; recordId?: string } = { file: source.file };
  if (source.line !== undefined) place.line = source.line;
  const id = recordId ?? source.recordId;
  if (id !== undefined) place.recordId = id;
  return place;
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
