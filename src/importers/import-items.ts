import type { ErrorCode } from '../errors/error-codes.ts';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { ImportItem, SourcePosition } from './importer-spec.ts';
import { compact } from './json-values.ts';

/** Where in a source something happened: file, line (line-based formats), record id, field path. */
export interface ItemPlace {
  line?: number | undefined;
  recordId?: string | undefined;
  field?: string | undefined;
}

export function sourceAt(file: string, place: ItemPlace = {}): SourcePosition {
  return compact({ file, line: place.line, recordId: place.recordId });
}

/** A reject item whose error names file, line, record and field, so the report says what to fix. */
export function rejectItem(
  file: string,
  code: ErrorCode,
  message: string,
  place: ItemPlace = {},
): ImportItem {
  const location = compact({ file, line: place.line, recordId: place.recordId, field: place.field });
  return {
    type: 'reject',
    error: new GraphmemixError(code, message, { location }),
    source: sourceAt(file, place),
  };
}

/** A warning whose message starts with its place (`file:line, record x, field y:`), like error messages. */
export function warningItem(file: string, message: string, place: ItemPlace = {}): ImportItem {
  const parts = [place.line === undefined ? file : `${file}:${place.line}`];
  if (place.recordId !== undefined) parts.push(`record ${place.recordId}`);
  if (place.field !== undefined) parts.push(`field ${place.field}`);
  return { type: 'warning', message: `${parts.join(', ')}: ${message}`, source: sourceAt(file, place) };
}

/**
 * Ingestion sequence per context across all files of one import, so that `--context` merging several
 * sources into one context still yields unique, ordered sequence numbers.
 */
export class SequenceCounter {
  readonly #next = new Map<string, number>();
  readonly #byId = new Map<string, number>();

  next(contextId: string): number {
    const value = this.#next.get(contextId) ?? 0;
    this.#next.set(contextId, value + 1);
    return value;
  }

  /**
   * The sequence of a record id: a repeated id gets its first sequence back, so an identical repeated line
   * stays identical (ingest skips it) and only a real content change is reported as DUPLICATE_ID.
   */
  forId(contextId: string, id: unknown): number {
    if (typeof id !== 'string') return this.next(contextId);
    const key = `${contextId}\u0000${id}`;
    const known = this.#byId.get(key);
    if (known !== undefined) return known;
    const value = this.next(contextId);
    this.#byId.set(key, value);
    return value;
  }
}
