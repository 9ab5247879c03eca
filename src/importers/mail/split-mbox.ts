import { createReadStream } from 'node:fs';

/** One message cut out of an mbox file. */
export interface MboxMessage {
  /** 1-based position of the message in the file. */
  index: number;
  /** 1-based line number of its "From " separator line. */
  line: number;
  /** The message bytes (headers + body), separator removed and ">From " lines unescaped. */
  raw: Buffer;
}

const NEWLINE = 0x0a;
const FROM_ = Buffer.from('From ', 'latin1');
const LF = Buffer.from('\n', 'latin1');

/**
 * Streams the messages of an mbox file without loading the whole file (mailboxes reach gigabytes).
 * Works on bytes, not decoded text, so 8-bit bodies in any charset reach the MIME parser untouched.
 *
 * Rules (mboxrd, read leniently so mboxo/mboxcl files also split):
 * - a message starts at a line beginning with "From " that is the first line of the file, or that follows
 *   an empty line and carries the envelope's asctime date ("From sender Sat Apr 20 07:00:00 2024"); any
 *   other "From " line is body text (mboxo writers leave some unescaped), not a separator;
 * - the empty line before a separator belongs to the separator, not to the previous message;
 * - ">From ", ">>From ", ... lines lose one '>' (mboxrd unescaping; for mboxo files this also restores
 *   the original ">From " lines that writers escaped);
 * - non-blank bytes before the first separator are not a message: they come first, as index 0, so the
 *   caller can report them.
 */
export async function* splitMbox(file: string): AsyncGenerator<MboxMessage> {
  let lines: Buffer[] = [];
  let current: { index: number; line: number } | undefined;
  let leading: Buffer[] = [];
  let previousBlank = true;
  let lineNumber = 0;
  let count = 0;

  const finish = (): MboxMessage | undefined => {
    if (!current) return undefined;
    // Drop the blank separator line(s) that precede the next "From " line.
    while (lines.length > 0 && isBlank(lines[lines.length - 1]!)) lines.pop();
    const message = { index: current.index, line: current.line, raw: joinLines(lines) };
    lines = [];
    return message;
  };

  for await (const line of byteLines(file)) {
    lineNumber += 1;
    if (previousBlank && isSeparator(line, lineNumber === 1)) {
      const done = finish();
      if (done) yield done;
      if (!current && leading.some((text) => !isBlank(text)))
        yield { index: 0, line: 1, raw: joinLines(leading) };
      leading = [];
      count += 1;
      current = { index: count, line: lineNumber };
      previousBlank = false;
      continue;
    }
    previousBlank = isBlank(line);
    if (current) lines.push(unescapeFrom(line));
    else leading.push(line);
  }
  const last = finish();
  if (last) yield last;
  if (!current && leading.some((line) => !isBlank(line)))
    yield { index: 0, line: 1, raw: joinLines(leading) };
}

/** True when the bytes look like an mbox file (first line is a "From " separator). */
export function looksLikeMbox(head: Buffer): boolean {
  return startsWith(head, FROM_);
}

/** Lines without their '\n' (a '\r' before it is kept: the MIME parser handles CRLF itself). */
async function* byteLines(file: string): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let start = 0;
    let newline = chunk.indexOf(NEWLINE, start);
    while (newline !== -1) {
      const piece = chunk.subarray(start, newline);
      if (pending.length > 0) {
        pending.push(piece);
        yield Buffer.concat(pending);
        pending = [];
      } else {
        yield piece;
      }
      start = newline + 1;
      newline = chunk.indexOf(NEWLINE, start);
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  if (pending.length > 0) yield Buffer.concat(pending);
}

/** The part of a "From " line searched for its date ("From a@b.example Mon Jan  1 10:00:00 2024"). */
const ENVELOPE_HEAD_BYTES = 1024;
/** Envelope date: weekday, month, then a four-digit year later on the line (asctime, any zone form). */
const ENVELOPE_DATE =
  /\s(Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s+(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s.*\b\d{4}\b/;

function isSeparator(line: Buffer, firstLine: boolean): boolean {
  if (!startsWith(line, FROM_)) return false;
  // An envelope line is short; the pattern's `.*` backtracks per weekday-month pair, so only its head is read.
  return firstLine || ENVELOPE_DATE.test(line.subarray(0, ENVELOPE_HEAD_BYTES).toString('latin1'));
}

function unescapeFrom(line: Buffer): Buffer {
  let quotes = 0;
  while (quotes < line.length && line[quotes] === 0x3e /* '>' */) quotes += 1;
  if (quotes === 0) return line;
  return startsWith(line.subarray(quotes), FROM_) ? line.subarray(1) : line;
}

function joinLines(lines: Buffer[]): Buffer {
  const parts: Buffer[] = [];
  for (const line of lines) parts.push(line, LF);
  return Buffer.concat(parts);
}

function startsWith(line: Buffer, prefix: Buffer): boolean {
  return line.length >= prefix.length && line.subarray(0, prefix.length).equals(prefix);
}

function isBlank(line: Buffer): boolean {
  for (const byte of line) if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  return true;
}
