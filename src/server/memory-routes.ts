import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { Hono } from 'hono';
import { parseRequestJson } from '../api-schemas/json-depth.ts';
import { parseInput } from '../api-schemas/parse-input.ts';
import { addMemoriesSchema, importSchema, memoryRefSchema } from '../api-schemas/route-schemas.ts';
import { toRecordInputs, toScope } from '../api-schemas/to-pipeline-input.ts';
import type { IngestReport } from '../digest/ingest-report.ts';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { Graphmemix, MemoryRecordInput } from '../graphmemix-api.ts';
import type { ImportFormat } from '../importers/importer-spec.ts';
import { RECORD_LIMITS } from '../index.ts';
import { allRejected, toApiIngestReport } from '../shell-kit/api-serializers.ts';
import { confineRecordMedia } from '../shell-kit/confine-record-media.ts';
import { httpError } from '../shell-kit/error-response.ts';
import { laneOf, requireUser } from '../shell-kit/user-scope.ts';
import { queryObject } from './query-params.ts';
import { filesOf, isMultipart, readJson, readMultipart, textField } from './read-body.ts';
import { safeFileName, saveUpload } from './save-upload.ts';

export interface RouteDeps {
  graphmemix: Graphmemix;
  /** Where uploaded media is kept (referenced by asset uris, so it must outlive the request). */
  mediaDir: string;
}

/** Prefix of multipart file fields that attach a file to a memory: `asset:<memory id>`. */
export const ASSET_FIELD_PREFIX = 'asset:';

