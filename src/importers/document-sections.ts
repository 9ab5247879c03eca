import { MAX_DOCUMENT_PARTS } from '../types/document-parts.ts';
import { inSet, LINE_TERMINATOR, trimEndChars } from '../types/trim-chars.ts';

/** Longest section kept as one part (characters); longer ones are cut at paragraph, then line boundaries. */
export const MAX_SECTION_CHARS = 4000;
/** Plain text: paragraphs are gathered into blocks of up to this many characters. */
export const PLAIN_BLOCK_CHARS = 1500;

export interface DocumentSection {
  /** The Markdown heading that opens the section (without `#`), when there is one. */
  heading?: string;
  text: string;
}

/**
 * The parts of a text document, in reading order:
 * - Markdown: one section per ATX heading (`#` to `######`, outside fenced code blocks), the heading line
 *   included; text before the first heading is a section of its own;
 * - plain text: paragraphs (blank-line separated) gathered into blocks of up to PLAIN_BLOCK_CHARS.
 * Every section is cut to at most MAX_SECTION_CHARS (at a paragraph, else a line, else a character
 * boundary), empty ones are dropped, and past MAX_DOCUMENT_PARTS the rest joins the last section (the file
 * itself is bounded by the text limit). Loops only: a hostile file with a million headings costs one pass.
 */
export function splitSections(text: string, format: 'markdown' | 'plain'): DocumentSection[] {
  const normalised = text.replace(/\r\n?/g, '\n');
  const raw = format === 'markdown' ? markdownSections(normalised) : plainBlocks(normalised);
  const out: DocumentSection[] = [];
  for (const section of raw) {
    const pieces = cut(section.text.trim(), MAX_SECTION_CHARS);
    for (const [i, piece] of pieces.entries()) {
      out.push(
        section.heading !== undefined && i === 0
          ? { heading: section.heading, text: piece }
          : { text: piece },
      );
    }
  }
  if (out.length <= MAX_DOCUMENT_PARTS) return out;
  const kept = out.slice(0, MAX_DOCUMENT_PARTS);
  const rest: string[] = [];
  for (let i = MAX_DOCUMENT_PARTS - 1; i < out.length; i++) rest.push(out[i]!.text);
  kept[MAX_DOCUMENT_PARTS - 1] = { ...kept[MAX_DOCUMENT_PARTS - 1]!, text: rest.join('\n\n') };
  return kept;
}

function markdownSections(text: string): DocumentSection[] {
  const sections: DocumentSection[] = [];
  let current: DocumentSection = { text: '' };
  const lines: string[] = [];
  let fence: string | undefined;
  const close = (): void => {
    current.text = lines.join('\n');
    if (current.text.trim() !== '') sections.push(current);
    lines.length = 0;
  };
  for (const line of text.split('\n')) {
    const fenceMatch = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fenceMatch) {
      const marker = fenceMatch[1]!;
      if (fence === undefined) fence = marker[0]!.repeat(marker.length);
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
    }
    const heading = fence === undefined && !fenceMatch ? atxHeading(line) : undefined;
    if (heading !== undefined) {
      close();
      current = { heading, text: '' };
    }
    lines.push(line);
  }
  close();
  return sections;
}

/**
 * The text of an ATX heading line ("## Title ##" -> "Title"), else undefined: what
 * `/^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/` matched, without its backtracking (one 1 KB line holding a U+2028,
 * which `.` does not match, took 213 s to import).
 */
function atxHeading(line: string): string | undefined {
  const open = /^\s{0,3}#{1,6}\s/.exec(line);
  if (!open) return undefined;
  const text = trimEndChars(line.slice(open[0].length).trimEnd(), inSet('#')).trim();
  return LINE_TERMINATOR.test(text) ? undefined : text;
}

function plainBlocks(text: string): DocumentSection[] {
  const blocks: DocumentSection[] = [];
  let block: string[] = [];
  let size = 0;
  for (const paragraph of text.split(/\n\s*\n/)) {
    const trimmed = paragraph.trim();
    if (trimmed === '') continue;
    if (size > 0 && size + trimmed.length > PLAIN_BLOCK_CHARS) {
      blocks.push({ text: block.join('\n\n') });
      block = [];
      size = 0;
    }
    block.push(trimmed);
    size += trimmed.length + 2;
  }
  if (block.length > 0) blocks.push({ text: block.join('\n\n') });
  return blocks;
}

/** Pieces of at most `max` characters, cut at the last paragraph break, else line break, else anywhere. */
function cut(text: string, max: number): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const window = rest.slice(0, max);
    let at = window.lastIndexOf('\n\n');
    if (at < max / 4) at = window.lastIndexOf('\n');
    if (at < max / 4) at = window.lastIndexOf(' ');
    if (at < max / 4) at = max;
    pieces.push(rest.slice(0, at).trim());
    rest = rest.slice(at).trim();
  }
  if (rest !== '') pieces.push(rest);
  return pieces.filter((piece) => piece !== '');
}
