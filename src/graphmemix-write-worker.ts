import type { IngestRejection, IngestReport } from './digest/ingest-report.ts';
import type { MemoryRecordInput, WriteOptions } from './graphmemix-api.ts';
import type { OpenGraphmemixOptions } from './graphmemix-options.ts';
import { mediaAccessPolicy } from './providers/to-image-url.ts';
import { checkRecordShape, resolveRecordLimits } from './schemas/record-limits.ts';
import { WriteWorkerClient } from './write-worker/write-worker-client.ts';

/** The write worker `options` ask for, started; undefined when writes stay on this thread. */
export async function startWriteWorker(
  options: OpenGraphmemixOptions,
): Promise<WriteWorkerClient | undefined> {
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
    ...(options.semanticUpdates === undefined ? {} : { semanticUpdates: options.semanticUpdates }),
    ...(options.resumeForgets === undefined ? {} : { resumeForgets: options.resumeForgets }),
    ...(options.recoverRelations === undefined ? {} : { recoverRelations: options.recoverRelations }),
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
export async function addThroughWorker(
  writer: WriteWorkerClient,
  contextId: string,
  records: readonly MemoryRecordInput[],
  options?: WriteOptions,
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
  const report = await writer.call<IngestReport>('addMemories', [contextId, sent, ...withOptions(options)]);
  if (screened.length === 0) return report;
  for (const rejection of report.rejected) {
    if (rejection.file === 'addMemories' && rejection.line !== undefined) {
      rejection.line = lineOf[rejection.line - 1] ?? rejection.line;
    }
  }
  report.rejected = [...report.rejected, ...screened].sort((x, y) => (x.line ?? 0) - (y.line ?? 0));
  return report;
}

/**
 * A write call's options as a trailing argument for the write worker: none when they name no lane (the same
 * call as without options).
 */
export function withOptions(options: WriteOptions | undefined): [WriteOptions] | [] {
  return options?.lane === undefined ? [] : [options];
}
