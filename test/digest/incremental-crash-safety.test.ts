import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildViews } from '../../src/digest/build-views.ts';
import { contentHash } from '../../src/digest/content-hash.ts';
import { relationKeys } from '../../src/digest/incremental/relation-keys.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { toMemoryRecord } from '../../src/schemas/record-schema.ts';
import { TSX_IMPORT } from '../support/repo-paths.ts';
import { apply, baseRecords, writes } from './fixtures/incremental-archive.ts';

const BASE = 600;
const WRITES = 60;
const CHILD = join(import.meta.dirname, 'fixtures', 'incremental-archive.ts');
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-incremental-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Everything a relation update produces, in a comparable form: schema edges as they are, then every edge
 * after an explicit compaction. Under the frozen-IDF rule (docs/semantic-knn.md) the similarities between
 * compactions depend on when the snapshot was taken, and a recovered crash compacts at another moment than
 * a clean run; after compaction both are the exact rebuild of the same records.
 */
async function state(gm: Graphmemix) {
  const records = await gm.store.listMemories('crash');
  const ids = records.map((r) => r.id);
  const schemaEdges = (await gm.store.neighbors('crash', ids))
    .map((edge) => ({ ...edge, types: edge.types.filter((type) => type !== 'semantic_knn') }))
    .filter((edge) => edge.types.length > 0)
    .map(({ a, b, types }) => ({ a, b, types }));
  await gm.compact('crash');
  expect(await gm.store.integrityCheck()).toEqual({ ok: true, problems: [] });
  return {
    ids,
    schemaEdges,
    edges: await gm.store.neighbors('crash', ids),
    counts: await gm.store.countEdges('crash'),
  };
}

async function base(file: string): Promise<Graphmemix> {
  const gm = await openGraphmemix({ db: join(dir, file) });
  await gm.addMemories('crash', baseRecords(BASE));
  return gm;
}

async function cleanState(): Promise<Awaited<ReturnType<typeof state>>> {
  const clean = await base(`clean-${Math.random()}.db`);
  for (const write of writes(BASE, WRITES)) await apply(clean, write);
  const result = await state(clean);
  await clean.close();
  return result;
}

describe('incremental writes are crash safe', () => {
  it('a write committed without its relation update (killed in between) converges when repeated', async () => {
    const expected = await cleanState();
    const file = 'between.db';
    const gm = await base(file);
    const all = writes(BASE, WRITES);
    for (const write of all.slice(0, 30)) await apply(gm, write);
    // The 31st write lands in the store (and its journal) but the process "dies" before relations.
    const next = all[30]!;
    if (!('add' in next)) throw new Error('fixture: expected an add at 30');
    const checked = toMemoryRecord(next.add, { contextId: 'crash', sequence: BASE + 30 });
    if (!checked.ok) throw new Error(checked.message);
    const record = checked.record;
    await gm.store.writeMemories('crash', [
      { record, views: buildViews(record), contentHash: contentHash(record), keys: relationKeys(record) },
    ]);
    expect((await gm.store.relationWorkStatus('crash')).pending).toBe(1);
    await gm.close();

    const reopened = await openGraphmemix({ db: join(dir, file) });
    expect(await reopened.store.integrityCheck()).toEqual({ ok: true, problems: [] });
    for (const write of all.slice(30)) await apply(reopened, write);
    expect((await reopened.store.relationWorkStatus('crash')).pending).toBe(0);
    expect(await state(reopened)).toEqual(expected);
    await reopened.close();
  }, 120_000);

  // 600 memories: the 30th write reaches the 5% rule, and the facade compacts in steps after it (round 22), so
  // a kill after 31 lands mostly inside that run (its mark left behind, half of its documents written).
  // After-write (round 37): a kill may also land between a write and its drain, or inside the drain.
  it.each([
    [3, 'in-write'],
    [17, 'in-write'],
    [31, 'in-write'],
    [41, 'in-write'],
    [5, 'after-write'],
    [31, 'after-write'],
  ])(
    'a SIGKILL after %i single writes (%s; wherever it lands) leaves a sound store that converges',
    async (after, semanticUpdates) => {
      const expected = await cleanState();
      const file = `killed-${after}-${semanticUpdates}.db`;
      (await base(file)).close();
      await new Promise<void>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          ['--import', TSX_IMPORT, CHILD, join(dir, file), String(BASE), String(WRITES), semanticUpdates],
          {
            stdio: ['ignore', 'pipe', 'inherit'],
          },
        );
        child.stdout.on('data', (chunk: Buffer) => {
          const last = /progress (\d+)\s*$/.exec(chunk.toString());
          // Kill a moment after the n-th write returned: inside the next write or its relation update.
          if (last && Number(last[1]) >= after && !child.killed)
            setTimeout(() => child.kill('SIGKILL'), after % 7);
        });
        child.on('error', reject);
        child.on('exit', () => resolve());
      });
      const reopened = await openGraphmemix({ db: join(dir, file) });
      expect(await reopened.store.integrityCheck()).toEqual({ ok: true, problems: [] });
      // Repeating the whole sequence is the client's retry; applied writes are unchanged or idempotent.
      for (const write of writes(BASE, WRITES)) await apply(reopened, write);
      // Rows a killed after-write process left are drained by the reopened writer. A compaction mark the child
      // left is another process's, live for this one until its lease ends: its backlog waits for the run (or,
      // as here, for the explicit compaction of `state`).
      await reopened.waitForCompactions();
      if ((await reopened.store.getMeta('semantic-compaction:crash')) === undefined)
        expect(await reopened.store.listMetaKeys?.('semantic-backlog:')).toEqual([]);
      expect(await state(reopened)).toEqual(expected);
      await reopened.close();
    },
    120_000,
  );
});
