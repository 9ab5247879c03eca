import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { startServer } from '../../src/server/index.ts';
import {
  connectionGroup,
  guardConnections,
  maxConnectionsFor,
} from '../../src/shell-kit/connection-guard.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A socket to 127.0.0.1:port and what became of it: answered (a status line) or closed unanswered. */
function ask(port: number): Promise<{ socket: Socket; outcome: Promise<'answered' | 'closed'> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      const outcome = new Promise<'answered' | 'closed'>((settle) => {
        let data = '';
        socket.on('data', (chunk) => {
          data += chunk;
          if (data.startsWith('HTTP/1.1 ')) settle('answered');
        });
        socket.on('close', () => settle('closed'));
        socket.on('error', () => settle('closed'));
      });
      socket.write('GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n');
      cleanups.push(() => void socket.destroy());
      resolve({ socket, outcome });
    });
    socket.once('error', reject);
  });
}

async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return (server.address() as { port: number }).port;
}

function plainServer(): Server {
  return createServer((_req, res) => res.end('ok'));
}

describe('connection bounds (connection-guard.ts)', () => {
  it('counts IPv4 by address and IPv6 by /64, mapped IPv4 as IPv4, zones dropped', () => {
    expect(connectionGroup('192.0.2.7')).toBe('192.0.2.7');
    expect(connectionGroup('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(connectionGroup('2001:db8:1:2::5')).toBe(connectionGroup('2001:db8:1:2:ffff:0:0:1'));
    expect(connectionGroup('2001:db8:1:2::5')).toBe('2001:db8:1:2::/64');
    expect(connectionGroup('2001:db8:1:3::5')).not.toBe(connectionGroup('2001:db8:1:2::5'));
    expect(connectionGroup('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(connectionGroup('2001:DB8::7:1.2.3.4')).toBe('2001:db8:0:0::/64');
    expect(connectionGroup(undefined)).toBeUndefined();
  });

  it('leaves the process an eighth of its open files (at least 256) for the archive', () => {
    expect(maxConnectionsFor(20_000)).toBe(17_500);
    expect(maxConnectionsFor(1024)).toBe(768);
    expect(maxConnectionsFor(100)).toBe(64);
    expect(maxConnectionsFor(undefined)).toBeUndefined();
  });

  it('closes an address past its share at once, keeps the ones it holds, and admits again after a close', async () => {
    const server = plainServer();
    guardConnections(server, { perAddress: 3, countLoopback: true });
    const port = await listening(server);
    const held = [await ask(port), await ask(port), await ask(port)];
    const over = await ask(port);
    expect(await over.outcome).toBe('closed');
    for (const { outcome } of held) expect(await outcome).toBe('answered');
    held[0]!.socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await (await ask(port)).outcome).toBe('answered');
  });

  it('does not count loopback peers per address unless asked (a proxy on this host is every client)', async () => {
    const server = plainServer();
    guardConnections(server, { perAddress: 2 });
    const port = await listening(server);
    const sockets = await Promise.all([1, 2, 3, 4].map(() => ask(port)));
    for (const { outcome } of sockets) expect(await outcome).toBe('answered');
  });

  it('bounds the connections in all, loopback included', async () => {
    const server = plainServer();
    guardConnections(server, { total: 2, perAddress: 0 });
    expect(server.maxConnections).toBe(2);
    const port = await listening(server);
    const held = [await ask(port), await ask(port)];
    expect(await (await ask(port)).outcome).toBe('closed');
    for (const { outcome } of held) expect(await outcome).toBe('answered');
  });

  it('startServer applies the bounds it is given', async () => {
    const gm = await openGraphmemix({ db: ':memory:' });
    cleanups.push(() => gm.close());
    const server = await startServer({
      graphmemix: gm,
      apiKeys: ['k-connection-guard-test'],
      port: 0,
      connections: { perAddress: 1, countLoopback: true },
    });
    cleanups.push(() => server.close());
    const first = await ask(server.port);
    expect(await (await ask(server.port)).outcome).toBe('closed');
    expect(await first.outcome).toBe('answered');
  });
});
