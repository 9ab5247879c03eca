import type { QueryTermSlots } from './query-term-slots.ts';

/** Forward lists of the lexical index (lex_docs.terms): decoding the stored blob and reading a query's tfs from it. */

/**
 * Decodes a document's forward list (words: [doc id, length, term id, tf, ...]) into `tfs` at the positions
 * of the query's terms; returns the document length.
 */
export function readTermFrequencies(words: Uint32Array, slots: QueryTermSlots, tfs: Float64Array): number {
  tfs.fill(0);
  for (let i = 2; i + 2 <= words.length; i += 2) {
    const at = slots.positionOf(words[i]!);
    if (at >= 0) tfs[at] = words[i + 1]!;
  }
  return words[1]!;
}

const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/**
 * A lex_docs.terms blob (little-endian u32) as words: a view of the driver's buffer when it is aligned (each
 * blob comes in its own buffer, at offset 0) on a little-endian host, else a decoded copy. Scoring a
 * candidate reads every word of its list: one load a word instead of four byte loads and shifts.
 */
export function forwardWords(blob: Buffer): Uint32Array {
  if (LITTLE_ENDIAN && blob.byteOffset % 4 === 0 && blob.byteLength % 4 === 0)
    return new Uint32Array(blob.buffer, blob.byteOffset, blob.byteLength >> 2);
  const words = new Uint32Array(blob.byteLength >> 2);
  for (let i = 0; i < words.length; i++) words[i] = blob.readUInt32LE(4 * i);
  return words;
}
