import { GraphmemixError } from '../errors/graphmemix-error.ts';

/** A bearer key and the user ids it may touch (`*`: every user). */
export interface ApiKeyGrant {
  key: string;
  users: '*' | readonly string[];
}

export interface ParsedApiKeys {
  grants: ApiKeyGrant[];
  /** How many entries were bare keys (the old form): they grant every user and deserve a warning. */
  bareKeys: number;
}

const USER_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

/**
 * Parses key entries as written in GRAPHMEMIX_API_KEYS: `key=alice`, `key=bob|carol`, `key=*`, or a bare
 * `key` (every user, kept for compatibility). The split is at the LAST `=` so base64 keys ending in `=`
 * still work in the key=users form; an entry whose text after the last `=` is empty is a bare key. Keys
 * that contain `=` must therefore be written with their users. Grants given as objects pass through.
 */
export function parseApiKeys(entries: readonly (string | ApiKeyGrant)[]): ParsedApiKeys {
  const grants: ApiKeyGrant[] = [];
  let bareKeys = 0;
  for (const entry of entries) {
    if (typeof entry !== 'string') {
      if (entry.key.trim() === '') continue;
      grants.push(checkGrant(entry));
      continue;
    }
    const text = entry.trim();
    if (text === '') continue;
    const at = text.lastIndexOf('=');
    const users = at < 0 ? '' : text.slice(at + 1).trim();
    if (at <= 0 || users === '') {
      bareKeys += 1;
      grants.push({ key: text, users: '*' });
      continue;
    }
    const list = users.split('|').map((user) => user.trim());
    grants.push(checkGrant({ key: text.slice(0, at).trim(), users: list.includes('*') ? '*' : list }));
  }
  return { grants, bareKeys };
}

/** Entries of GRAPHMEMIX_API_KEYS (comma-separated), unparsed. */
export function apiKeyEntriesFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.GRAPHMEMIX_API_KEYS ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter(Boolean);
}

/** The warning the shells print at start when bare keys are configured. */
export function bareKeyWarning(count: number): string | undefined {
  return count === 0
    ? undefined
    : `warning: ${count} API key(s) without users grant access to EVERY user; bind them with key=alice|bob (or key=* to keep all)`;
}

/**
 * Keys shorter than this are refused on a listener other clients can reach, and warned about on loopback:
 * nothing limits how fast a client may try keys (every failure is one cheap 401), so a short key is found by
 * trying. 16 characters of a random base64 or hex key are 64-96 bits.
 */
export const MIN_NETWORK_KEY_CHARS = 16;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1']);

/** True for the interfaces only this machine reaches. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host);
}

/** How many keys are shorter than MIN_NETWORK_KEY_CHARS. */
export function shortKeyCount(entries: readonly (string | ApiKeyGrant)[]): number {
  return parseApiKeys(entries).grants.filter((grant) => grant.key.length < MIN_NETWORK_KEY_CHARS).length;
}

/**
 * Refuses (CONFIG) short keys on a host other machines reach; on loopback returns the warning to print (or
 * undefined). The count only: a key never appears in a message.
 */
export function checkKeyLengths(
  entries: readonly (string | ApiKeyGrant)[],
  host: string,
): string | undefined {
  const short = shortKeyCount(entries);
  if (short === 0) return undefined;
  const what = `${short} API key(s) shorter than ${MIN_NETWORK_KEY_CHARS} characters`;
  if (!isLoopbackHost(host)) {
    throw new GraphmemixError(
      'CONFIG',
      `${what}: refused on ${host}, which other machines reach (a short key is found by trying keys); use long random keys, e.g. \`openssl rand -hex 24\``,
      { location: { field: 'GRAPHMEMIX_API_KEYS' } },
    );
  }
  return `warning: ${what}; fine on loopback, refused on any other interface`;
}

/**
 * What a listening shell (`serve`, `mcp --http`) checks of its keys before it opens anything: keys are given
 * unless open mode (CONFIG), none is short on a host other machines reach (CONFIG); returns the warnings to
 * print (bare keys; short keys on loopback).
 */
export function checkListenKeys(
  entries: readonly (string | ApiKeyGrant)[],
  options: { host: string; open: boolean },
): string[] {
  if (options.open) return [];
  const { grants, bareKeys } = parseApiKeys(entries);
  if (grants.length === 0) {
    throw new GraphmemixError(
      'CONFIG',
      'API keys are required: set GRAPHMEMIX_API_KEYS (key=user|user,...) or start in open local mode (--open)',
    );
  }
  return [bareKeyWarning(bareKeys), checkKeyLengths(grants, options.host)].filter(
    (warning): warning is string => warning !== undefined,
  );
}

function checkGrant(grant: ApiKeyGrant): ApiKeyGrant {
  if (grant.key.trim().length < 1) throw new GraphmemixError('CONFIG', 'an API key entry has an empty key');
  if (grant.users !== '*') {
    if (grant.users.length === 0) throw new GraphmemixError('CONFIG', 'an API key grants no users');
    for (const user of grant.users) {
      if (user !== '*' && !USER_ID.test(user)) {
        throw new GraphmemixError('CONFIG', `API key entry names an invalid user id "${user}"`, {
          location: { field: 'GRAPHMEMIX_API_KEYS' },
        });
      }
    }
  }
  return grant;
}
