import type { Server } from 'node:http';
import { type ConnectionLimits, guardConnections } from './connection-guard.ts';

/** How long an idle keep-alive connection stays open: longer than common clients' and proxies' (60 s). */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * Connection settings for the API's listener. Node closes an idle keep-alive socket after 5 s by default;
 * a client that sends its next request on it at that moment, or while the event loop is blocked past that
 * time (the expired timer then runs before the pending request is read), gets a connection reset instead
 * of an answer (test/server/keep-alive-stall.test.ts). Keeping sockets open longer than the
 * client does removes that race; headersTimeout must exceed keepAliveTimeout (Node's advice). No
 * small maxConnections: refused sockets would be exactly the resets this avoids; overload answers 503 instead.
 * The connection bounds (per client address, and in all under the open-file limit) are what keeps those long
 * timeouts from letting one address hold every descriptor (connection-guard.ts).
 */
export function tuneHttpServer(server: Server, connections: ConnectionLimits = {}): void {
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  guardConnections(server, connections);
}
