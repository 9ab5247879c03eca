import type { Command } from 'commander';
import { parseInput } from '../api-schemas/parse-input.ts';
import { type ListenFlags, listenFlagsSchema } from '../api-schemas/route-schemas.ts';
import { GraphmemixError } from '../errors/graphmemix-error.ts';

/** The operator bounds of `serve` and `mcp` as commander gives them (strings; validated by listenFlagsSchema). */
export interface LimitFlags {
  maxBodyBytes?: string;
  maxPendingWrites?: string;
  maxQueuedQuestions?: string;
  bytesInFlight?: string;
  keyBytesInFlight?: string;
  keyRequestsInFlight?: string;
  keyQuestionsInFlight?: string;
  keyBytesPerSecond?: string;
  maxConnections?: string;
  maxConnectionsPerAddress?: string;
}

/** Adds the bounds shared by `serve` and `mcp` (each beats the config file's `limits`). */
export function addLimitOptions(command: Command, bodyHelp: string): Command {
  return command
    .option('--max-body-bytes <n>', bodyHelp)
    .option('--max-pending-writes <n>', 'write calls unsettled at once before BUSY (default 256)')
    .option('--max-queued-questions <n>', 'questions waiting for a read worker before BUSY (default 64)')
    .option(
      '--bytes-in-flight <n>',
      'HTTP: body bytes of all requests in flight (default 16 x the body limit)',
    )
    .option(
      '--key-bytes-in-flight <n>',
      "HTTP: body bytes of one key's requests in flight (default 4 x the body limit)",
    )
    .option('--key-requests-in-flight <n>', 'HTTP: requests with a body of one key in flight (default 64)')
    .option(
      '--key-bytes-per-second <n>',
      'HTTP: body bytes one key may send per second on average (default with several keys: 16 MiB)',
    )
    .option(
      '--key-questions-in-flight <n>',
      'HTTP: questions of one key in progress (default with several keys: half the read capacity)',
    )
    .option(
      '--max-connections <n>',
      'HTTP: open connections in all (default: the open-file limit less an eighth, at least 256)',
    )
    .option(
      '--max-connections-per-address <n>',
      'HTTP: open connections from one client address or IPv6 /64, loopback not counted (default 256; 0: none)',
    );
}

/** The flags in listenFlagsSchema's names (unset ones left out). */
export function limitFlagInput(flags: LimitFlags): Record<string, string> {
  const pairs: Array<[string, string | undefined]> = [
    ['max_body_bytes', flags.maxBodyBytes],
    ['max_pending_writes', flags.maxPendingWrites],
    ['max_queued_questions', flags.maxQueuedQuestions],
    ['bytes_in_flight', flags.bytesInFlight],
    ['key_bytes_in_flight', flags.keyBytesInFlight],
    ['key_requests_in_flight', flags.keyRequestsInFlight],
    ['key_questions_in_flight', flags.keyQuestionsInFlight],
    ['key_bytes_per_second', flags.keyBytesPerSecond],
    ['max_connections', flags.maxConnections],
    ['max_connections_per_address', flags.maxConnectionsPerAddress],
  ];
  const out: Record<string, string> = {};
  for (const [name, value] of pairs) if (value !== undefined) out[name] = value;
  return out;
}

/** listenFlagsSchema over a listening shell's flags; a bad value is named by its flag as typed (`--port`). */
export function parseListenFlags(raw: Record<string, unknown>): ListenFlags {
  try {
    return parseInput(listenFlagsSchema, raw);
  } catch (error) {
    const field = error instanceof GraphmemixError ? error.location?.field : undefined;
    if (!(error instanceof GraphmemixError) || error.code !== 'INVALID_INPUT' || field === undefined)
      throw error;
    const flag = `--${field.replaceAll('_', '-')}`;
    const issues = error.details?.issues as Array<{ message?: string }> | undefined;
    throw new GraphmemixError('INVALID_INPUT', issues?.[0]?.message ?? error.message, {
      location: { field: flag },
      cause: error,
    });
  }
}
