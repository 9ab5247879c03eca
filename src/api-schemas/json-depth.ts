import { GraphmemixError } from '../errors/graphmemix-error.ts';

/**
 * Deepest nesting of arrays and objects a request's JSON may have. The deepest input a schema accepts is a
 * record's metadata (RECORD_LIMITS.maxMetadataDepth, 32 levels) inside a body or a JSON-RPC envelope (~6
 * more), so this leaves room for the record check to name the field of a merely deep record. Without it a
 * 16 MiB body of nested `[` kept `JSON.parse` on the event loop ~3 s before any bound was checked (round 52
 * audit: three such bodies from one key put `/v1/health` at 4.8 s).
 */
export const MAX_JSON_DEPTH = 64;

/**
 * TOO_LARGE when `text` nests arrays/objects deeper than `max`, found by one pass over the characters
 * (strings and their escapes skipped) before anything parses it: a hostile body is refused after reading
 * `max` brackets, a well-formed one costs a scan of its structural characters.
 */
export function assertJsonDepth(text: string, max: number = MAX_JSON_DEPTH, field?: string): void {
  // Jumps from one structural character to the next (native regex and indexOf, not a loop per character:
  // a 14 MiB body of text-heavy records 45-80 -> a few ms).
  const structural = /["[\]{}]/g;
  let depth = 0;
  for (let match = structural.exec(text); match !== null; match = structural.exec(text)) {
    const char = match[0];
    if (char === '"') {
      structural.lastIndex = stringEnd(text, match.index + 1);
      if (structural.lastIndex === 0) return; // unterminated: JSON.parse reports it
    } else if (char === '[' || char === '{') {
      if (++depth > max) {
        throw new GraphmemixError('TOO_LARGE', `JSON nested deeper than ${max} levels`, {
          ...(field === undefined ? {} : { location: { field } }),
        });
      }
    } else depth--;
  }
}

/** Index just past the quote that closes the string starting at `from`; 0 when it never closes. */
function stringEnd(text: string, from: number): number {
  for (let quote = text.indexOf('"', from); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
  }
  return 0;
}

/** `JSON.parse` of request text after the depth bound; malformed JSON is INVALID_INPUT with `what` named. */
export function parseRequestJson(text: string, what: string, max: number = MAX_JSON_DEPTH): unknown {
  assertJsonDepth(text, max);
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw new GraphmemixError('INVALID_INPUT', `${what} is not valid JSON`);
  }
  assertNoProtoKeys(value);
  return value;
}

/** Objects walked for `__proto__` keys at most (past it the request's value bound refuses the input anyway). */
const PROTO_WALK_LIMIT = 1_000_000;

/**
 * INVALID_INPUT when parsed request JSON has a `__proto__` key anywhere. `JSON.parse` makes it an own key,
 * which the schemas then drop without a word: a metadata filter of only that key matched every memory, a
 * record's such key vanished. Refused by name instead, before any schema sees the value.
 */
export function assertNoProtoKeys(value: unknown): void {
  const stack: unknown[] = [value];
  for (let walked = 0; stack.length > 0 && walked < PROTO_WALK_LIMIT; walked++) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (const item of node) if (item !== null && typeof item === 'object') stack.push(item);
      continue;
    }
    if (Object.hasOwn(node, '__proto__')) {
      throw new GraphmemixError('INVALID_INPUT', 'the key "__proto__" is not allowed in request JSON');
    }
    for (const child of Object.values(node))
      if (child !== null && typeof child === 'object') stack.push(child);
  }
}
