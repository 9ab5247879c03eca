import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import type { RetrievalResult } from '../../src/pipeline/retrieval-result.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from '../store/postgres-test-db.ts';

/**
 * A warm retrieve keeps what it read around its pool (records: src/pipeline/pool-records.ts; SQLite's edge
 * lists: src/store/sqlite-read-cache.ts, postings: lexical-search-cache.ts; PostgreSQL keeps them under the
 * context's read generation). The next retrieve after a write, by another connection to the same archive
 * or by this one, must answer exactly as a freshly opened archive does.
 */
const dir = mkdtempSync(join(tmpdir(), 'gmx-warm-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterAll(dropTestDatabases);

const TOPICS = ['kayak rental', 'pottery class', 'train tickets', 'garden tomatoes', 'piano lessons'];
const notes = Array.from({ length: 60 }, (_, i) => ({
  id: `n${i}`,
  text: `${TOPICS[i % TOPICS.length]} note ${i}: ${i % 2 === 0 ? 'booked' : 'asked about'} the ${TOPICS[(i * 3) % TOPICS.length]}`,
  sessionId: `s${Math.floor(i / 6)}`,
  timestamp: new Date(Date.UTC(2024, 4, 1) + i * 3_600_000).toISOString(),
}));

const QUESTION = 'what did we say about the kayak rental and the pottery class?';

/** What a retrieve decides: the pool with its scores, the kept edges, the packet. */
function decided(result: RetrievalResult) {
  return {
    pool: result.pool.map((c) => [c.memoryId, c.retrievalScore, c.verifierScore, c.prize]),
    edges: result.verifiedEdges.map((e) => [e.a, e.b, e.weight, e.kept]),
    packet: result.packetText,
  };
}

async function fresh(file: string): Promise<ReturnType<typeof decided>> {
  const gm = await openGraphmemix({ db: file });
  try {
    return decided(await gm.retrieve('ctx', QUESTION));
  } finally {
    await gm.close();
  }
}

const BACKENDS: Array<[string, () => Promise<string>]> = [['SQLite', async () => join(dir, 'archive.db')]];
if (PG_SKIP) console.warn(`[postgres warm read caches skipped] ${PG_SKIP}`);
else BACKENDS.push(['PostgreSQL', createTestDatabase]);

describe.each(BACKENDS)('warm read caches on the question path (%s)', (_name, archive) => {
  it('see a write by a second connection, and by this one, on the next retrieve', async () => {
    const file = await archive();
    const reader: Graphmemix = await openGraphmemix({ db: file });
    const writer: Graphmemix = await openGraphmemix({ db: file });
    // Each write's semantic update runs after it (the default): the compared state is the settled one, which the
    // cached reader must see as well (the drain is one more write by that connection).
    const settle = async () => {
      await writer.waitForCompactions();
      await reader.waitForCompactions();
    };
    try {
      await writer.addMemories('ctx', notes);
      await settle();
      const cold = decided(await reader.retrieve('ctx', QUESTION));
      const warm = decided(await reader.retrieve('ctx', QUESTION));
      expect(warm).toEqual(cold);
      expect(warm).toEqual(await fresh(file));

      // Another connection rewrites a packet memory's text (record, views, relations).
      const top = (await reader.retrieve('ctx', QUESTION)).evidence[0]!.memoryId;
      await writer.updateMemory('ctx', top, {
        text: 'kayak rental and pottery class: the kayak rental moved to the lake, the pottery class to Friday',
      });
      await settle();
      const afterUpdate = decided(await reader.retrieve('ctx', QUESTION));
      expect(afterUpdate.packet).toContain('moved to the lake');
      expect(afterUpdate).toEqual(await fresh(file));

      // Another connection adds memories into a pool member's session (new edges of cached members).
      await writer.addMemories('ctx', [
        {
          id: 'late',
          text: 'kayak rental pottery class: both confirmed',
          sessionId: 's0',
          timestamp: '2024-05-01T05:30:00Z',
        },
      ]);
      await settle();
      const afterAdd = decided(await reader.retrieve('ctx', QUESTION));
      expect(afterAdd.pool.map((row) => row[0])).toContain('late');
      expect(afterAdd).toEqual(await fresh(file));

      // Another connection forgets one; then this connection writes.
      await writer.deleteMemory('ctx', 'late');
      await settle();
      const afterDelete = decided(await reader.retrieve('ctx', QUESTION));
      expect(afterDelete.pool.map((row) => row[0])).not.toContain('late');
      expect(afterDelete).toEqual(await fresh(file));
      await reader.updateMemory('ctx', top, { text: 'kayak rental and pottery class, now both on Sunday' });
      await settle();
      const ownWrite = decided(await reader.retrieve('ctx', QUESTION));
      expect(ownWrite.packet).toContain('now both on Sunday');
      expect(ownWrite).toEqual(await fresh(file));
    } finally {
      await reader.close();
      await writer.close();
    }
  }, 60_000);
});
