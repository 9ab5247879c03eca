import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compactSemantic } from '../../src/digest/incremental/compact-semantic.ts';
import {
  backlogKeys,
  newCompactionMark,
  readCompactionMark,
  writeCompactionMark,
} from '../../src/digest/incremental/semantic-compaction-mark.ts';
import { compactionLimit } from '../../src/digest/incremental/semantic-needs-compaction.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { BackgroundCompactions } from '../../src/graphmemix-compactions.ts';
import { WriteQueue } from '../../src/graphmemix-write-queue.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { openStore } from '../../src/store/open-store.ts';
import { annNotes } from '../support/ann-notes.ts';

/**
 * The automatic (5%-rule) compaction that a write triggers runs after it, in steps through the write queue
 * (src/graphmemix-compactions.ts): writes issued meanwhile, to the same user or another, finish while it is
 * still running, and their semantic side is applied by its last steps. In the process and through the write
 * worker (the server's path).
 */
const dir = mkdtempSync(join(tmpdir(), 'gm-compaction-steps-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const notes = annNotes;

/**
 * 600 memories of ann in one add (a rebuild: snapshot of 600), then 30 single adds: the rule is 30 changes (5%
 * of 600), so the 30th marks the context and hands the compaction over.
 */
async function reachRule(gm: Graphmemix): Promise<void> {
  await gm.addMemories('ann', notes(0, 600));
  expect((await gm.store.semantic.getSnapshot('ann'))?.documents).toBe(600);
  for (let i = 600; i < 630; i++) await gm.addMemories('ann', notes(i, 1));
}

/** Every one of ann's 631 memories has its semantic document, and the file passes its integrity check. */
async function expectAllDocumented(gm: Graphmemix): Promise<void> {
  const ids = notes(0, 631).map((note) => note.id);
  expect((await gm.store.semantic.getDocs('ann', ids)).length).toBe(631);
  expect((await gm.store.integrityCheck()).ok).toBe(true);
}

/** The ids in ann's backlog rows. */
async function backlogIds(store: ArchiveStore): Promise<number> {
  let ids = 0;
  for (const key of await backlogKeys(store, 'ann'))
    ids += ((await store.getMeta<string[]>(key)) ?? []).length;
  return ids;
}

describe.each([
  ['in the process', false],
  ['through the write worker', true],
])('a compaction triggered by a write (%s)', (_, writeWorker) => {
  it('runs after the write; writes meanwhile finish before it ends and are applied by it', async () => {
    const gm = await openGraphmemix({
      semanticUpdates: 'in-write',
      db: join(dir, `steps-${writeWorker}.db`),
      writeWorker,
      readWorkers: false,
    });
    try {
      await reachRule(gm);
      const mark = await readCompactionMark(gm.store, 'ann');
      expect(mark).toBeDefined();
      // In the process both queue behind the compaction's first turn and before its document steps (its
      // compute runs between them), so they finish while it runs. The worker runs it while the replies travel:
      // there the run may be over by then.
      await gm.addMemories('bob', [{ id: 'b0', text: 'bob rides the night train to the pottery class' }]);
      await gm.addMemories('ann', notes(630, 1));
      if (!writeWorker) expect((await readCompactionMark(gm.store, 'ann'))?.token).toBe(mark!.token);
      await gm.waitForCompactions();
      expect(await readCompactionMark(gm.store, 'ann')).toBeUndefined();
      const snapshot = await gm.store.semantic.getSnapshot('ann');
      // The run's snapshot covers what it read (at least the 630), and the write after it was replayed.
      expect(snapshot?.documents).toBeGreaterThanOrEqual(630);
      await expectAllDocumented(gm);
    } finally {
      await gm.close();
    }
  });

  it("a user writing faster than its run is held: the backlog stays within the rule's limit", async () => {
    const gm = await openGraphmemix({
      semanticUpdates: 'in-write',
      db: join(dir, `held-${writeWorker}.db`),
      writeWorker,
      readWorkers: false,
    });
    try {
      await reachRule(gm);
      expect(await readCompactionMark(gm.store, 'ann')).toBeDefined();
      // 40 adds of 20, one after another (as a client waiting for each answer): 800 ids, against a limit of
      // 32-72 (5% of the user when a run starts). Before round 32 each add appended its ids at no cost between
      // two ~20 ms steps of the run, and the backlog grew to hundreds of ids while the run went on.
      let held = 0;
      for (let i = 0; i < 40; i++) {
        await gm.addMemories('ann', notes(630 + i * 20, 20));
        const ids = await backlogIds(gm.store);
        // At most the limit of the run (computed from the user's size when it started), and the add that
        // reached it.
        expect(ids).toBeLessThanOrEqual(compactionLimit(await gm.store.countMemories('ann')) + 20);
        if (ids >= 32) held++;
      }
      expect(held).toBeGreaterThan(0);
      await gm.waitForCompactions();
      expect(await backlogKeys(gm.store, 'ann')).toEqual([]);
      const ids = notes(0, 1430).map((note) => note.id);
      expect((await gm.store.semantic.getDocs('ann', ids)).length).toBe(1430);
      expect((await gm.store.integrityCheck()).ok).toBe(true);
    } finally {
      await gm.close();
    }
  });

  it("close({ background: 'stop' }) lets go the writes a run holds: they append to the backlog", async () => {
    const db = join(dir, `held-stop-${writeWorker}.db`);
    const gm = await openGraphmemix({ semanticUpdates: 'in-write', db, writeWorker, readWorkers: false });
    let closed = false;
    try {
      await reachRule(gm);
      // 40 adds of 50 at once (a flood's queue): the run holds them after the first, each then waiting for
      // its replay. The close comes behind them and stops the run at once: the adds then only append.
      const adds = Array.from({ length: 40 }, (_, i) => gm.addMemories('ann', notes(630 + i * 50, 50)));
      await gm.close({ background: 'stop' });
      closed = true;
      await Promise.all(adds);
      const store = await openStore(db);
      try {
        const ids = await backlogIds(store);
        // Most of the 2,000 ids are kept for the next run, not digested one add at a time before the close
        // could begin (without the stop, the write worker replayed ~1,860 of them, leaving ~140).
        expect(ids).toBeGreaterThanOrEqual(1000);
        expect(await store.countMemories('ann')).toBe(2630);
      } finally {
        await store.close();
      }
    } finally {
      if (!closed) await gm.close();
    }
  });

  it("close({ background: 'stop' }) does not wait for the run; the user's next write starts it again", async () => {
    const db = join(dir, `stop-${writeWorker}.db`);
    const first = await openGraphmemix({ semanticUpdates: 'in-write', db, writeWorker, readWorkers: false });
    await reachRule(first);
    const mark = await readCompactionMark(first.store, 'ann');
    expect(mark).toBeDefined();
    await first.close({ background: 'stop' });
    const second = await openGraphmemix({ semanticUpdates: 'in-write', db, writeWorker, readWorkers: false });
    try {
      const left = await readCompactionMark(second.store, 'ann');
      // In the process the run is stopped at its first step (close came before it). The worker's run goes on
      // while the close message travels, so it may be over by then; if not, it was stopped the same way.
      if (!writeWorker) expect(left).toMatchObject({ token: mark!.token, stoppedAt: expect.any(String) });
      else if (left !== undefined) expect(left.stoppedAt).toEqual(expect.any(String));
      await second.addMemories('ann', notes(630, 1));
      if (left !== undefined) {
        expect((await readCompactionMark(second.store, 'ann'))?.token).not.toBe(mark!.token);
      }
      await second.waitForCompactions();
      expect(await readCompactionMark(second.store, 'ann')).toBeUndefined();
      await expectAllDocumented(second);
      // The restarted run read every record, the new one included.
      if (left !== undefined) {
        expect(await second.store.semantic.getSnapshot('ann')).toMatchObject({ documents: 631 });
      }
    } finally {
      await second.close();
    }
  });
});

/** A facade that compacts in the write that reaches the rule (its own background runs stay out of the way). */
function openInline(file: string): Promise<Graphmemix> {
  return openGraphmemix({
    semanticUpdates: 'in-write',
    db: join(dir, file),
    compaction: 'inline',
    readWorkers: false,
  });
}

it("with compaction: 'inline', the write that reaches the rule compacts in its own turn", async () => {
  const gm = await openInline('inline.db');
  try {
    await reachRule(gm);
    expect(await readCompactionMark(gm.store, 'ann')).toBeUndefined();
    expect(await gm.store.semantic.getSnapshot('ann')).toMatchObject({ documents: 630, changes: 0 });
  } finally {
    await gm.close();
  }
});

it('close lets a run finish (a one-shot writer); a mark left by a dead run is restarted by the next write', async () => {
  const db = join(dir, 'stopped.db');
  const first = await openGraphmemix({ semanticUpdates: 'in-write', db, readWorkers: false });
  await reachRule(first);
  expect(await readCompactionMark(first.store, 'ann')).toBeDefined();
  await first.close();
  const second = await openGraphmemix({ semanticUpdates: 'in-write', db, readWorkers: false });
  try {
    // Finished before close returned: a CLI add that reaches the rule leaves a compacted context.
    expect(await readCompactionMark(second.store, 'ann')).toBeUndefined();
    expect(await second.store.semantic.getSnapshot('ann')).toMatchObject({ documents: 630, changes: 0 });
    // A run killed half-way leaves its mark (this process's pid, a token no live run holds: stale).
    const dead = { ...newCompactionMark(), token: 'killed-run' };
    await writeCompactionMark(second.store, 'ann', dead);
    await second.addMemories('ann', notes(630, 1));
    expect((await readCompactionMark(second.store, 'ann'))?.token).not.toBe('killed-run');
    await second.waitForCompactions();
    expect(await readCompactionMark(second.store, 'ann')).toBeUndefined();
    await expectAllDocumented(second);
  } finally {
    await second.close();
  }
});

it('forgetting the user stops its run; nothing of the user is left, and it can be written again', async () => {
  const gm = await openGraphmemix({
    semanticUpdates: 'in-write',
    db: join(dir, 'forget.db'),
    readWorkers: false,
  });
  try {
    await reachRule(gm);
    expect(await readCompactionMark(gm.store, 'ann')).toBeDefined();
    const report = await gm.forgetContext('ann');
    expect(report.deleted).toBe(true);
    await gm.waitForCompactions();
    expect(await readCompactionMark(gm.store, 'ann')).toBeUndefined();
    expect(await gm.store.countMemories('ann')).toBe(0);
    expect(await gm.store.semantic.getSnapshot('ann')).toBeUndefined();
    expect((await gm.store.integrityCheck()).ok).toBe(true);
    // The user can be written again: a first update builds a fresh snapshot.
    await gm.addMemories('ann', notes(0, 20));
    await gm.waitForCompactions();
    expect((await gm.store.semantic.getSnapshot('ann'))?.documents).toBe(20);
  } finally {
    await gm.close();
  }
});

it('a user may start its next run once as long as its last run took has passed', async () => {
  const gm = await openInline('cooldown.db');
  try {
    await gm.addMemories('ann', notes(0, 600));
    let clock = 1_000;
    const compactions = new BackgroundCompactions(
      gm.store,
      new WriteQueue({ perContext: true, parallel: 1 }),
      (contextId) => compactSemantic(gm.store, contextId),
      () => clock,
    );
    expect(compactions.schedule.ready?.('ann')).toBe(true);
    const mark = newCompactionMark();
    await writeCompactionMark(gm.store, 'ann', mark);
    compactions.schedule('ann', mark);
    await compactions.idle();
    expect(await readCompactionMark(gm.store, 'ann')).toBeUndefined();
    // The clock has not moved since the run ended: not before as long as the run took.
    expect(compactions.schedule.ready?.('ann')).toBe(false);
    expect(compactions.schedule.ready?.('bob')).toBe(true);
    clock += 10 * 60_000;
    expect(compactions.schedule.ready?.('ann')).toBe(true);
    await compactions.close();
  } finally {
    await gm.close();
  }
});

it("a run's steps are background turns, urgent while the run holds its user's writes", async () => {
  const gm = await openInline('urgency.db');
  try {
    await gm.addMemories('ann', notes(0, 600));
    const queue = new WriteQueue({ perContext: true, parallel: 1 });
    /** Per turn the run queued: its background's urgency when it was queued. */
    const urgency: boolean[] = [];
    const forContext = queue.forContext.bind(queue);
    queue.forContext = (contextId, work, options) => {
      expect(options?.background).toBeDefined();
      urgency.push(options?.background?.urgent() === true);
      return forContext(contextId, work, options);
    };
    const compactions = new BackgroundCompactions(gm.store, queue, (contextId) =>
      compactSemantic(gm.store, contextId),
    );
    // A run with nothing deferred: its writes are never held, its steps never urgent.
    const calm = newCompactionMark();
    await writeCompactionMark(gm.store, 'ann', calm);
    compactions.schedule('ann', calm);
    await compactions.idle();
    expect(urgency.length).toBeGreaterThan(2);
    expect(urgency.every((urgent) => !urgent)).toBe(true);
    // A run whose user's writes left more ids than the rule allows: held, so its steps go first.
    urgency.length = 0;
    const busy = newCompactionMark();
    await writeCompactionMark(gm.store, 'ann', busy);
    compactions.schedule('ann', busy);
    compactions.schedule.deferred?.('ann', 10_000);
    await compactions.idle();
    expect(urgency.length).toBeGreaterThan(2);
    expect(urgency.every((urgent) => urgent)).toBe(true);
    await compactions.close();
  } finally {
    await gm.close();
  }
});

describe('a run that fails', () => {
  /**
   * A SQLite store whose semantic writes of 16 documents or more fail: a run's steps (its first step writes 16,
   * whatever the machine's speed; later ones are sized by time), never an add of one memory (one document).
   */
  async function failingStore(file: string, replaceAllFails: () => boolean) {
    const store = await openStore(file);
    const semantic = store.semantic;
    Object.defineProperty(store, 'semantic', {
      value: {
        ...semantic,
        async writeDocs(contextId: string, change: Parameters<typeof semantic.writeDocs>[1]) {
          if ((change.put?.length ?? 0) >= 16) throw new Error('disk says no');
          return semantic.writeDocs(contextId, change);
        },
        async replaceAll(...args: Parameters<typeof semantic.replaceAll>) {
          if (replaceAllFails()) throw new Error('still no');
          return semantic.replaceAll(...args);
        },
      },
    });
    return store;
  }

  it('is finished in one turn; if that fails too, the user is marked approximate with the error', async () => {
    for (const recoveryFails of [false, true]) {
      let failing = false;
      const store = await failingStore(join(dir, `failing-${recoveryFails}.db`), () => failing);
      const gm = await openGraphmemix({
        semanticUpdates: 'in-write',
        db: 'failing',
        store,
        readWorkers: false,
      });
      try {
        await gm.addMemories('ann', notes(0, 600));
        failing = recoveryFails;
        for (let i = 600; i < 630; i++) await gm.addMemories('ann', notes(i, 1));
        await gm.waitForCompactions();
        expect(await readCompactionMark(store, 'ann')).toBeUndefined();
        const stats = (await gm.userStats('ann'))!;
        if (recoveryFails) {
          expect(stats.knnApproximate).toMatchObject({ reason: 'compaction-failed' });
          expect(stats.knnApproximate?.error).toMatch(/disk says no.*still no/);
        } else {
          expect(stats.knnApproximate).toBeUndefined();
          expect(await store.semantic.getSnapshot('ann')).toMatchObject({ documents: 630, changes: 0 });
        }
      } finally {
        await gm.close();
        await store.close();
      }
    }
  });
});
