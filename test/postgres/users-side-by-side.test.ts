import { afterAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from '../store/postgres-test-db.ts';

afterAll(dropTestDatabases);

const USERS = ['ann', 'bob', 'cat', 'dan', 'eve', 'fay'];
const TOPICS = [
  'garden tomatoes',
  'train to Lyon',
  'piano lessons',
  'tax forms',
  'birthday cake',
  'hiking boots',
];

/** User u's i-th batch of five chat turns (words shared across batches, so kNN and schema edges form). */
function batch(user: string, u: number, i: number) {
  return Array.from({ length: 5 }, (_, j) => ({
    id: `${user}-${i}-${j}`,
    text: `${user} talks about ${TOPICS[(u + i + j) % TOPICS.length]} and ${TOPICS[(u * 3 + j) % TOPICS.length]}, note ${i}`,
    metadata: { role: j % 2 === 0 ? 'user' : 'assistant', session: `s${i % 3}`, round: i * 5 + j },
  }));
}

/** What a user's archive holds: memory ids and every edge (types and strengths), in a stable order. */
async function stateOf(store: ArchiveStore, user: string) {
  const ids = (await store.listMemories(user)).map((record) => record.id).sort();
  const edges = (await store.neighbors(user, ids))
    .map((e) => `${e.a}|${e.b}|${[...e.types].sort().join(',')}|${e.strength.toFixed(9)}`)
    .sort();
  return { ids, edges: [...new Set(edges)] };
}

/** Writes of the store's writeMemories, as [context, start, end] in call order. */
function timed(store: ArchiveStore, spans: Array<[string, number, number]>): ArchiveStore {
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (property === 'writeMemories') {
        return async (contextId: string, writes: Parameters<ArchiveStore['writeMemories']>[1]) => {
          const start = performance.now();
          try {
            return await target.writeMemories(contextId, writes);
          } finally {
            spans.push([contextId, start, performance.now()]);
          }
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function runUsers(gm: Awaited<ReturnType<typeof openGraphmemix>>, together: boolean) {
  const one = async (user: string, u: number) => {
    for (let i = 0; i < 6; i++) await gm.addMemories(user, batch(user, u, i));
    await gm.updateMemory(user, `${user}-2-1`, { text: `${user} changed plans: no more piano lessons` });
    await gm.deleteMemory(user, `${user}-3-2`);
  };
  if (together) await Promise.all(USERS.map(one));
  else for (const [u, user] of USERS.entries()) await one(user, u);
}

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL: different users write side by side', () => {
  it("users' writes overlap, each user ends as when written alone, and a pool of two connections does not stall", async () => {
    const spans: Array<[string, number, number]> = [];
    const together = await openPostgresStore({ url: await createTestDatabase(), maxConnections: 2 });
    expect(together.independentContextWrites).toBe(true);
    // Compactions inline and semantic updates in the write: each user's state is then a function of that user's
    // writes alone (a background compaction's steps, or a drain taking the ids of several writes at once, would
    // interleave with the user's later writes by timing).
    const options = {
      db: 'postgres',
      readWorkers: false,
      compaction: 'inline',
      semanticUpdates: 'in-write',
    } as const;
    const gmTogether = await openGraphmemix({ ...options, store: timed(together, spans) });
    const alone = await openPostgresStore({ url: await createTestDatabase() });
    const gmAlone = await openGraphmemix({ ...options, store: alone });
    try {
      await runUsers(gmTogether, true);
      await runUsers(gmAlone, false);
      // Some write of one user ran while another user's write was under way (one at a time before).
      const overlapping = spans.some(([c, s, e]) => spans.some(([c2, s2]) => c2 !== c && s2 > s && s2 < e));
      expect(overlapping).toBe(true);
      for (const user of USERS) {
        const got = await stateOf(together, user);
        expect(got.ids).toHaveLength(29);
        expect(got.edges.length).toBeGreaterThan(0);
        expect(got).toEqual(await stateOf(alone, user));
        expect((await together.getMemory(user, `${user}-2-1`))?.text).toContain('changed plans');
      }
      expect((await together.integrityCheck()).ok).toBe(true);
    } finally {
      await gmTogether.close();
      await gmAlone.close();
    }
  }, 180_000);

  it('through the write worker (a server): a user writes while another user imports', async () => {
    const db = await createTestDatabase();
    const gm = await openGraphmemix({ db, writeWorker: true, readWorkers: false });
    try {
      const finished: string[] = [];
      // A large add of one user, then a small add of another: the small one does not wait for the large one.
      const large = gm
        .addMemories('ann', Array.from({ length: 300 }, (_, i) => batch('ann', 0, i)).flat())
        .then((report) => {
          finished.push('ann');
          return report;
        });
      const small = gm.addMemories('bob', batch('bob', 1, 0)).then((report) => {
        finished.push('bob');
        return report;
      });
      expect((await small).imported).toBe(5);
      expect((await large).imported).toBe(1500);
      expect(finished).toEqual(['bob', 'ann']);
      expect(await gm.store.countMemories('ann')).toBe(1500);
      expect(await gm.store.countMemories('bob')).toBe(5);
    } finally {
      await gm.close();
    }
  }, 180_000);
});
