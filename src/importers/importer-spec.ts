import type { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { ChatModel } from '../providers/model-spec.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { EvalQuestion } from '../types/question.ts';

/** Import formats accepted by `graphmemix ingest --format` and the HTTP import route. */
export type ImportFormat =
  | 'unified'
  | 'bundle'
  | 'mem-gallery'
  | 'locomo'
  | 'm3exam'
  | 'media'
  | 'photos'
  | 'documents'
  | 'mail';
/** `photos` is the old name of `media` (kept as an alias). */
export const IMPORT_FORMATS: readonly ImportFormat[] = [
  'unified',
  'bundle',
  'mem-gallery',
  'locomo',
  'm3exam',
  'media',
  'photos',
  'documents',
  'mail',
];

/**
 * What an importer yields, one item at a time, so huge sources stream and a bad record never stops the rest.
 * Importers never write: every item goes through the one ingest path (src/digest/ingest.ts).
 */
export type ImportItem =
  | {
      type: 'record';
      record: MemoryRecord;
      source: SourcePosition;
      /**
       * Ids an earlier version of the importer gave this same source (photos: `photo:<relative path>`).
       * Ingest deletes such a memory once this record is written, only when it has the same `sourceId` and
       * the same asset content (sha256), so a re-import replaces it instead of adding a duplicate.
       */
      legacyIds?: string[];
    }
  | { type: 'question'; question: EvalQuestion; source: SourcePosition }
  /** A record or question that could not be read; ingest reports it and continues. */
  | { type: 'reject'; error: GraphmemixError; source: SourcePosition }
  /** Non-fatal notes (dangling evidence ids, unreadable EXIF on an otherwise good photo). */
  | { type: 'warning'; message: string; source: SourcePosition };

export interface SourcePosition {
  file: string;
  line?: number;
  /** Record id or dataset row id when known. */
  recordId?: string;
}

export type DialogueShape = 'rounds' | 'turns';
export const DIALOGUE_SHAPES: readonly DialogueShape[] = ['rounds', 'turns'];

export interface ImportOptions {
  /** Put everything into this context (overrides ids from the source where the format has none). */
  contextId?: string;
  /** Vision model for captions (photos); absent offline. */
  vision?: ChatModel;
  /** Run OCR on images (photos importer). Default true. */
  ocr?: boolean;
  /**
   * The import root: the one folder whose files imported records may reference as media (real paths,
   * symlinks resolved; anything outside counts as missing). Default: the import path when it is a folder,
   * else the folder of the file. `Graphmemix.ingest` sets it and allows it for model image parts.
   */
  mediaRoot?: string;
  /**
   * Record shape of dialogue datasets that have user/assistant rounds (mem-gallery, m3exam). 'rounds'
   * (default): each turn carries its round id, so the two halves of a round are joined by same_round.
   * 'turns': the round ids are left out, giving the shape of a two-person chat without rounds (LoCoMo,
   * REALTALK, exported messengers: only consecutive turns of a session are related), so chat-shaped archives
   * can be measured on data with round-level gold. Gold still names both turns of a round.
   */
  shape?: DialogueShape;
  /** Largest text field accepted, in bytes. Default 1 MiB; larger records are rejected with TOO_LARGE. */
  maxTextBytes?: number;
}

export interface Importer {
  readonly format: ImportFormat;
  /** `path` is one file or a directory searched recursively for this format's files. */
  read(path: string, options: ImportOptions): AsyncIterable<ImportItem>;
}
