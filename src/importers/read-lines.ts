import { createReadStream } from 'node:fs';

/** One line of a text file, numbered from 1, without its line terminator. */
export type LineItem =
  | { line: number; text: string; tooLong?: false }
  /** The line was longer than `maxLineBytes`; its content was discarded without buffering it. */
  | { line: number; tooLong: true; bytes: number };

/** 256 MiB: far above any sane record, low enough that one runaway line cannot exhaust memory. */
export const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024;

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * Streams a (possibly huge) text file line by line with line numbers. Splits on bytes, so a multi-byte
 * UTF-8 character cut by a chunk boundary is decoded whole; strips a UTF-8 BOM and CRLF endings.
 * A line over `maxLineBytes` is reported as `tooLong` and skipped, and the lines after it keep flowing.
 */
export async function* readLines(
  file: string,
  options: { maxLineBytes?: number } = {},
): AsyncGenerator<LineItem> {
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  let parts: Buffer[] = [];
  let partBytes = 0;
  let overflowBytes = 0;
  let lineNumber = 1;

  const finishLine = (): LineItem => {
    const item: LineItem =
      overflowBytes > 0
        ? { line: lineNumber, tooLong: true, bytes: overflowBytes }
        : { line: lineNumber, text: decodeLine(Buffer.concat(parts, partBytes), lineNumber === 1) };
    parts = [];
    partBytes = 0;
    overflowBytes = 0;
    lineNumber += 1;
    return item;
  };

  const append = (piece: Buffer): void => {
    if (piece.length === 0) return;
    if (overflowBytes > 0) {
      overflowBytes += piece.length;
    } else if (partBytes + piece.length > maxLineBytes) {
      overflowBytes = partBytes + piece.length;
      parts = [];
      partBytes = 0;
    } else {
      parts.push(piece);
      partBytes += piece.length;
    }
  };

  for await (const chunk of createReadStream(file)) {
    const buffer = chunk as Buffer;
    let start = 0;
    for (let index = buffer.indexOf(NEWLINE, start); index !== -1; index = buffer.indexOf(NEWLINE, start)) {
      append(buffer.subarray(start, index));
      yield finishLine();
      start = index + 1;
    }
    // Copy the tail: the stream may reuse its chunk buffers.
    append(Buffer.from(buffer.subarray(start)));
  }
  if (partBytes > 0 || overflowBytes > 0) yield finishLine();
}

function decodeLine(bytes: Buffer, first: boolean): string {
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] === CARRIAGE_RETURN) end -= 1;
  let start = 0;
  if (first && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
  return bytes.toString('utf8', start, end);
}