/** /v1/memories: add (JSON or multipart with media), get, delete, import a file. */
export function registerMemoryRoutes(app: Hono, deps: RouteDeps): void {
  const { graphmemix } = deps;

  app.post('/v1/memories', async (c) => {
    if (!isMultipart(c)) {
      const input = parseInput(addMemoriesSchema, await readJson(c));
      requireUser(c, input.user_id);
      if (input.messages !== undefined) {
        // A conversation: message records with ids, rounds and timestamps assigned (no model).
        const report = await graphmemix.addMessages(input.user_id, input.messages, toScope(input), laneOf(c));
        return c.json(
          { ...toApiIngestReport(input.user_id, report), memory_ids: report.memoryIds },
          allRejected(report) ? 400 : 200,
        );
      }
      const records = toRecordInputs(input);
      await confineRecordMedia(records, { userId: input.user_id, mediaDir: deps.mediaDir });
      const report = await graphmemix.addMemories(input.user_id, records, laneOf(c));
      return c.json(toApiIngestReport(input.user_id, report), allRejected(report) ? 400 : 200);
    }
    // Multipart: `user_id`, `memories` (JSON array) and files named `asset:<memory id>`.
    const body = await readMultipart(c);
    const input = parseInput(addMemoriesSchema, {
      user_id: textField(body, 'user_id'),
      memories: parseJsonField(textField(body, 'memories')),
    });
    requireUser(c, input.user_id);
    const records = toRecordInputs(input);
    await confineRecordMedia(records, { userId: input.user_id, mediaDir: deps.mediaDir });
    const byId = new Map(records.map((record) => [record.id, record]));
    const uploads = filesOf(body).map(({ field, file }) => {
      const id = field.startsWith(ASSET_FIELD_PREFIX) ? field.slice(ASSET_FIELD_PREFIX.length) : '';
      if (!byId.has(id)) {
        throw httpError(
          'INVALID_INPUT',
          `file field "${field}" must be "asset:<id of a memory in this request>"`,
        );
      }
      return { id, file };
    });
    // A record's uploads count toward its asset limit before any is written (3,000 tiny files for one record
    // were each written and removed before the record was refused).
    const perRecord = new Map<string, number>();
    for (const { id } of uploads) perRecord.set(id, (perRecord.get(id) ?? 0) + 1);
    for (const [i, record] of records.entries()) {
      const count = (record.assets?.length ?? 0) + (perRecord.get(record.id) ?? 0);
      if (count > RECORD_LIMITS.maxAssets) {
        throw new GraphmemixError(
          'TOO_LARGE',
          `${count} assets, over the limit of ${RECORD_LIMITS.maxAssets}`,
          {
            location: { field: `memories[${i}].assets` },
          },
        );
      }
    }
    // Everything is validated before the first byte is written.
    const saved: { id: string; uri: string }[] = [];
    let report: Awaited<ReturnType<Graphmemix['addMemories']>> | undefined;
    try {
      for (const { id, file } of uploads) {
        const asset = await saveUpload(deps.mediaDir, input.user_id, file);
        if (asset.uri !== undefined) saved.push({ id, uri: asset.uri });
        const record = byId.get(id) as MemoryRecordInput;
        record.assets = [...(record.assets ?? []), asset];
        if (record.kind === undefined && !record.text && asset.kind === 'image') record.kind = 'photo';
      }
      report = await graphmemix.addMemories(input.user_id, records, laneOf(c));
    } finally {
      // Files of records that were not stored (rejected, or the request failed) do not stay on disk;
      // releaseMedia keeps any that a stored memory references (uploads are content-addressed).
      const stored = new Set(report ? storedIds(report, records) : []);
      const orphans = saved.filter((upload) => !stored.has(upload.id)).map((upload) => upload.uri);
      if (orphans.length > 0) await graphmemix.releaseMedia(input.user_id, orphans);
    }
    return c.json(toApiIngestReport(input.user_id, report), allRejected(report) ? 400 : 200);
  });

  app.post('/v1/memories/import', async (c) => {
    if (!isMultipart(c))
      throw httpError('INVALID_INPUT', 'send multipart/form-data with file, format, user_id');
    const body = await readMultipart(c);
    const input = parseInput(importSchema, {
      user_id: textField(body, 'user_id'),
      format: textField(body, 'format'),
    });
    requireUser(c, input.user_id);
    const file = filesOf(body).find((f) => f.field === 'file')?.file;
    if (!file) throw httpError('INVALID_INPUT', 'multipart field "file" is missing');
    // Photos stay referenced by their path, so they go to the user's media folder; other formats are read
    // once from a scratch folder inside the media store (importers read media inside their folder only).
    const keep = input.format === 'photos' || input.format === 'media' || input.format === 'documents';
    const dir = keep
      ? join(
          deps.mediaDir,
          input.user_id,
          'imports',
          `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`,
        )
      : await mkdtemp(join(await scratchDir(deps.mediaDir), 'import-'));
    const path = join(dir, safeFileName(file.name));
    try {
      await mkdir(dir, { recursive: true });
      await writeFile(path, Buffer.from(await file.arrayBuffer()));
      let report: IngestReport;
      try {
        report = await graphmemix.ingest(path, {
          format: input.format as ImportFormat,
          contextId: input.user_id,
          ...laneOf(c),
        });
      } catch (error) {
        if (error instanceof GraphmemixError) error.message = withoutFolder(error.message, dir);
        throw error;
      }
      const answer = clientPaths(report, dir);
      return c.json(toApiIngestReport(input.user_id, answer), allRejected(answer) ? 400 : 200);
    } finally {
      if (!keep) await rm(dir, { recursive: true, force: true });
      // A kept photo that no stored memory references (rejected, or the import failed) does not stay.
      else await graphmemix.releaseMedia(input.user_id, [path]);
    }
  });

  app.get('/v1/memories/:id', async (c) => {
    const input = parseInput(memoryRefSchema, queryObject(c, { memory_id: c.req.param('id') }));
    requireUser(c, input.user_id, `memory ${input.memory_id} not found for this user`);
    const memory = await graphmemix.getMemory(input.user_id, input.memory_id);
    if (!memory) throw httpError('NOT_FOUND', `memory ${input.memory_id} not found for this user`);
    // The media digest's state (pending while the background queue works on it); absent without local media.
    return c.json({
      user_id: input.user_id,
      memory,
      ...(memory.media ? { media_status: memory.media.status } : {}),
    });
  });

  app.delete('/v1/memories/:id', async (c) => {
    const input = parseInput(memoryRefSchema, queryObject(c, { memory_id: c.req.param('id') }));
    requireUser(c, input.user_id, `memory ${input.memory_id} not found for this user`);
    const deleted = await graphmemix.deleteMemory(input.user_id, input.memory_id, laneOf(c));
    if (!deleted) throw httpError('NOT_FOUND', `memory ${input.memory_id} not found for this user`);
    return c.json({ user_id: input.user_id, memory_id: input.memory_id, deleted: true });
  });
}

async function scratchDir(mediaDir: string): Promise<string> {
  const dir = join(mediaDir, '.scratch');
  await mkdir(dir, { recursive: true });
  return dir;
}

/** Ids of the request's records that the report did not reject. */
function storedIds(
  report: { rejected: { recordId?: string }[] },
  records: readonly MemoryRecordInput[],
): string[] {
  const rejected = new Set(report.rejected.map((rejection) => rejection.recordId));
  return records.map((record) => record.id).filter((id) => !rejected.has(id));
}

/**
 * The import's report as the client sees it: file names relative to the upload (the server's folders, e.g.
 * `<db>.media/.scratch/import-XXXX/`, are not the client's business and tell an attacker where the archive is).
 */
function clientPaths(report: IngestReport, dir: string): IngestReport {
  return {
    ...report,
    rejected: report.rejected.map((rejection) =>
      rejection.file === undefined ? rejection : { ...rejection, file: withoutFolder(rejection.file, dir) },
    ),
    warnings: report.warnings.map((warning) => withoutFolder(warning, dir)),
  };
}

function withoutFolder(text: string, dir: string): string {
  return text.split(`${dir}${sep}`).join('').split(dir).join('.');
}

function parseJsonField(value: string | undefined): unknown {
  if (value === undefined) return undefined;
  return parseRequestJson(value, 'multipart field "memories"');
}
