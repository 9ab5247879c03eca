import type { ResolvedModelConfig } from '../providers/model-config.ts';
import type { MediaAccessPolicy } from '../providers/to-image-url.ts';

/** What a read worker opens: the archive file (read-only) and the models its questions need (plain data). */
export interface ReadWorkerData {
  db: string;
  /** Model configuration (verifier, reader, vision, embedding); absent: offline. */
  modelConfig?: ResolvedModelConfig;
  /** The scalar OpenGraphmemixOptions of the opening thread (ocr, deadlines, ...), applied here too. */
  openOptions?: Record<string, string | number | boolean>;
  /** The opening thread's media policy at start (process-wide state is per thread); calls carry updates. */
  mediaPolicy: MediaAccessPolicy;
}

/** The question methods of the public API that a read worker runs (same names and arguments). */
export type ReadMethod = 'retrieve' | 'answer' | 'search' | 'list';

export type ReadRequest =
  | { type: 'call'; id: number; method: ReadMethod; args: unknown[]; mediaPolicy?: MediaAccessPolicy }
  /** The caller gave up (client disconnect, AbortSignal): the worker aborts that call's signal. */
  | { type: 'abort'; id: number; reason: string }
  /** Abort what runs, close the connection, end the thread. */
  | { type: 'close' };

/** A GraphmemixError (or any error) as plain data: code, location and details survive the thread boundary. */
export interface WireError {
  name: string;
  message: string;
  code?: string;
  location?: unknown;
  details?: unknown;
}

/** `id: 0` with type 'result' means "ready". */
export type ReadReply =
  | { id: number; type: 'result'; value: unknown }
  | { id: number; type: 'error'; error: WireError };
