/**
 * One memory of one archive context (one user's history). Derived text (captions, OCR, summaries) sits
 * beside the raw record in `assets[].derived` / `derived`; it never replaces `text`.
 */
export type MemoryKind =
  | 'message'
  | 'email'
  | 'photo'
  | 'video'
  | 'document'
  | 'profile'
  | 'note'
  | 'event'
  | 'other';

export const MEMORY_KINDS: readonly MemoryKind[] = [
  'message',
  'email',
  'photo',
  'video',
  'document',
  'profile',
  'note',
  'event',
  'other',
];

export interface GeoLocation {
  /** Free-text place name ("Lisbon, Alfama"). */
  name?: string;
  lat?: number;
  lon?: number;
}

export interface MemoryRecord {
  /** Stable id, unique within the context. Re-importing the same id updates, never duplicates. */
  id: string;
  /** The archive context (one user's history). Nothing crosses contexts. */
  contextId: string;
  kind: MemoryKind;
  /** Ingestion order within the context; consecutive_turn and tie-breaks use it. */
  sequence: number;
  /** Session / conversation / thread the record came from, when the source has one. */
  sessionId?: string;
  /** Native round id ("D1:3"): the user and assistant messages of one round share it (same_round). */
  roundId?: string;
  /** Where the record came from (file name, mailbox, dataset row id); shown to the reader. */
  sourceId?: string;
  /** Conversation role: user, assistant, or a participant name for multi-party data. */
  role?: string;
  /** Display name of who said or wrote it. */
  speaker?: string;
  /** ISO 8601 timestamp (with or without time); absent when the source has none. */
  timestamp?: string;
  location?: GeoLocation;
  /** The raw text (message body, email body incl. subject line, document text). May be empty for media. */
  text: string;
  /** Media attached to the record, each with its own derived fields. */
  assets: MediaAsset[];
  /** Record-level derived fields (summary, tags) computed outside the raw source. */
  derived?: DerivedFields;
  /** Source-specific fields kept verbatim (email headers, dataset extras). Used by schema relations. */
  metadata?: Record<string, unknown>;
  /** Which agent wrote or owns the memory (mem0 `agent_id`): a scope usable in filters. */
  agentId?: string;
  /** The run / session scope of the memory (mem0 `run_id`): a scope usable in filters. */
  runId?: string;
  /**
   * Ids of memories of the same context this one corrects or replaces ("the appointment moved to Friday"
   * supersedes "the appointment is on Monday"). Shown to the reader with both dates; see docs/interfaces.md.
   */
  supersedes?: string[];
  /**
   * When this version entered the archive (ISO 8601, set at write time; the second clock next to
   * `timestamp`, which is when the event happened). Not part of the content hash.
   */
  recordedAt?: string;
  /**
   * State of the media digest (EXIF, OCR, frames, pages, captions) of a record with local media: set by
   * ingest, never by a source. Absent for records without local media (src/digest/media/).
   */
  media?: MediaDigestState;
}

export type MediaStatus = 'pending' | 'done' | 'failed';
export const MEDIA_STATUSES: readonly MediaStatus[] = ['pending', 'done', 'failed'];

export interface MediaDigestState {
  /** pending: stored, digest queued; done: digest written; failed: digest gave up (the record stays). */
  status: MediaStatus;
  /** contentHash of the record as it arrived, before the digest: a re-import of the same input is unchanged. */
  sourceHash: string;
  /** Why the digest (or a part of it) failed; the record keeps whatever was read. */
  error?: string;
}

export type AssetKind = 'image' | 'video' | 'audio' | 'document';

export interface DerivedFields {
  /** Captions of the asset/record; several allowed (dataset caption, vision-model caption). */
  captions?: string[];
  /** OCR text. */
  ocr?: string;
  summary?: string;
  tags?: string[];
}

export interface ExifData {
  /** ISO 8601 capture time. */
  takenAt?: string;
  lat?: number;
  lon?: number;
  make?: string;
  model?: string;
}

export interface MediaAsset {
  /** Unique within the record. */
  id: string;
  kind: AssetKind;
  /** Absolute path or URL of the media. Absent when only derived text is known (e.g. dataset caption only). */
  uri?: string;
  mime?: string;
  /** Content hash (sha256 hex) when the file was read; lets re-imports detect changed media. */
  sha256?: string;
  derived?: DerivedFields;
  exif?: ExifData;
  /** For video: paths or URIs of sampled frames. */
  frames?: string[];
  /** For video: the time in seconds of each sampled frame (same order as `frames`). */
  frameTimes?: number[];
  /** For video: OCR text of each sampled frame (same order as `frames`; '' when none). */
  frameText?: string[];
  /** For video and audio: duration in seconds. */
  durationSeconds?: number;
  /**
   * A stored JPEG made by the media digest in the archive's media folder (never taken from a source): for
   * an image its thumbnail (longest edge 320 px), for a video its frame strip (the sampled frames side by
   * side). Served by `GET /v1/media/:id?size=thumb` and the viewer; removed with the memory.
   */
  thumbnail?: string;
}
