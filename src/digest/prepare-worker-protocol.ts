import type { SourcePosition } from '../importers/importer-spec.ts';
import type { PreparedRecord, PrepareOptions } from './prepare-records.ts';

/** A chunk of record items for the prepare helper, each with the sequence it validates under. */
export interface PrepareRequest {
  id: number;
  options: PrepareOptions;
  items: { record: unknown; source: SourcePosition; sequence: number }[];
}

/** The helper's answer to a chunk: every item prepared (in order), or why the chunk failed. (Its first message,
 * `{ type: 'loaded' }`, says it takes chunks.) */
export type PrepareReply =
  | { id: number; type: 'prepared'; prepared: PreparedRecord[] }
  | { id: number; type: 'failed'; error: string };
