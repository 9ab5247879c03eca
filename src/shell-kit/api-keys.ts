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
