/**
 * The prepare helper of a large import (prepared-items.ts): validates, hashes and builds the views of the
 * record chunks it is sent, in order, and posts each chunk's results back. It reads nothing but the messages.
 */
import { parentPort } from 'node:worker_threads';
import { prepareRecord } from './prepare-records.ts';
import type { PrepareMessage, PrepareReply, PrepareRequest } from './prepare-worker-protocol.ts';

const port = parentPort!;
port.on('message', (request: PrepareRequest) => {
  let reply: PrepareReply;
  try {
    const prepared = request.items.map((item) => prepareRecord(item, request.options, item.sequence));
    reply = { id: request.id, type: 'prepared', prepared };
  } catch (error) {
    // The calling thread prepares the chunk itself, and meets the same error where it always did.
    reply = { id: request.id, type: 'failed', error: (error as Error)?.message ?? String(error) };
  }
  port.postMessage(reply);
});
// Chunks are sent from this message on: until then the calling thread prepares them itself.
port.postMessage({ type: 'loaded' } satisfies PrepareMessage);
