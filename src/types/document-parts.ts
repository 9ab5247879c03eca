import type { MemoryRecord } from './memory-record.ts';

/**
 * A document is one record of several memories: the document memory itself (id `D`: title, author, date,
 * the file as its asset) and its parts, one memory per PDF page or text section, ids `D:p0001`, `D:p0002`...
 * (stable across re-imports: the document id is a content hash, the part number its index). Parts carry
 * `metadata.document = { of: D, part: n, page?, title? }`; the document memory carries `parts: N`.
 * `same_record` joins D with part 1 and each part with the next (src/digest/relations/same-record.ts), so
 * the order of the pages is kept in the graph and a page is evidence on its own.
 */
export interface DocumentPartFacts {
  /** The document memory's id (for the document memory itself: its own id). */
  documentId: string;
  /** 0 for the document memory, 1.. for its parts in reading order. */
  part: number;
}

/** Most parts (pages or sections) one document is split into. */
export const MAX_DOCUMENT_PARTS = 1000;

export function documentPartId(documentId: string, part: number): string {
  return `${documentId}:p${String(part).padStart(4, '0')}`;
}

/**
 * The place of a memory in a document (undefined for other memories): a part names its document and number;
 * a document memory with `parts >= 1` is part 0 of itself.
 */
export function documentPartOf(record: MemoryRecord): DocumentPartFacts | undefined {
  // Not by kind: a PDF uploaded as a note (HTTP, MCP, the library) is split into parts all the same.
  const document = record.metadata?.document;
  if (typeof document !== 'object' || document === null) return undefined;
  const { of, part, parts } = document as { of?: unknown; part?: unknown; parts?: unknown };
  if (typeof of === 'string' && of !== '' && Number.isInteger(part) && (part as number) >= 1) {
    return { documentId: of, part: part as number };
  }
  if (Number.isInteger(parts) && (parts as number) >= 1) return { documentId: record.id, part: 0 };
  return undefined;
}
