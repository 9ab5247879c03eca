import type { ViewKind } from '../types/view.ts';

/**
 * The ONE retrieval score scale s in [0, 1) that every view kind is mapped to, so that s_i is a max over
 * comparable numbers and prizes mean the same thing from one question to the next.
 *
 * Lexical views: a saturating transform of raw BM25, s = w_kind * raw / (raw + h_kind). Chosen over
 * per-question max normalisation because that would give EVERY question a top score of 1, even a question
 * with no good match, and calibration could not tell the two apart. h_kind is the raw BM25 at which a view
 * reaches half its ceiling: a query that matches two or three rare terms of a message lands near the middle.
 * w_kind caps views whose matches are cheap: the metadata view ("June 2024 Monday Lisbon") matches dates and
 * names, which locate a memory but rarely carry its content, so it tops out below a content match.
 *
 * Dense views: s = max(0, cosine) (already in [0, 1] for the normalised encoders we use).
 */
export const LEXICAL_SCALE: Readonly<Record<ViewKind, { half: number; ceiling: number }>> = {
  text: { half: 10, ceiling: 1 },
  caption: { half: 10, ceiling: 1 },
  ocr: { half: 10, ceiling: 0.9 },
  metadata: { half: 10, ceiling: 0.6 },
  image: { half: 10, ceiling: 1 },
  frame: { half: 10, ceiling: 1 },
};

/** Version of the scale: part of the calibration key, so prizes fitted on another scale are never reused. */
export const SCORE_SCALE_VERSION = 'sat1';

export function lexicalScore(kind: ViewKind, rawBm25: number): number {
  if (!(rawBm25 > 0)) return 0;
  const { half, ceiling } = LEXICAL_SCALE[kind];
  return (ceiling * rawBm25) / (rawBm25 + half);
}

export function denseScore(cosine: number): number {
  return Number.isFinite(cosine) ? Math.max(0, Math.min(1, cosine)) : 0;
}
