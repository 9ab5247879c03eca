import { type GraphmemixError, isGraphmemixError } from '../errors/graphmemix-error.ts';
import type { ImportItem, SourcePosition } from '../importers/importer-spec.ts';
import { toMemoryRecord } from '../schemas/record-schema.ts';
import { emptyEdgeCounts } from '../store/edge-merge.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { EvalQuestion } from '../types/question.ts';
import type { IngestRejection, IngestReport } from './ingest-report.ts';

/** Context of records and questions that name none and get no `contextId` option. */
export const DEFAULT_CONTEXT_ID = 'default';

/** A monotonic clock in milliseconds (injected so tests and traces can pin step times). */
export type IngestClock = () => number;

/**
 * The one report (and step-time trace) of an ingest: counts, rejections, warnings and seconds per stage,
 * measured with the injected clock.
 */
export class IngestReportBuilder {
  readonly report: IngestReport;
  readonly #started: number;

  constructor(private readonly clock: IngestClock) {
    this.#started = clock();
    this.report = {
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
      stepSeconds: { parse: 0, media: 0, write: 0, relations: 0 },
    };
  }

  now(): number {
    return this.clock();
  }

  /** Adds the time since `since` (a clock reading) to a step. */
  addStep(step: string, since: number): void {
    this.report.stepSeconds[step] = (this.report.stepSeconds[step] ?? 0) + (this.clock() - since) / 1000;
  }

  /** Runs `work` and adds its time to `step`. */
  async timed<T>(step: string, work: () => Promise<T>): Promise<T> {
    const since = this.clock();
    try {
      return await work();
    } finally {
      this.addStep(step, since);
    }
  }

  reject(rejection: IngestRejection): void {
    this.report.rejected.push(rejection);
  }

  warn(message: string): void {
    this.report.warnings.push(message);
  }

  mediaCount(status: 'pending' | 'done' | 'failed' | 'unchanged'): void {
    this.report.media ??= { pending: 0, done: 0, failed: 0, unchanged: 0 };
    this.report.media[status]++;
  }

  finish(contexts: Iterable<string>): IngestReport {
    this.report.contexts = [...contexts].sort();
    this.report.seconds = (this.clock() - this.#started) / 1000;
    return this.report;
  }
}

/** What the validate stage made of one import item. */
export type ValidatedItem =
  | { type: 'record'; record: MemoryRecord; place: Place }
  | { type: 'question'; question: EvalQuestion }
  | { type: 'rejected'; rejection: IngestRejection }
  | { type: 'warning'; message: string };

export interface Place {
  file: string;
  line?: number;
  recordId?: string;
}

/** Validate stage: one item -> a checked record (limits, schema), a question, a rejection or a warning. */
export async function validateItem(
  item: ImportItem,
  options: {
    contextId: string | undefined;
    maxTextBytes: number | undefined;
    sequenceFor: (contextId: string, id: string | undefined) => Promise<number>;
  },
): Promise<ValidatedItem> {
  if (item.type === 'warning') return { type: 'warning', message: item.message };
  if (item.type === 'reject') return { type: 'rejected', rejection: rejectionOf(item.error, item.source) };
  if (item.type === 'question') {
    const question = checkQuestion(item.question, options.contextId);
    return 'code' in question
      ? { type: 'rejected', rejection: { ...positionOf(item.source), ...question } }
      : { type: 'question', question };
  }
  const raw = item.record as unknown as Record<string, unknown>;
  const contextId = recordContextId(raw, options.contextId);
  const sequence = explicitSequence(raw) ?? (await options.sequenceFor(contextId, nonEmptyString(raw?.id)));
  return checkRecordItem(item, options, sequence);
}

/** The record part of the validate stage once the record's sequence is known (pure: prepare-records.ts). */
export function checkRecordItem(
  item: { record: unknown; source: SourcePosition },
  options: { contextId: string | undefined; maxTextBytes: number | undefined },
  sequence: number,
): Extract<ValidatedItem, { type: 'record' | 'rejected' }> {
  const raw = item.record as Record<string, unknown> | null | undefined;
  const contextId = recordContextId(raw, options.contextId);
  // Limits (depth, size, counts) are checked here, before the record can reach any builder or the store.
  const limits = options.maxTextBytes === undefined ? {} : { maxTextBytes: options.maxTextBytes };
  const checked = toMemoryRecord(item.record, { contextId, sequence }, limits);
  const place = positionOf(item.source, nonEmptyString(raw?.id));
  if (!checked.ok) {
    return {
      type: 'rejected',
      rejection: { ...place, code: checked.code, message: checked.message, field: checked.field },
    };
  }
  return { type: 'record', record: checked.record, place };
}

/** The context a record goes to: the import's override, else its own, else the default. */
export function recordContextId(
  raw: Record<string, unknown> | null | undefined,
  override: string | undefined,
): string {
  return override ?? nonEmptyString(raw?.contextId) ?? DEFAULT_CONTEXT_ID;
}

/** The record's own sequence when it gives one (else ingest assigns it from the store). */
export function explicitSequence(raw: Record<string, unknown> | null | undefined): number | undefined {
  return typeof raw?.sequence === 'number' ? raw.sequence : undefined;
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

export function positionOf(source: SourcePosition, recordId?: string): Place {
  const place: Place = { file: source.file };
  if (source.line !== undefined) place.line = source.line;
  const id = recordId ?? source.recordId;
  if (id !== undefined) place.recordId = id;
  return place;
}

export function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
