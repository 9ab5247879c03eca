import type { SourcePosition } from '../importers/importer-spec.ts';
import type { PreparedRecord, PrepareOptions } from './prepare-records.ts';

/** A chunk of record items for the prepare helper, each with the sequence it validates under. */
export interface PrepareRequest {
  id: number;
  options: PrepareOptions;
  items: { record: unknown; source: SourcePosition; sequence: number }[];
}

/** The helper's answer to a chunk: every item prepared (in order), or why the chunk failed. */
export type PrepareReply =
  | { id: number; type: 'prepared'; prepared: PreparedRecord[] }
  | { id: number; type: 'failed'; error: string };

/** Everything the helper posts: first `loaded` (it takes chunks from then on), then one reply per chunk. */
export type PrepareMessage = { type: 'loaded' } | PrepareReply;
