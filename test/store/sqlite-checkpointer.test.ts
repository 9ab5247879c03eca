import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { BACKGROUND_CHECKPOINT_FROM_BYTES, SqliteCheckpointer } from '../../src/store/sqlite-checkpointer.ts';
import { createSqliteStore } from '../../src/store/sqlite-store.ts';
import { write } from './store-conformance.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-checkpointer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A WAL file whose writer never checkpoints by itself (so whatever is copied, the checkpointer copied). */
function walFile(name: string): { file: string; db: Database.Database; insert: (text: string) => void } {
  const file = join(dir, name);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (x TEXT)');
  const statement = db.prepare('INSERT INTO t VALUES (?)');
  return { file, db, insert: (text) => statement.run(text) };
}

describe('SqliteCheckpointer', () => {
  it('reads the WAL size from the wal-index and copies the WAL into the file on its own connection', async () => {
    const { file, db, insert } = walFile('copy.db');
    for (let i = 0; i < 100; i++) insert(`row ${i} ${'x'.repeat(3000)}`);
    // Polls never fire here: only the explicit calls act.
    const checkpointer = SqliteCheckpointer.start(file, { fromBytes: 0, pollMs: 1e7 })!;
    expect(checkpointer).toBeDefined();
    const before = (await checkpointer.frames())!;
    expect(before.log).toBeGreaterThan(100);
    expect(before.copied).toBeLessThan(before.log);
    const result = (await checkpointer.checkpoint())!;
    expect(result).toEqual({ busy: 0, log: before.log, checkpointed: before.log });
    expect(await checkpointer.frames()).toEqual({ log: before.log, copied: before.log });
    // The writer goes on meanwhile; the new frames are counted as waiting.
    insert('one more');
    const after = (await checkpointer.frames())!;
    expect(after.log - after.copied).toBeGreaterThan(0);
    // A truncation (a delete's, when its own found this thread copying) leaves an empty WAL file.
    expect((await checkpointer.truncate())!.busy).toBe(0);
    expect(statSync(`${file}-wal`).size).toBe(0);
    expect(await checkpointer.frames()).toEqual({ log: 0, copied: 0 });
    await checkpointer.close();
    expect(await checkpointer.checkpoint()).toBeUndefined();
    db.close();
    const reader = new Database(file, { readonly: true });
    expect(reader.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 101 });
    reader.close();
  });

  it('copies by itself once enough frames wait, so the WAL restarts and stays short', async () => {
    const { file, db, insert } = walFile('restart.db');
    const checkpointer = SqliteCheckpointer.start(file, { fromBytes: 0, pollMs: 2, frames: 4 })!;
    // Small transactions with gaps: the WAL's frame count drops once the checkpointer has copied it all and
    // the writer's next transaction restarts it (this writer never checkpoints: without the checkpointer its
    // WAL would only grow).
    let copied = false;
    let restarted = false;
    let previous = 0;
    for (let i = 0; i < 400 && !restarted; i++) {
      insert(`row ${i} ${'y'.repeat(2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      const frames = (await checkpointer.frames())!;
      copied ||= frames.copied > 0;
      restarted = frames.log < previous;
      previous = frames.log;
    }
    expect(copied).toBe(true);
    expect(restarted).toBe(true);
    await checkpointer.close();
    db.close();
  });

  it('copies what waits once the WAL nears where the writer checkpoints: by count while it writes, all once it pauses', async () => {
    const { file, db, insert } = walFile('long.db');
    // 40 rows of ~3 pages: ~120 frames. frames: 1e6 never triggers a copy by the ordinary count.
    for (let i = 0; i < 40; i++) insert(`row ${i} ${'z'.repeat(9000)}`);
    const options = { fromBytes: 0, pollMs: 2, eagerPollMs: 2, frames: 1e6 };
    const settle = async (checkpointer: SqliteCheckpointer) => {
      let frames = (await checkpointer.frames())!;
      for (let i = 0; i < 200 && frames.copied < frames.log; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        frames = (await checkpointer.frames())!;
      }
      return frames;
    };
    // Below the eager length, waiting frames stay where they are (the ordinary count decides).
    const short = SqliteCheckpointer.start(file, { ...options, restartFrames: 1e6, eagerFrom: 1e6 })!;
    await new Promise((resolve) => setTimeout(resolve, 60));
    const waiting = (await short.frames())!;
    expect(waiting.log).toBeGreaterThan(100);
    expect(waiting.copied).toBe(0);
    await short.close();
    // Past it, with the writer paused, everything is copied however few frames wait (eagerFrames unreachable).
    const paused = SqliteCheckpointer.start(file, {
      ...options,
      restartFrames: 64,
      eagerFrom: 64,
      eagerFrames: 1e6,
    })!;
    const frames = await settle(paused);
    expect(frames.log).toBeGreaterThan(100);
    expect(frames.copied).toBe(frames.log);
    // The writer's next transaction finds every frame copied and starts the WAL over.
    insert('after');
    expect((await paused.frames())!.log).toBeLessThan(frames.log);
    await paused.close();
    // While it writes, copies come once eagerFrames wait.
    for (let i = 0; i < 40; i++) insert(`again ${i} ${'z'.repeat(9000)}`);
    const writing = SqliteCheckpointer.start(file, {
      ...options,
      restartFrames: 64,
      eagerFrom: 64,
      eagerFrames: 16,
    })!;
    let copiedWhileWriting = false;
    for (let i = 0; i < 60 && !copiedWhileWriting; i++) {
      insert(`more ${i} ${'z'.repeat(9000)}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
      copiedWhileWriting = (await writing.frames())!.copied > 0;
    }
    expect(copiedWhileWriting).toBe(true);
    await writing.close();
    db.close();
  });

  it('only ever copies on its own (PASSIVE): it never takes the write lock the writer waits for', async () => {
    // A RESTART takes the write lock, and copies and syncs under it whatever the writer committed since the
    // PASSIVE before it: at 1M the writer's BEGIN IMMEDIATE then waited, and in add-100s failed with
    // "database is locked". Here both conditions that ran one (an eager copy that copied everything; a WAL
    // past restartFrames, all copied) hold on many polls.
    const { file, db, insert } = walFile('no-restart.db');
    const checkpointer = SqliteCheckpointer.start(file, {
      fromBytes: 0,
      pollMs: 2,
      eagerPollMs: 2,
      frames: 4,
      restartFrames: 8,
      eagerFrom: 8,
      eagerFrames: 1,
    })!;
    // Back to back (no await between): the writer never finds the WAL all copied, so it grows past 8 frames.
    for (let i = 0; i < 20; i++) insert(`row ${i} ${'w'.repeat(5000)}`);
    let frames = (await checkpointer.frames())!;
    for (let i = 0; i < 400 && frames.copied < frames.log; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      frames = (await checkpointer.frames())!;
    }
    expect(frames.log).toBeGreaterThan(8);
    expect(frames.copied).toBe(frames.log);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const modes = (await checkpointer.modes())!;
    expect(Object.keys(modes)).toEqual(['PASSIVE']);
    expect(modes.PASSIVE).toBeGreaterThan(0);
    // The writer's next transaction finds every frame copied and starts the WAL over by itself.
    insert('next');
    expect((await checkpointer.frames())!.log).toBeLessThan(frames.log);
    // Asked to truncate (after a delete), it does, and says so.
    expect((await checkpointer.truncate())!.busy).toBe(0);
    expect(Object.keys((await checkpointer.modes())!).sort()).toEqual(['PASSIVE', 'TRUNCATE']);
    await checkpointer.close();
    expect(await checkpointer.modes()).toBeUndefined();
    db.close();
  });

  it('is not started for small files, nor for in-memory databases', () => {
    const { file, db } = walFile('small.db');
    expect(SqliteCheckpointer.start(file)).toBeUndefined();
    expect(SqliteCheckpointer.start(':memory:', { fromBytes: 0 })).toBeUndefined();
    expect(SqliteCheckpointer.start(join(dir, 'missing.db'), { fromBytes: 0 })).toBeUndefined();
    db.close();
  });

  it('is started by default from 4 MiB: an archive of ~1k memories, not only the large ones', async () => {
    // The writer's own checkpoint inside a COMMIT was the add-1 p99 at 10k memories (a 37 MB file).
    expect(BACKGROUND_CHECKPOINT_FROM_BYTES).toBe(4 * 1024 * 1024);
    const { file, db, insert } = walFile('four-mib.db');
    insert('x'.repeat(3_000_000));
    db.pragma('wal_checkpoint(TRUNCATE)');
    expect(statSync(file).size).toBeLessThan(BACKGROUND_CHECKPOINT_FROM_BYTES);
    expect(SqliteCheckpointer.start(file)).toBeUndefined();
    insert('y'.repeat(1_500_000));
    db.pragma('wal_checkpoint(TRUNCATE)');
    expect(statSync(file).size).toBeGreaterThanOrEqual(BACKGROUND_CHECKPOINT_FROM_BYTES);
    const checkpointer = SqliteCheckpointer.start(file);
    expect(checkpointer).toBeDefined();
    await checkpointer!.close();
    db.close();
  });

  it('tells its owner when its thread ends without close (here: its connection cannot open)', async () => {
    // A folder passes the size check but is no database: the thread fails and ends; the test times out if
    // the owner is never told.
    let checkpointer: SqliteCheckpointer | undefined;
    await new Promise<void>((resolve) => {
      checkpointer = SqliteCheckpointer.start(dir, { fromBytes: 0 }, resolve);
    });
    expect(checkpointer).toBeDefined();
    expect(await checkpointer!.checkpoint()).toBeUndefined();
    await checkpointer!.close();
    // A closed one is not lost.
    let lost = 0;
    const { file, db } = walFile('closed.db');
    const closed = SqliteCheckpointer.start(file, { fromBytes: 0 }, () => lost++)!;
    await closed.close();
    db.close();
    expect(lost).toBe(0);
  });

  it('starts beside a store whose file grows past its size while open, not only at open', async () => {
    const file = join(dir, 'growing.db');
    const first = createSqliteStore(file, { checkpointer: false });
    await first.writeMemories('c', [write('c', 'm0', 'the first memory of a new archive', 0)]);
    await first.close();
    const opened = statSync(file).size;
    const store = createSqliteStore(file, { checkpointer: { fromBytes: opened + 1, pollMs: 1, frames: 1 } });
    const add = async (from: number, count: number) => {
      for (let i = from; i < from + count; i++) {
        await store.writeMemories('c', [
          write('c', `m${i}`, `memory ${i} ${'harbour walk '.repeat(300)}`, i),
        ]);
      }
    };
    await add(1, 10);
    // The file grows when a checkpoint copies the WAL into it (here another connection's, as the writer's own
    // would after 8,192 pages): past the size, but the store was opened below it.
    const other = new Database(file);
    other.pragma('wal_checkpoint(PASSIVE)');
    other.close();
    const grown = statSync(file).size;
    expect(grown).toBeGreaterThan(opened);
    // Within CHECKPOINTER_SIZE_CHECK_COMMITS commits the store looks again and starts its checkpointer, which
    // then copies the WAL by itself (the writer's own checkpoint is 8,192 pages away).
    await add(11, 80);
    const deadline = Date.now() + 5000;
    while (statSync(file).size === grown && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    expect(statSync(file).size).toBeGreaterThan(grown);
    await store.close();
    const reopened = createSqliteStore(file, { checkpointer: false });
    expect(await reopened.countMemories('c')).toBe(91);
    await reopened.close();
  });

  it('a maintenance pause copies a long WAL, and the next write restarts it', async () => {
    const file = join(dir, 'pause.db');
    // The checkpointer never polls here: only the pause copies.
    const options = { fromBytes: 0, pollMs: 1e7, eagerPollMs: 1e7, restartFrames: 100 };
    const store = createSqliteStore(file, { checkpointer: options });
    const watch = SqliteCheckpointer.start(file, { fromBytes: 0, pollMs: 1e7, eagerPollMs: 1e7 })!;
    const add = async (from: number, count: number) => {
      for (let i = from; i < from + count; i++) {
        await store.writeMemories('c', [
          write('c', `m${i}`, `memory ${i} ${'harbour walk '.repeat(200)}`, i),
        ]);
      }
    };
    await add(0, 10);
    const before = (await watch.frames())!;
    expect(before.log).toBeGreaterThanOrEqual(100);
    expect(before.copied).toBeLessThan(before.log);
    await store.maintenancePause!();
    const after = (await watch.frames())!;
    expect(after.copied).toBe(after.log);
    await add(10, 1);
    // Every frame was in the file: the write began a new WAL, a few frames long.
    expect((await watch.frames())!.log).toBeLessThan(before.log);
    // A short WAL (one write's frames, below restartFrames) is left to the checkpointer's own polls.
    const short = (await watch.frames())!;
    expect(short.copied).toBeLessThan(short.log);
    await store.maintenancePause!();
    expect((await watch.frames())!.copied).toBe(short.copied);
    await watch.close();
    await store.close();
    const reopened = createSqliteStore(file, { checkpointer: false });
    expect(await reopened.countMemories('c')).toBe(11);
    await reopened.close();
  });

  it('runs beside a store: its writes survive close and reopen, and close leaves no WAL behind', async () => {
    const file = join(dir, 'store.db');
    const store = createSqliteStore(file, { checkpointer: { fromBytes: 0, pollMs: 1, frames: 1 } });
    for (let i = 0; i < 20; i++) {
      await store.writeMemories('c', [write('c', `m${i}`, `memory number ${i} about harbour walks`, i)]);
    }
    await store.close();
    expect(() => statSync(`${file}-wal`)).toThrow();
    const reopened = createSqliteStore(file, { checkpointer: false });
    expect(await reopened.countMemories('c')).toBe(20);
    expect((await reopened.integrityCheck()).ok).toBe(true);
    await reopened.close();
  });
});
