import { createHash } from 'node:crypto';
import { open, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import type { AddressObject, Attachment, ParsedMail } from 'mailparser';
import type { EmailMetadata } from '../types/email-metadata.ts';
import type { MediaAsset, MemoryRecord } from '../types/memory-record.ts';
import { findFiles, hasExtension } from './find-files.ts';
import { rejectItem, SequenceCounter, warningItem } from './import-items.ts';
import type { Importer, ImportItem, ImportOptions } from './importer-spec.ts';
import { normalizeMessageId, parseMailDate, parseMessageIdList } from './mail/mail-fields.ts';
import { looksLikeMbox, splitMbox } from './mail/split-mbox.ts';
import { loadOptionalPackage } from './optional-package.ts';

/** Context used when the caller names none. */
export const DEFAULT_MAIL_CONTEXT_ID = 'default';

const MAIL_EXTENSIONS: readonly string[] = ['.eml', '.mbox'];

/** Headers of which at least one must be present for a text to count as a mail message. */
const MAIL_HEADERS = ['from', 'to', 'date', 'subject', 'message-id'];

/**
 * Imports `.eml` files and `.mbox` mailboxes (a folder searched recursively, or one file) as kind 'email'
 * records, one per message.
 *
 * - id: the normalised Message-ID (`normalizeMessageId`: no brackets, lower case); without one,
 *   `mail-sha256:<first 24 hex of the raw message's sha256>`.
 * - sessionId: the thread root: first References id, else In-Reply-To, else the message's own id.
 * - timestamp: the Date header in the sender's offset (unparseable -> warning, no timestamp).
 * - speaker: the From display name, else its address.
 * - text: "Subject: <subject>\n\n<plain body>" (HTML-only mail converted to text by mailparser).
 * - metadata.email: {messageId, inReplyTo, references, subject, from, to} (EmailMetadata, ids normalised,
 *   addresses lower case); metadata.attachments lists every attachment {filename, mime, size, sha256}.
 * - image attachments: importers never write files, so an image becomes an asset only when the same bytes
 *   are already on disk next to the message file (same file name, same sha256); otherwise it is skipped
 *   with a warning (still listed in metadata.attachments).
 * Bad input: a message without any mail header, text before the first "From " line of an mbox, or a
 * message the MIME parser refuses is rejected (INVALID_INPUT naming file, line and message index); the
 * other messages are kept. A second copy of an already imported message (same id, same text) is skipped
 * with a warning.
 */
export function createMailImporter(): Importer {
  return {
    format: 'mail',
    read(path: string, options: ImportOptions): AsyncIterable<ImportItem> {
      return readMail(path, options);
    },
  };
}

/** Where one raw message came from. `index` is 1-based within an mbox, absent for an .eml file. */
interface RawMessage {
  file: string;
  sourceId: string;
  raw: Buffer;
  line?: number;
  index?: number;
}

async function* readMail(path: string, options: ImportOptions): AsyncGenerator<ImportItem> {
  const files = await findFiles(path, (name) => hasExtension(name, MAIL_EXTENSIONS));
  const root = (await stat(resolve(path))).isDirectory() ? resolve(path) : dirname(resolve(path));
  const contextId = options.contextId ?? DEFAULT_MAIL_CONTEXT_ID;
  const sequences = new SequenceCounter();
  const seen = new Map<string, string>();

  for (const file of files) {
    const sourceId = (relative(root, file) || basename(file)).split(sep).join('/');
    for await (const message of messagesOf(file, sourceId)) {
      if ('reject' in message) {
        yield message.reject;
        continue;
      }
      yield* toItems(message, contextId, sequences, seen);
    }
  }
}

async function* messagesOf(
  file: string,
  sourceId: string,
): AsyncGenerator<RawMessage | { reject: ImportItem }> {
  if (!(await isMbox(file))) {
    yield { file, sourceId, raw: await readFile(file) };
    return;
  }
  for await (const part of splitMbox(file)) {
    if (part.index === 0) {
      const text = 'text before the first "From " line is not a message (is this an mbox file?)';
      yield { reject: rejectItem(file, 'INVALID_INPUT', text, { line: part.line }) };
      continue;
    }
    yield { file, sourceId: `${sourceId}#${part.index}`, raw: part.raw, line: part.line, index: part.index };
  }
}

async function* toItems(
  message: RawMessage,
  contextId: string,
  sequences: SequenceCounter,
  seen: Map<string, string>,
): AsyncGenerator<ImportItem> {
  const where = message.index === undefined ? 'message' : `message ${message.index}`;
  const place = message.line === undefined ? {} : { line: message.line };
  const { simpleParser } = await loadOptionalPackage('mailparser', 'mail import');
  let parsed: ParsedMail;
  try {
    parsed = await simpleParser(message.raw, {
      keepCidLinks: true,
      skipImageLinks: true,
      skipTextLinks: true,
      skipTextToHtml: true,
    });
  } catch (error) {
    yield rejectItem(
      message.file,
      'INVALID_INPUT',
      `${where} could not be parsed: ${errorMessage(error)}`,
      place,
    );
    return;
  }
  const headerKeys = new Set(parsed.headerLines.map((header) => header.key.toLowerCase()));
  if (!MAIL_HEADERS.some((key) => headerKeys.has(key))) {
    const text = `${where} is malformed: no mail headers (From, To, Date, Subject or Message-ID)`;
    yield rejectItem(message.file, 'INVALID_INPUT', text, place);
    return;
  }

  const messageId = parsed.messageId === undefined ? undefined : normalizeMessageId(parsed.messageId);
  const id =
    messageId ?? `mail-sha256:${createHash('sha256').update(message.raw).digest('hex').slice(0, 24)}`;
  const at = { ...place, recordId: id };
  const references = parseMessageIdList(parsed.references);
  const inReplyTo = parseMessageIdList(parsed.inReplyTo)[0];
  const subject = (parsed.subject ?? '').trim();
  const body = (parsed.text ?? '').trimEnd();
  const text = `Subject: ${subject}\n\n${body}`;

  const previous = seen.get(id);
  if (previous !== undefined && previous === text) {
    yield warningItem(message.file, `${where} is another copy of message ${id}; skipped`, at);
    return;
  }
  seen.set(id, text);

  if (parsed.textConversionError) {
    const reason = errorMessage(parsed.textConversionError);
    yield warningItem(message.file, `${where}: HTML body could not be converted to text: ${reason}`, at);
  }

  const email: EmailMetadata = { references, subject };
  if (messageId !== undefined) email.messageId = messageId;
  if (inReplyTo !== undefined) email.inReplyTo = inReplyTo;
  const from = firstAddress(parsed.from);
  if (from?.address !== undefined) email.from = from.address;
  email.to = addressesOf(parsed.to);

  const record: MemoryRecord = {
    id,
    contextId,
    kind: 'email',
    sequence: sequences.next(contextId),
    sessionId: references[0] ?? inReplyTo ?? id,
    sourceId: message.sourceId,
    text,
    assets: [],
    metadata: { email },
  };
  const speaker = from?.name ?? from?.address;
  if (speaker !== undefined) record.speaker = speaker;

  const dateHeader = parsed.headerLines.find((header) => header.key.toLowerCase() === 'date');
  if (dateHeader) {
    const timestamp = parseMailDate(dateHeader.line.replace(/^[^:]*:/, ''));
    if (timestamp !== undefined) record.timestamp = timestamp;
    else yield warningItem(message.file, `${where}: Date header does not parse; kept without timestamp`, at);
  }

  if (parsed.attachments.length > 0) {
    const listed: Record<string, unknown>[] = [];
    for (const [index, attachment] of parsed.attachments.entries()) {
      const sha256 = createHash('sha256').update(attachment.content).digest('hex');
      listed.push(compactEntry(attachment, sha256));
      if (!attachment.contentType.startsWith('image/')) continue;
      const asset = await assetOnDisk(message.file, attachment, sha256, `attachment-${index + 1}`);
      if (asset) {
        record.assets.push(asset);
      } else {
        const name = attachment.filename ?? `attachment ${index + 1}`;
        const text = `${where}: image attachment "${name}" is not on disk next to the mail file; skipped`;
        yield warningItem(message.file, text, at);
      }
    }
    record.metadata = { ...record.metadata, attachments: listed };
  }

  yield { type: 'record', record, source: { file: message.file, ...at } };
}

/** The attachment as a file next to the message (same name, same bytes), or undefined. */
async function assetOnDisk(
  mailFile: string,
  attachment: Attachment,
  sha256: string,
  id: string,
): Promise<MediaAsset | undefined> {
  const name = attachment.filename;
  // Only a plain file name: an attachment must not point the importer at other folders ("../../x").
  if (name === undefined || name !== basename(name) || name === '.' || name === '..') return undefined;
  const candidate = join(dirname(mailFile), name);
  try {
    const bytes = await readFile(candidate);
    if (createHash('sha256').update(bytes).digest('hex') !== sha256) return undefined;
  } catch {
    return undefined;
  }
  return { id, kind: 'image', uri: candidate, mime: attachment.contentType, sha256 };
}

function compactEntry(attachment: Attachment, sha256: string): Record<string, unknown> {
  const entry: Record<string, unknown> = { mime: attachment.contentType, size: attachment.size, sha256 };
  if (attachment.filename !== undefined) entry.filename = attachment.filename;
  return entry;
}

function firstAddress(value: AddressObject | undefined): { name?: string; address?: string } | undefined {
  const first = value?.value[0];
  if (!first) return undefined;
  const out: { name?: string; address?: string } = {};
  if (first.name.trim() !== '') out.name = first.name.trim();
  if (first.address !== undefined && first.address !== '') out.address = first.address.toLowerCase();
  return out;
}

function addressesOf(value: AddressObject | AddressObject[] | undefined): string[] {
  const objects = value === undefined ? [] : Array.isArray(value) ? value : [value];
  // A set in first-seen order: a To header of 80k addresses made a list's `includes` take 7.7 s.
  const out = new Set<string>();
  for (const object of objects) {
    for (const entry of object.value) {
      // Groups ("Team: a@x, b@y;") nest their members.
      const members = entry.group ?? [entry];
      for (const member of members) {
        const address = member.address?.toLowerCase();
        if (address !== undefined && address !== '') out.add(address);
      }
    }
  }
  return [...out];
}

/** An .mbox by extension, or any file whose first line is a "From " separator. */
async function isMbox(file: string): Promise<boolean> {
  if (hasExtension(file, ['.mbox'])) return true;
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(5);
    const { bytesRead } = await handle.read(head, 0, 5, 0);
    return looksLikeMbox(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
