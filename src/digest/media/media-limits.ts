/**
 * Bounds of the media digest (every image, video and document, whoever sent it). Everything a source names
 * is hostile: a limit that is hit makes that part of the digest a warning (the record stays), never a hang
 * or an unbounded allocation.
 */
export interface MediaLimits {
  /** Largest image file decoded (bytes). */
  maxImageBytes: number;
  /** Largest image decoded, in pixels (sharp `limitInputPixels`): a decompression bomb stops here. */
  maxImagePixels: number;
  /** OCR of one image (ms); the OCR worker is restarted when it runs over. */
  ocrTimeoutMs: number;
  /** One external tool run (ffprobe, one ffmpeg frame, pdfinfo, pdftotext, one pdftoppm page), in ms. */
  toolTimeoutMs: number;
  /** Largest output read from an external tool (bytes). */
  toolMaxOutputBytes: number;
  /**
   * Memory one external tool run may allocate (bytes; its data segment, `RLIMIT_DATA`, on Linux). Decoders
   * allocate what a file declares: a 862-byte PDF whose JPEG 2000 image claims 45,000 x 45,000 pixels made
   * pdftoppm take 8.1 GB whatever `-scale-to` said (round 55).
   */
  toolMaxMemoryBytes: number;
  /** Frames sampled from a video. */
  videoFrames: number;
  /** Largest video or document file read (bytes). */
  maxFileBytes: number;
  /** Pages of a PDF read; later pages are dropped with a warning. */
  maxPdfPages: number;
  /** Pages without a text layer rendered and OCR'd per document. */
  maxPdfImagePages: number;
  /** Longest edge of a rendered frame or page image (px). */
  renderEdge: number;
  /** Whole digest of one record (ms); what is not finished by then is a failed part. */
  recordTimeoutMs: number;
}

export const DEFAULT_MEDIA_LIMITS: MediaLimits = {
  maxImageBytes: 64 * 1024 * 1024,
  maxImagePixels: 100_000_000,
  ocrTimeoutMs: 60_000,
  toolTimeoutMs: 30_000,
  toolMaxOutputBytes: 16 * 1024 * 1024,
  toolMaxMemoryBytes: 2 * 1024 * 1024 * 1024,
  videoFrames: 8,
  maxFileBytes: 1024 * 1024 * 1024,
  maxPdfPages: 300,
  maxPdfImagePages: 20,
  renderEdge: 1600,
  recordTimeoutMs: 10 * 60_000,
};
