/**
 * Header value helpers of the mail importer. Message-IDs are normalised the same way wherever they appear
 * (Message-ID, In-Reply-To, References), so the `same_record` relation can compare them as plain strings.
 */

/** "<ABC.123@Example.COM>" -> "abc.123@example.com": no brackets, no whitespace, lower case. */
export function normalizeMessageId(value: string): string | undefined {
  const inner = /<([^<>]*)>/.exec(value)?.[1] ?? value;
  const id = inner.replace(/\s+/g, '').toLowerCase();
  return id === '' ? undefined : id;
}

/** A References / In-Reply-To value (string or list, as mailparser gives it) -> normalised ids, in order. */
export function parseMessageIdList(value: unknown): string[] {
  const parts = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  // A set: a References header of a million ids made the list's `includes` quadratic.
  const ids = new Set<string>();
  for (const part of parts) {
    if (typeof part !== 'string') continue;
    const bracketed = part.match(/<[^<>]*>/g);
    const tokens = bracketed ?? part.split(/[\s,]+/);
    for (const token of tokens) {
      const id = normalizeMessageId(token);
      if (id !== undefined) ids.add(id);
    }
  }
  return [...ids];
}

/**
 * A raw RFC 5322 Date header -> ISO 8601 in the sender's own offset ("2024-04-09T17:42:00+01:00"), or
 * UTC ("...Z") when the zone is a name (GMT, UT, EST) or missing. Undefined when the date does not parse.
 * We parse the raw header ourselves: mailparser replaces an unparseable Date with the current time.
 */
export function parseMailDate(raw: string): string | undefined {
  const value = withoutComments(raw).replace(/\s+/g, ' ').trim();
  if (value === '') return undefined;
  const time = Date.parse(value);
  if (Number.isNaN(time)) return undefined;
  const offset = /\s([+-])(\d{2})(\d{2})$/.exec(value);
  if (!offset) return new Date(time).toISOString().replace('.000Z', 'Z');
  const sign = offset[1] === '-' ? -1 : 1;
  const minutes = sign * (Number(offset[2]) * 60 + Number(offset[3]));
  if (Math.abs(minutes) > 14 * 60) return new Date(time).toISOString().replace('.000Z', 'Z');
  const local = new Date(time + minutes * 60_000).toISOString().slice(0, 19);
  return `${local}${offset[1]}${offset[2]}:${offset[3]}`;
}

/**
 * The header without its "(comments)", each replaced by a space: what `/\([^)]*\)/g` did, in one pass (that
 * pattern rescans to the end from every "(" without a ")": 100k of them held the event loop 20 s).
 */
function withoutComments(value: string): string {
  let out = '';
  let from = 0;
  for (;;) {
    const open = value.indexOf('(', from);
    const close = open < 0 ? -1 : value.indexOf(')', open + 1);
    if (close < 0) return out + value.slice(from);
    out += `${value.slice(from, open)} `;
    from = close + 1;
  }
}
