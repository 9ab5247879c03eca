import type { ResolvedModelConfig } from '../providers/model-config.ts';
import type { MediaAccessPolicy } from '../providers/to-image-url.ts';

/** What the write worker opens: the archive file and the models its digest needs (plain data, cloneable). */
export interface WriteWorkerData {
  db: string;
  /** Model configuration for digest (embeddings, vision captions); absent: offline. */
  modelConfig?: ResolvedModelConfig;
  ocr?: boolean;
  /** The archive's media folder, so deletes in the worker remove their uploads. */
  mediaDir?: string;
  /** The media digest mode (OpenGraphmemixOptions.mediaDigest); the queue runs in the worker. */
  mediaDigest?: 'inline' | 'background';
  /** Where automatic compactions run (OpenGraphmemixOptions.compaction). */
  compaction?: 'steps' | 'inline';
  /** When a write's semantic side is applied (OpenGraphmemixOptions.semanticUpdates). */
  semanticUpdates?: 'in-write' | 'after-write';
  /** Resume the forgets a stopped process left (OpenGraphmemixOptions.resumeForgets). */
  resumeForgets?: boolean;
  /** Apply the relation journal a stopped process left (OpenGraphmemixOptions.recoverRelations). */
  recoverRelations?: boolean;
  /** The opening thread's media policy (process-wide state is per thread): what digest may read or forward. */
  mediaPolicy: MediaAccessPolicy;
}

/** The write methods of the public API that the worker runs (same names and arguments). */
export type WriteMethod =
  | 'ingest'
  | 'addMemories'
  | 'updateMemory'
  | 'deleteMemory'
  | 'compact'
  | 'forgetContext'
  | 'waitForMedia'
  | 'waitForCompactions';

/**
 * The close message that stops the worker's background work (automatic compactions, resumed forgets) at its next
 * step instead of waiting for it (Graphmemix.close({ background: 'stop' })); a plain 'close' waits.
 */
export const CLOSE_STOPPING_BACKGROUND = 'close:stop-background';

export interface WriteRequest {
  id: number;
  method: WriteMethod;
  args: unknown[];
}

export type WriteReply =
  | { id: number; type: 'result'; value: unknown }
  | { id: number; type: 'progress'; items: number }
  | {
      id: number;
      type: 'error';
      error: { name: string; message: string; code?: string; location?: unknown; details?: unknown };
    };
