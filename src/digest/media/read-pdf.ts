import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { LINE_TERMINATOR } from '../../types/trim-chars.ts';
import { runTool } from './external-tool.ts';
import type { MediaLimits } from './media-limits.ts';

export interface PdfFacts {
  pages: number;
  title?: string;
  author?: string;
  /** ISO 8601 creation date (pdfinfo `-isodates`). */
  createdAt?: string;
  /** Text of each read page (pdftotext -layout), '' for a page without a text layer. */
  pageText: string[];
  /** Pages past limits.maxPdfPages that were not read. */
  truncatedPages: number;
}

/**
 * Reads a PDF with poppler-utils (Debian): `pdfinfo -isodates` for page count and title/author/date,
 * `pdftotext -layout` over the first limits.maxPdfPages pages (pages split on form feeds). Chosen over an
 * npm parser because poppler is the reference-quality C implementation every distribution ships, runs out of
 * process (a hostile PDF cannot exhaust this process's heap; time and output are bounded per run) and also
 * renders pages without a text layer for OCR (pdftoppm), which no small npm parser does.
 */
export async function readPdf(file: string, limits: MediaLimits): Promise<PdfFacts> {
  const run = {
    timeoutMs: limits.toolTimeoutMs,
    maxOutputBytes: limits.toolMaxOutputBytes,
    maxMemoryBytes: limits.toolMaxMemoryBytes,
  };
  const info = parsePdfInfo((await runTool('pdfinfo', ['-isodates', file], run)).toString('utf8'));
  const pages = Number(info.pages);
  if (!Number.isInteger(pages) || pages < 1)
    throw new GraphmemixError('INVALID_INPUT', 'the PDF has no pages');
  const last = Math.min(pages, limits.maxPdfPages);
  const text = (
    await runTool('pdftotext', ['-layout', '-enc', 'UTF-8', '-f', '1', '-l', String(last), file, '-'], run)
  ).toString('utf8');
  const pageText = text.split('\f').slice(0, last).map(tidyPage);
  while (pageText.length < last) pageText.push('');
  const facts: PdfFacts = { pages, pageText, truncatedPages: pages - last };
  if (info.title) facts.title = info.title;
  if (info.author) facts.author = info.author;
  const created = info.creationdate;
  if (created && !Number.isNaN(Date.parse(created))) facts.createdAt = created;
  return facts;
}

/** Renders one page as PNG (longest edge limits.renderEdge) into `outDir`; returns its path. */
export async function renderPdfPage(
  file: string,
  page: number,
  outDir: string,
  limits: MediaLimits,
): Promise<string | undefined> {
  await mkdir(outDir, { recursive: true });
  const prefix = join(outDir, `page-${page}`);
  await runTool(
    'pdftoppm',
    [
      '-f',
      String(page),
      '-l',
      String(page),
      '-png',
      '-scale-to',
      String(limits.renderEdge),
      '-singlefile',
      file,
      prefix,
    ],
    {
      timeoutMs: limits.toolTimeoutMs,
      maxOutputBytes: 1024 * 1024,
      maxMemoryBytes: limits.toolMaxMemoryBytes,
    },
  );
  const name = `page-${page}.png`;
  return (await readdir(outDir)).includes(name) ? join(outDir, name) : undefined;
}

/** pdfinfo's "Key: value" lines -> { key: value } (keys lower case without spaces). */
export function parsePdfInfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  // What `/^([A-Za-z ]+):\s*(.*)$/` read, split at the first colon instead: on a Title of spaces that pattern
  // retried every split (100k took 23.5 s); a value holding a line terminator other than '\n' is skipped as before.
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    const key = line.slice(0, colon);
    const value = line.slice(colon + 1).trimStart();
    if (colon > 0 && /^[A-Za-z ]+$/.test(key) && !LINE_TERMINATOR.test(value))
      out[key.trim().toLowerCase().replace(/ /g, '')] = value.trim();
  }
  return out;
}

/** Right-trims lines and drops trailing blank lines; keeps the layout (columns, indentation). */
function tidyPage(page: string): string {
  return page
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
}
