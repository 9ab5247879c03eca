import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { startServer } from '../../src/server/start-server.ts';
import { createFakeGraphmemix } from '../support/fake-graphmemix.ts';

const STALL_MS = 6_500;

// The client runs in its own thread (plain JS, own event loop), so it keeps sending while the server's loop is
// blocked: a health check on an idle keep-alive socket, then a request that stalls the server's loop, then a
// second health check on the same socket while the loop is still blocked.
const CLIENT = `
const http = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const { port } = workerData;
const keep = new http.Agent({ keepAlive: true, maxSockets: 1 });
const call = (agent, path, method, body) => new Promise((resolve) => {
  const req = http.request({ host: '127.0.0.1', port, path, method, agent,
    headers: { host: '127.0.0.1:' + port, 'content-type': 'application/json' } }, (res) => {
    res.resume();
    res.on('end', () => resolve(String(res.statusCode)));
  });
  req.on('error', (error) => resolve('ERR ' + (error.code || error.message)));
  if (body) req.write(body);
  req.end();
});
(async () => {
  const first = await call(keep, '/v1/health', 'GET');
  const stall = call(false, '/v1/search', 'POST', JSON.stringify({ user_id: 'u', query: 'x' }));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const second = await call(keep, '/v1/health', 'GET');
  parentPort.postMessage({ first, second, stall: await stall });
})();
`;

/**
 * Reproduces the connection resets of issue #12: Node closes an idle keep-alive socket after 5 s by default
 * (plus about a second of grace); when the event loop was blocked longer than that, the expired timer runs
 * before the socket's pending request is read and the client gets ECONNRESET (checked: this test fails
 * without tuneHttpServer). startServer keeps idle sockets 65 s, so the request that
 * waited behind the stall is answered. (Questions no longer stall the loop at all: they run in read workers.)
 */
describe('a stalled event loop does not reset keep-alive connections', () => {
  it('answers a request sent on an idle keep-alive socket during a 6.5 s stall', async () => {
    const graphmemix: Graphmemix = {
      ...createFakeGraphmemix(),
      search: async () => {
        const end = Date.now() + STALL_MS;
        while (Date.now() < end) {
          // A synchronous stall, as a CPU-heavy question on the event loop used to be.
        }
        return [];
      },
    };
    const server = await startServer({ graphmemix, open: true, port: 0, host: '127.0.0.1' });
    try {
      const client = new Worker(CLIENT, { eval: true, workerData: { port: server.port } });
      const result = await new Promise((resolve, reject) => {
        client.once('message', resolve);
        client.once('error', reject);
      });
      await client.terminate();
      expect(result).toEqual({ first: '200', second: '200', stall: '200' });
    } finally {
      await server.close();
    }
  }, 30_000);
});
