/**
 * A retrieval view: one route into a memory (paper 3.3). A memory has several; s_i is the max over them.
 * `key` distinguishes several views of one kind (caption of asset a1 vs a2).
 */
export type ViewKind = 'text' | 'caption' | 'ocr' | 'metadata' | 'image' | 'frame';

export const VIEW_KINDS: readonly ViewKind[] = ['text', 'caption', 'ocr', 'metadata', 'image', 'frame'];

export interface MemoryView {
  memoryId: string;
  kind: ViewKind;
  /** Unique within (memoryId, kind), e.g. the asset id; 'main' for single views. */
  key: string;
  /** Text of the view (empty for pure pixel views, which carry `uri`). */
  text: string;
  /** Media uri for image/frame views (embedded when a vision embedding model is configured). */
  uri?: string;
}

/** One scored hit of a view search, before max-pooling per memory. */
export interface ViewHit {
  memoryId: string;
  kind: ViewKind;
  key: string;
  /** Score on the view's own raw scale (BM25, cosine). */
  rawScore: number;
}
