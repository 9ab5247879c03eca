import type { ListenFlags } from '../api-schemas/route-schemas.ts';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { ServerLimitsConfig } from '../index.ts';
import type { ConnectionLimits } from './connection-guard.ts';
import { DEFAULT_MAX_BODY_BYTES } from './request-body-limit.ts';
import type { RequestBudgetOptions } from './request-budget.ts';

/** What a long-running shell passes on: body size and budget to the listener, the rest to the archive. */
export interface ServerLimits {
  maxBodyBytes?: number;
  budget: Omit<RequestBudgetOptions, 'maxBodyBytes'>;
  maxPendingWrites?: number;
  maxQueuedQuestions?: number;
  /** Open connections per client address and in all (HTTP listeners). */
  connections: ConnectionLimits;
}

/** Each flag and the config field it overrides (errors name the one the operator wrote). */
const FIELDS = [
  ['max_body_bytes', 'maxBodyBytes', '--max-body-bytes'],
  ['max_pending_writes', 'maxPendingWrites', '--max-pending-writes'],
  ['max_queued_questions', 'maxQueuedQuestions', '--max-queued-questions'],
  ['bytes_in_flight', 'bytesInFlight', '--bytes-in-flight'],
  ['key_bytes_in_flight', 'keyBytesInFlight', '--key-bytes-in-flight'],
  ['key_requests_in_flight', 'keyRequestsInFlight', '--key-requests-in-flight'],
  ['key_questions_in_flight', 'keyQuestionsInFlight', '--key-questions-in-flight'],
  ['key_bytes_per_second', 'keyBytesPerSecond', '--key-bytes-per-second'],
  ['max_connections', 'maxConnections', '--max-connections'],
  ['max_connections_per_address', 'maxConnectionsPerAddress', '--max-connections-per-address'],
] as const;

/** The flags that bound HTTP requests only (an MCP stdio session has one client and no bodies in flight). */
export const HTTP_ONLY_LIMIT_FLAGS = [
  'bytes_in_flight',
  'key_bytes_in_flight',
  'key_requests_in_flight',
  'key_questions_in_flight',
  'key_bytes_per_second',
  'max_connections',
  'max_connections_per_address',
] as const;

/**
 * The bounds of `serve` / `mcp`: each flag beats the config file's `limits` field, unset ones keep the
 * defaults of the code that applies them. Refuses (CONFIG, naming both settings) a combination under which
 * a valid request could never be admitted: a key's byte share, or the whole budget, below the largest body
 * (a body between the two would be answered BUSY forever). A key share above the budget is capped by it.
 */
export function resolveServerLimits(
  flags: Partial<ListenFlags>,
  config: ServerLimitsConfig = {},
): ServerLimits {
  const value = (flag: (typeof FIELDS)[number][0], field: (typeof FIELDS)[number][1]) =>
    flags[flag] ?? config[field];
  const source = (flag: (typeof FIELDS)[number][0]) => {
    const entry = FIELDS.find(([name]) => name === flag)!;
    return flags[flag] === undefined ? `limits.${entry[1]}` : entry[2];
  };
  const maxBodyBytes = value('max_body_bytes', 'maxBodyBytes');
  const totalBytes = value('bytes_in_flight', 'bytesInFlight');
  const perCallerBytes = value('key_bytes_in_flight', 'keyBytesInFlight');
  const perCallerRequests = value('key_requests_in_flight', 'keyRequestsInFlight');
  const perCallerQuestions = value('key_questions_in_flight', 'keyQuestionsInFlight');
  const perCallerBytesPerSecond = value('key_bytes_per_second', 'keyBytesPerSecond');
  const body = maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const bodyName = maxBodyBytes === undefined ? 'the default body limit' : source('max_body_bytes');
  // A body of the accepted size must fit what it is counted against (the defaults always do: the budget's are
  // multiples of the body limit, a key's share at most the whole budget).
  for (const [given, flag] of [
    [perCallerBytes, 'key_bytes_in_flight'],
    [totalBytes, 'bytes_in_flight'],
  ] as const) {
    if (given !== undefined && given < body) {
      throw limitError(
        `${source(flag)} (${given} bytes) is below ${bodyName} (${body} bytes): a body between the two would be refused as BUSY forever`,
        flag,
      );
    }
  }
  const maxPendingWrites = value('max_pending_writes', 'maxPendingWrites');
  const maxQueuedQuestions = value('max_queued_questions', 'maxQueuedQuestions');
  const total = value('max_connections', 'maxConnections');
  const perAddress = value('max_connections_per_address', 'maxConnectionsPerAddress');
  return {
    ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
    budget: {
      ...(totalBytes === undefined ? {} : { totalBytes }),
      ...(perCallerBytes === undefined ? {} : { perCallerBytes }),
      ...(perCallerRequests === undefined ? {} : { perCallerRequests }),
      ...(perCallerQuestions === undefined ? {} : { perCallerQuestions }),
      ...(perCallerBytesPerSecond === undefined ? {} : { perCallerBytesPerSecond }),
    },
    ...(maxPendingWrites === undefined ? {} : { maxPendingWrites }),
    ...(maxQueuedQuestions === undefined ? {} : { maxQueuedQuestions }),
    connections: {
      ...(total === undefined ? {} : { total }),
      ...(perAddress === undefined ? {} : { perAddress }),
    },
  };
}

/** The HTTP-only bounds given as flags to a shell without HTTP: named, so a flag is never silently ignored. */
export function refuseHttpOnlyLimits(flags: Partial<ListenFlags>, shell: string): void {
  for (const flag of HTTP_ONLY_LIMIT_FLAGS) {
    if (flags[flag] !== undefined) {
      throw limitError(`--${flag.replaceAll('_', '-')} bounds HTTP requests; ${shell} has none`, flag);
    }
  }
}

function limitError(message: string, field: string): GraphmemixError {
  return new GraphmemixError('CONFIG', message, { location: { field } });
}
