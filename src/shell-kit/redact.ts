/**
 * The one redaction pass applied where traces, errors and logs leave the process (HTTP bodies, MCP tool
 * results, CLI error output). It removes what a client must never see:
 * - userinfo in URLs (`https://user:pass@host` -> `https://[redacted]@host`) and secret query parameters;
 * - bearer tokens, `sk-...`-style API keys and any extra secret strings the caller names (configured keys);
 * - values under secret-looking keys (apiKey, authorization, password, token, secret, cookie);
 * - upstream response bodies: `bodyStart`/`body` fields, and the text a model endpoint error appends after
 *   "answered HTTP <status> (...)".
 * The value is copied, never mutated; non-plain objects (Dates, class instances) become their JSON form.
 */
export function redact<T>(value: T, options: RedactOptions = {}): T {
  const secrets = [...knownSecrets, ...(options.secrets ?? [])].filter((s) => s.length >= 4);
  return walk(value, secrets, 0) as T;
}

export interface RedactOptions {
  /** Literal secrets to blank wherever they appear (server API keys, model API keys). */
  secrets?: readonly string[];
}

const knownSecrets = new Set<string>();

/** Registers secrets (model API keys from the config, server keys) blanked by every later redaction. */
export function addRedactedSecrets(secrets: readonly (string | undefined)[]): void {
  for (const secret of secrets) if (secret !== undefined && secret.length >= 4) knownSecrets.add(secret);
}

export const REDACTED = '[redacted]';
export const WITHHELD = '[upstream body withheld]';

const SECRET_KEY =
  /^(?:api[-_]?key|apikey|authorization|password|passwd|secret|token|access[-_]?token|cookie|set-cookie|x-api-key)$/i;
const BODY_KEY = /^(?:body|bodyStart|responseBody|upstreamBody)$/;
const MAX_DEPTH = 64;

function walk(value: unknown, secrets: readonly string[], depth: number): unknown {
  if (typeof value === 'string') return redactText(value, secrets);
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => walk(item, secrets, depth + 1));
  if (value instanceof Error) {
    return { name: value.name, message: redactText(value.message, secrets) };
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) {
    const json = (value as { toJSON?: () => unknown }).toJSON;
    return typeof json === 'function' ? walk(json.call(value), secrets, depth + 1) : value;
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (SECRET_KEY.test(key) && item !== undefined && item !== null) out[key] = REDACTED;
    else if (BODY_KEY.test(key) && typeof item === 'string') out[key] = WITHHELD;
    else out[key] = walk(item, secrets, depth + 1);
  }
  return out;
}

/**
 * The user-info of a URL: a run of scheme characters, "://", then up to an '@'. A scheme starts at the run's
 * first letter (`[a-z][a-z0-9+.-]*://`); the run is entered at its first character only (the lookbehind) and
 * the letter checked after, because starting the pattern at every letter rescanned a long word to its end for
 * each (a 16 KB path in a 404 message: 0.8 s of the event loop). Same replacements as that pattern.
 */
const USERINFO = /(?<![a-z0-9+.-])([a-z0-9+.-]*):\/\/[^\s/?#@"'<>]+@/gi;

/** Redacts one string (messages, URLs, log lines). */
export function redactText(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of [...knownSecrets, ...secrets]) {
    if (secret.length >= 4) out = out.split(secret).join(REDACTED);
  }
  return withholdUpstreamBody(
    out
      // scheme://user:pass@host and scheme://token@host
      .replace(USERINFO, (whole, run: string) => (/[a-z]/i.test(run) ? `${run}://${REDACTED}@` : whole))
      // secret query parameters
      .replace(
        /([?&;](?:api[-_]?key|apikey|key|token|access[-_]?token|secret|password|passwd|sig|signature|auth)=)[^&#\s"'<>]*/gi,
        `$1${REDACTED}`,
      )
      .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{4,}/gi, `$1 ${REDACTED}`)
      .replace(/\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}/g, REDACTED),
  );
}

const UPSTREAM = 'answered HTTP ';

/**
 * The model client appends the upstream error text after "answered HTTP <status>[ (<model> at <url>)]:"; all of
 * it after the first such prefix is withheld. What `/(answered HTTP \d{3}(?: \([^)]*\))?):[\s\S]*$/` did, in
 * one pass: that pattern searched for the ')' again from every prefix, so text holding many prefixes and no ')'
 * (a memory in an MCP result) cost O(n^2).
 */
function withholdUpstreamBody(text: string): string {
  // The first ')' at or after a position (as `[^)]*\)`), found once for all prefixes before it; Infinity: none.
  let close = -1;
  for (let at = text.indexOf(UPSTREAM); at >= 0; at = text.indexOf(UPSTREAM, at + 1)) {
    const digits = at + UPSTREAM.length + 3;
    if (!/^\d{3}$/.test(text.slice(digits - 3, digits))) continue;
    let end = -1;
    if (text.startsWith(' (', digits)) {
      if (close < digits + 2) {
        const found = text.indexOf(')', digits + 2);
        close = found < 0 ? Number.POSITIVE_INFINITY : found;
      }
      if (close !== Number.POSITIVE_INFINITY && text[close + 1] === ':') end = close + 1;
    }
    if (end < 0 && text[digits] === ':') end = digits;
    if (end >= 0) return `${text.slice(0, end)}: ${WITHHELD}`;
  }
  return text;
}
