/** One generated mail message. Deterministic: no boundaries or ids are random. */
export interface GeneratedMailSpec {
  /** Without angle brackets. */
  messageId?: string;
  /** ISO 8601 with offset ("2024-04-09T17:42:00+01:00"), written as an RFC 5322 Date header. */
  date?: string;
  from: { name?: string; address: string };
  to: { name?: string; address: string }[];
  subject: string;
  inReplyTo?: string;
  references?: string[];
  /** Plain body. With `html` too, the message is multipart/alternative. */
  text?: string;
  html?: string;
  attachments?: { filename: string; contentType: string; content: Buffer }[];
}

const CRLF = '\r\n';
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** RFC 5322 message text (CRLF line ends, UTF-8 bodies in base64, non-ASCII headers RFC 2047-encoded). */
export function formatEml(spec: GeneratedMailSpec): string {
  const headers: string[] = [];
  if (spec.date !== undefined) headers.push(`Date: ${rfc5322Date(spec.date)}`);
  headers.push(`From: ${formatAddress(spec.from)}`);
  headers.push(`To: ${spec.to.map(formatAddress).join(', ')}`);
  headers.push(`Subject: ${encodeHeaderWord(spec.subject)}`);
  if (spec.messageId !== undefined) headers.push(`Message-ID: <${spec.messageId}>`);
  if (spec.inReplyTo !== undefined) headers.push(`In-Reply-To: <${spec.inReplyTo}>`);
  if (spec.references && spec.references.length > 0) {
    headers.push(`References: ${spec.references.map((id) => `<${id}>`).join(`${CRLF} `)}`);
  }
  headers.push('MIME-Version: 1.0');

  const seed = spec.messageId ?? spec.subject;
  let body = bodyPart(spec);
  if (spec.attachments && spec.attachments.length > 0) {
    const boundary = `=_mixed_${boundaryToken(seed)}`;
    const parts = [body, ...spec.attachments.map(attachmentPart)];
    body = multipart('mixed', boundary, parts);
  }
  return `${headers.join(CRLF)}${CRLF}${body}`;
}

/** "2024-04-09T17:42:00+01:00" -> "Tue, 09 Apr 2024 17:42:00 +0100" (no time zone of the process involved). */
export function rfc5322Date(iso: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(Z|[+-]\d{2}:\d{2})$/.exec(iso);
  if (!match) throw new Error(`example mail date must be ISO with offset, got ${iso}`);
  const [, year, month, day, hour, minute, second, zone] = match;
  const weekday = WEEKDAYS[new Date(Date.UTC(Number(year), Number(month) - 1, Number(day))).getUTCDay()];
  const offset = zone === 'Z' ? '+0000' : zone!.replace(':', '');
  return `${weekday}, ${day} ${MONTHS[Number(month) - 1]} ${year} ${hour}:${minute}:${second} ${offset}`;
}

function bodyPart(spec: GeneratedMailSpec): string {
  const text = spec.text === undefined ? undefined : textPart('text/plain', spec.text);
  const html = spec.html === undefined ? undefined : textPart('text/html', spec.html);
  if (text && html) {
    return multipart('alternative', `=_alt_${boundaryToken(spec.messageId ?? spec.subject)}`, [text, html]);
  }
  return text ?? html ?? textPart('text/plain', '');
}

/** A MIME entity: its own header lines, a blank line, the content. */
function textPart(type: string, content: string): string {
  return [
    `Content-Type: ${type}; charset=utf-8`,
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines(Buffer.from(content.replace(/\r?\n/g, CRLF), 'utf8')),
  ].join(CRLF);
}

function attachmentPart(attachment: { filename: string; contentType: string; content: Buffer }): string {
  return [
    `Content-Type: ${attachment.contentType}; name="${attachment.filename}"`,
    `Content-Disposition: attachment; filename="${attachment.filename}"`,
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines(attachment.content),
  ].join(CRLF);
}

function multipart(kind: string, boundary: string, parts: string[]): string {
  const lines = [`Content-Type: multipart/${kind}; boundary="${boundary}"`, ''];
  for (const part of parts) lines.push(`--${boundary}`, part);
  lines.push(`--${boundary}--`, '');
  return lines.join(CRLF);
}

function base64Lines(bytes: Buffer): string {
  const encoded = bytes.toString('base64');
  const lines: string[] = [];
  for (let start = 0; start < encoded.length; start += 76) lines.push(encoded.slice(start, start + 76));
  return lines.join(CRLF);
}

function formatAddress(person: { name?: string; address: string }): string {
  return person.name === undefined ? person.address : `${encodeHeaderWord(person.name)} <${person.address}>`;
}

/** RFC 2047 B-encoding for non-ASCII header text; plain ASCII is written as is. */
function encodeHeaderWord(text: string): string {
  return /^[\x20-\x7e]*$/.test(text) ? text : `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`;
}

/** A boundary derived from the message (deterministic, and distinct per message). */
function boundaryToken(seed: string): string {
  let hash = 2166136261;
  for (let i = 0; i < seed.length; i += 1) hash = Math.imul(hash ^ seed.charCodeAt(i), 16777619) >>> 0;
  return hash.toString(16).padStart(8, '0');
}
