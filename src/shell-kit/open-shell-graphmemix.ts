import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { openGraphmemix } from '../graphmemix.ts';
import type { Graphmemix } from '../graphmemix-api.ts';
import {
  allowMediaFromEnv,
  allowMediaRoot,
  createModels,
  dbFolderName,
  isPostgresUrl,
  loadModelConfig,
} from '../index.ts';
import type { ResolvedModelConfig } from '../providers/model-config.ts';
import { addRedactedSecrets } from './redact.ts';
import type { ServerLimits } from './server-limits.ts';

/**
 * Opens the archive for a long-running shell (serve, mcp, view) with the model config of the usual places
 * (--config, $GRAPHMEMIX_CONFIG, ./graphmemix.config.json, environment); nothing configured means offline.
 * The archive's media store and GRAPHMEMIX_MEDIA_ROOTS / GRAPHMEMIX_REMOTE_MEDIA become the media a model
 * may receive, and the configured model API keys are registered for redaction. The archive's media folder is
 * the one beside the database, so deletes remove uploads too.
 */
export async function openShellGraphmemix(options: {
  db: string;
  config?: string;
  /**
   * The config the caller has already loaded (serve and mcp read it for their keys and bounds first): used
   * instead of reading `config` again, so one start sees one version of the file.
   */
  modelConfig?: ResolvedModelConfig;
  /**
   * Question worker threads (default $GRAPHMEMIX_READ_WORKERS, else one per core but one, at most 8;
   * 0: questions run in this thread, for one-shot commands).
   */
  readWorkers?: number;
  /** Media digest mode (default 'background': servers acknowledge writes before OCR/ffmpeg). */
  mediaDigest?: 'inline' | 'background';
  /**
   * Finish the forgets and apply the relation journals a stopped process left, in the background (the servers;
   * one-shot commands do not).
   */
  resumeForgets?: boolean;
  /**
   * The archive's bounds of resolveServerLimits: unsettled write calls before BUSY (default 256), questions
   * waiting for a read worker before BUSY (default 64; no effect without read workers).
   */
  limits?: Pick<ServerLimits, 'maxPendingWrites' | 'maxQueuedQuestions'>;
}): Promise<Graphmemix> {
  const config =
    options.modelConfig ?? loadModelConfig(options.config === undefined ? {} : { path: options.config });
  addRedactedSecrets(
    [config.verifier, config.reader, config.vision, config.judge, config.embedding].map(
      (endpoint) => endpoint?.apiKey,
    ),
  );
  const mediaDir = mediaDirFor(options.db, config.mediaDir);
  allowMediaRoot(mediaDir);
  allowMediaFromEnv();
  const readWorkers = options.readWorkers ?? readWorkersFromEnv();
  // Writes run in a worker thread and questions in a pool of reader threads, each with its own connection:
  // neither an import nor a burst of questions stalls the event loop (health checks, other requests).
  return openGraphmemix({
    db: options.db,
    models: createModels(config),
    writeWorker: { modelConfig: config },
    mediaDir,
    // A write is acknowledged once stored; OCR, frames and pages follow in the background (media.status).
    mediaDigest: options.mediaDigest ?? 'background',
    ...(options.resumeForgets ? { resumeForgets: true } : {}),
    // The long-running shells (the ones resuming forgets) recover relations; a one-shot command's close would
    // wait for the recovery's turn under way.
    recoverRelations: options.resumeForgets === true,
    ...(options.limits?.maxPendingWrites === undefined
      ? {}
      : { maxPendingWrites: options.limits.maxPendingWrites }),
    ...(config.questionDeadlineMs === undefined ? {} : { questionDeadlineMs: config.questionDeadlineMs }),
    ...(config.semanticUpdates === undefined ? {} : { semanticUpdates: config.semanticUpdates }),
    readWorkers:
      readWorkers === 0
        ? false
        : {
            ...(readWorkers === undefined ? {} : { size: readWorkers }),
            ...(options.limits?.maxQueuedQuestions === undefined
              ? {}
              : { maxQueue: options.limits.maxQueuedQuestions }),
            modelConfig: config,
          },
  });
}

/** GRAPHMEMIX_READ_WORKERS: how many question threads (0: none); unset or invalid: the default. */
function readWorkersFromEnv(): number | undefined {
  const value = Number(process.env.GRAPHMEMIX_READ_WORKERS ?? '');
  return process.env.GRAPHMEMIX_READ_WORKERS && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/**
 * Uploaded media lives beside a SQLite database (`<db dir>/<db name>.media/`), so it moves with the archive.
 * A Postgres archive has no file to sit beside: its folder is `configured` (config `mediaDir`,
 * $GRAPHMEMIX_MEDIA_DIR), else `./graphmemix-media/<host_port_db>`; replicas must share it (docs/postgres.md).
 */
export function mediaDirFor(db: string, configured?: string): string {
  const dir = mediaDirPath(db, configured);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** mediaDirFor without creating the folder (readers and deletes need only the path). */
export function mediaDirPath(db: string, configured?: string): string {
  if (configured !== undefined) return resolve(configured);
  if (isPostgresUrl(db)) {
    const fromEnv = process.env.GRAPHMEMIX_MEDIA_DIR;
    return resolve(fromEnv ? fromEnv : join('graphmemix-media', dbFolderName(db)));
  }
  return db === ':memory:' || db === 'memory:'
    ? join(tmpdir(), `graphmemix-media-${process.pid}`)
    : join(dirname(resolve(db)), `${basename(db)}.media`);
}
