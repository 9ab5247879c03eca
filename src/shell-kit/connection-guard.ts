import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';

/** Open connections one client address (an IPv4 address, an IPv6 /64) may hold before new ones are closed. */
export const DEFAULT_CONNECTIONS_PER_ADDRESS = 256;

export interface ConnectionLimits {
  /** Open connections from one client address (IPv6: its /64) before new ones are closed; 0: no bound. */
  perAddress?: number;
  /** Open connections in all before new ones are closed (default: from the process's open-file limit). */
  total?: number;
  /** Count loopback peers per address too (default false: a proxy on this host is every client at once). */
  countLoopback?: boolean;
}

/**
 * Bounds the connections a listener holds. Every open socket is a file descriptor, and the API's timeouts
 * are generous (66 s for headers, 65 s keep-alive), so without a bound one unauthenticated address holding
 * ~20k idle sockets took the process to its open-file limit: every new client's connection was reset
 * (`.probe/sockets.ts`: 0 of 197 requests answered) and the archive itself could no longer open a file.
 * A client address gets `perAddress` sockets, all of them together `total` (Node closes the rest at once),
 * which leaves the process descriptors for its archive, media and model calls.
 */
export function guardConnections(server: Server, limits: ConnectionLimits = {}): void {
  const total = limits.total ?? defaultMaxConnections();
  if (total !== undefined) server.maxConnections = total;
  const perAddress = limits.perAddress ?? DEFAULT_CONNECTIONS_PER_ADDRESS;
  if (perAddress <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket) => {
    const group = connectionGroup(socket.remoteAddress);
    if (group === undefined || (!limits.countLoopback && isLoopbackGroup(group))) return;
    const held = open.get(group) ?? 0;
    if (held >= perAddress) {
      socket.destroy();
      return;
    }
    open.set(group, held + 1);
    socket.once('close', () => {
      const left = (open.get(group) ?? 1) - 1;
      // One entry per address with a socket open: the map never outgrows the connections held now.
      if (left === 0) open.delete(group);
      else open.set(group, left);
    });
  });
}

/**
 * The address a connection is counted under: an IPv4 address (also when mapped into IPv6), or the /64 an
 * IPv6 address is in (one host commonly holds a whole /64, so counting single addresses would not bound it).
 */
export function connectionGroup(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  const bare = address.split('%')[0]!;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return mapped[1];
  if (isIPv4(bare)) return bare;
  if (!isIPv6(bare)) return bare;
  return `${expandIPv6(bare).slice(0, 4).join(':')}::/64`;
}

function isLoopbackGroup(group: string): boolean {
  return group.startsWith('127.') || group === '0:0:0:0::/64';
}

/** The eight hextets of an IPv6 address (no zone; an embedded IPv4 tail as two hextets). */
function expandIPv6(address: string): string[] {
  let text = address.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((part) => Number.parseInt(part, 16).toString(16));
}

/**
 * Connections left for clients under an open-file limit: the limit less an eighth of it (at least 256) for
 * the archive's files, read workers, media and model calls. Undefined where the limit cannot be read.
 */
export function maxConnectionsFor(openFileLimit: number | undefined): number | undefined {
  if (openFileLimit === undefined || !Number.isFinite(openFileLimit)) return undefined;
  const reserve = Math.max(256, Math.floor(openFileLimit / 8));
  return Math.max(64, openFileLimit - reserve);
}

/** maxConnectionsFor this process's soft open-file limit (Linux /proc; Node raises it to the hard one). */
export function defaultMaxConnections(): number | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return undefined;
  }
  const soft = /^Max open files\s+(\S+)/m.exec(text)?.[1];
  return maxConnectionsFor(soft === undefined || soft === 'unlimited' ? undefined : Number(soft));
}
