import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, extname, relative, resolve, sep } from 'node:path';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import { documentPartId } from '../types/document-parts.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import { splitSections } from './document-sections.ts';
import { compareCodePoints, findFiles, hasExtension } from './find-files.ts';
import { rejectItem, warningItem } from './import-items.ts';
import type { Importer, ImportItem, ImportOptions } from './importer-spec.ts';
import { sha256File } from './media-files.ts';
import { DEFAULT_MAX_TEXT_BYTES } from './text-size-limit.ts';

export const DOCUMENT_EXTENSIONS: readonly string[] = ['.pdf', '.txt', '.md', '.markdown'];

/** Context used when the caller names none. */
export const DEFAULT_DOCUMENTS_CONTEXT_ID = 'default';

/**
 * Imports a folder of documents (searched recursively) or one file (`--format documents`). Each document is
 * one record of several memories of kind 'document' (src/types/document-parts.ts): the document memory
 * (title, author, date, the file) and one part per page or section, joined by `same_record` in order.
 * - PDF: the document memory with the PDF as its `document` asset; the media digest
 *   (src/digest/media/digest-record-media.ts, poppler-utils) adds title/author/date, one part per page
 *   (its text; pages without a text layer rendered and OCR'd as the part's `page` image).
 * - Markdown: one part per heading section; plain text: paragraph blocks (src/importers/document-sections.ts);
 *   the document memory's text is the title (first Markdown heading, else the file name).
 * id: `document:<first 24 hex of the file's sha256>` (content identity, like media), parts `<id>:p0001`...;
 * `sourceId` the path relative to the imported folder (parts: `<path> p.<n>` / `§<n>`); sequence by path,
 * shared by the parts. No timestamp from file times (copy times). A document imported before parts existed
 * (one memory holding the whole text) is replaced by a re-import: the document memory is updated in place
 * (its input differs), the parts are new.
 * Bad input: a text file over the text limit or not valid UTF-8 is rejected naming the file.
 */
export function createDocumentsImporter(): Importer {
  return { format: 'documents', read: readDocuments };
}

export function documentRecordId(sha256: string): string {
  return `document:${sha256.slice(0, 24)}`;
}

async function* readDocuments(path: string, options: ImportOptions): AsyncGenerator<ImportItem> {
  const files = await findFiles(path, (name) => hasExtension(name, DOCUMENT_EXTENSIONS));
  const root = (await stat(resolve(path))).isDirectory() ? resolve(path) : dirname(resolve(path));
  const contextId = options.contextId ?? DEFAULT_DOCUMENTS_CONTEXT_ID;
  const maxTextBytes = options.maxTextBytes ?? DEFAULT_MAX_TEXT_BYTES;
  const sorted = [...files].sort(compareCodePoints);
  const seen = new Map<string, string>();
  let sequence = 0;
  for (const file of sorted) {
    const relativePath = (relative(root, file) || basename(file)).split(sep).join('/');
    let sha256: string;
    try {
      sha256 = await sha256File(file);
    } catch (cause) {
      yield {
        type: 'reject',
        error: new GraphmemixError('NOT_FOUND_PATH', 'cannot read document', { location: { file }, cause }),
        source: { file },
      };
      continue;
    }
    const recordId = documentRecordId(sha256);
    const first = seen.get(sha256);
    if (first !== undefined) {
      yield warningItem(file, `same bytes as ${first}; imported once`, { recordId });
      continue;
    }
    seen.set(sha256, relativePath);
    const base: MemoryRecord = {
      id: recordId,
      contextId,
      kind: 'document',
      sequence: sequence++,
      sourceId: relativePath,
      text: '',
      assets: [],
    };
    if (hasExtension(file, ['.pdf'])) {
      base.assets = [{ id: 'document', kind: 'document', uri: file, mime: 'application/pdf', sha256 }];
      // The mime makes this input differ from the one-memory PDF records of earlier versions, so a re-import
      // re-digests them into parts instead of finding them unchanged.
      base.metadata = { document: { mime: 'application/pdf' } };
      yield { type: 'record', record: base, source: { file, recordId } };
      continue;
    }
    const size = (await stat(file)).size;
    if (size > maxTextBytes) {
      yield rejectItem(file, 'TOO_LARGE', `${size} bytes exceed the text limit of ${maxTextBytes} bytes`, {
        recordId,
        field: 'text',
      });
      continue;
    }
    const bytes = await readFile(file);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      yield rejectItem(file, 'INVALID_INPUT', 'not valid UTF-8 text', { recordId, field: 'text' });
      continue;
    }
    if (text.trim() === '') {
      yield warningItem(file, 'empty document skipped', { recordId });
      continue;
    }
    const title = /^#\s+(.+)$/m.exec(text)?.[1]?.trim() ?? basename(file, extname(file));
    const markdown = !hasExtension(file, ['.txt']);
    const mime = markdown ? 'text/markdown' : 'text/plain';
    const sections = splitSections(text, markdown ? 'markdown' : 'plain');
    yield {
      type: 'record',
      record: { ...base, text: title, metadata: { document: { title, mime, parts: sections.length } } },
      source: { file, recordId },
    };
    for (const [i, section] of sections.entries()) {
      const part = i + 1;
      const id = documentPartId(recordId, part);
      const document: Record<string, unknown> = { of: recordId, part, title };
      if (section.heading !== undefined) document.section = section.heading;
      yield {
        type: 'record',
        record: {
          ...base,
          id,
          sourceId: `${relativePath} §${part}`,
          text: section.text,
          metadata: { document },
        },
        source: { file, recordId: id },
      };
    }
  }
}
