import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * Files from this size get a background checkpointer. The writer's own checkpoint copies up to
 * WRITER_CHECKPOINT_PAGES distinct pages inside a COMMIT, so its cost grows with the file up to ~32 MiB: at
 * 10k memories (a 37 MB file) it was a 50-85 ms COMMIT once in ~40 add-1s, the add-1 p99 (58.9-67.6 ms; with
 * the checkpointer 15.1 ms; docs/living-archive.md "Round 27"). Below 4 MiB it copies at most 1,024 pages,
 * and the tests' many small archives start no thread.
 */
export const BACKGROUND_CHECKPOINT_FROM_BYTES = 4 * 1024 * 1024;

/** How often the checkpointer looks at the WAL's size (one 136-byte read of the -shm file). */
export const BACKGROUND_CHECKPOINT_POLL_MS = 100;

/**
 * The poll while the WAL nears the writer's own checkpoint (from BACKGROUND_EAGER_FROM frames: writes back to
 * back left no moment to restart it). Then a poll copies once BACKGROUND_EAGER_FRAMES wait, so the writer's
 * checkpoint at WRITER_CHECKPOINT_FRAMES finds about that many frames left instead of up to
 * BACKGROUND_CHECKPOINT_FRAMES. A checkpoint costs ~30-50 us a frame here (random writes and the sync of the
 * file): at 1M, the writer's copy of up to 2,047 frames was a COMMIT of ~90-100 ms once in ~100 add-1s, the
 * add-1 p99 (bench/add-phase-probe.ts, "Round 25" in docs/living-archive.md).
 */
export const BACKGROUND_EAGER_POLL_MS = 20;

/**
 * WAL frames not yet in the file from which the checkpointer copies them (a PASSIVE checkpoint; ~19 add-1
 * at 1M). Copying every few adds would copy the same hot pages (counters, index roots) again each time;
 * copying only from 4,096 left the WAL long enough that the writer's own checkpoint still ran (measured).
 */
export const BACKGROUND_CHECKPOINT_FRAMES = 2048;

/**
 * A WAL of at least this many frames, not all of them copied, is copied between the steps of long
 * maintenance (`maintenancePause` in sqlite-wal-upkeep.ts), so the writer's next transaction restarts it.
 * The checkpointer never restarts the WAL itself: a RESTART takes the write lock and, when the writer
 * committed during the PASSIVE before it, copies those frames and syncs the file while holding it. At 1M
 * that made the writer's BEGIN IMMEDIATE wait ~20-80 ms once in a few hundred add-1s, and fail with "database
 * is locked" within ~65 ms (well inside busy_timeout) in add-100s (docs/living-archive.md "Round 35"). A
 * writer restarts the WAL itself when a transaction of its begins with every frame copied, which the eager
 * copies below make the common case; otherwise its own checkpoint at WRITER_CHECKPOINT_FRAMES does.
 */
export const BACKGROUND_RESTART_FRAMES = 8192;

/**
 * The writer's own wal_autocheckpoint while a checkpointer runs: the net when writes outrun it (a bulk
 * import) or it cannot restart the WAL; then little is left for the writer to copy.
 */
export const WRITER_CHECKPOINT_FRAMES = 16384;

/**
 * Where the eager copies start: 4,096 frames before the writer's own checkpoint (~50 add-1s at 1M; the first
 * eager copy may take up to BACKGROUND_CHECKPOINT_FRAMES, ~0.1 s). Each copies once BACKGROUND_EAGER_FRAMES
 * wait: copying on every poll, from BACKGROUND_RESTART_FRAMES on, synced the file ~50 times a second through a
 * bulk import's WAL cycles.
 */
export const BACKGROUND_EAGER_FROM = WRITER_CHECKPOINT_FRAMES - 4096;

/** What an eager copy waits for (~3 add-1s at 1M): the writer's own checkpoint finds at most about this left. */
export const BACKGROUND_EAGER_FRAMES = 256;

export interface CheckpointerOptions {
  /** Default BACKGROUND_CHECKPOINT_FROM_BYTES. */
  fromBytes?: number;
  /** Default BACKGROUND_CHECKPOINT_POLL_MS. */
  pollMs?: number;
  /** Default BACKGROUND_EAGER_POLL_MS. */
  eagerPollMs?: number;
  /** Default BACKGROUND_CHECKPOINT_FRAMES. */
  frames?: number;
  /** The WAL length from which a maintenance pause copies it (default BACKGROUND_RESTART_FRAMES). */
  restartFrames?: number;
  /** Default BACKGROUND_EAGER_FROM. */
  eagerFrom?: number;
  /** Default BACKGROUND_EAGER_FRAMES. */
  eagerFrames?: number;
}

/** A PASSIVE checkpoint's row: WAL frames, frames copied into the file, busy = 1 when it could not run. */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/**
 * The WAL checkpoints of a file, on a thread of their own: a second connection runs
 * `PRAGMA wal_checkpoint(PASSIVE)` once BACKGROUND_CHECKPOINT_FRAMES frames wait in the WAL. The writer's
 * automatic checkpoint runs inside the COMMIT that crosses its threshold, so one add in ~77 at 1M waited
 * for 8,192 pages to be copied and the file synced (COMMIT 130-1,150 ms wall: the add-1 p99 of 200 adds,
 * bench/add-phase-probe.ts). A PASSIVE checkpoint blocks neither readers nor the writer (SQLite WAL), so
 * the writer's commits stay small; only the checkpointer waits for the copy and the sync. Crash safety is
 * SQLite's own: a checkpoint interrupted at any point leaves the WAL authoritative.
 */
export class SqliteCheckpointer {
  private readonly worker: Worker;
  private readonly replies: Array<(result: unknown) => void> = [];
  private closed: Promise<void> | undefined;
  private exited = false;

  private constructor(file: string, options: CheckpointerOptions, onLost: () => void) {
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        file,
        pollMs: options.pollMs ?? BACKGROUND_CHECKPOINT_POLL_MS,
        eagerPollMs: options.eagerPollMs ?? BACKGROUND_EAGER_POLL_MS,
        frames: options.frames ?? BACKGROUND_CHECKPOINT_FRAMES,
        eagerFrom: options.eagerFrom ?? BACKGROUND_EAGER_FROM,
        eagerFrames: options.eagerFrames ?? BACKGROUND_EAGER_FRAMES,
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      },
    });
    // Never keeps the process alive, never takes it down: without it the writer checkpoints as before.
    this.worker.unref();
    this.worker.on('message', (result: unknown) => this.replies.shift()?.(result));
    this.worker.on('error', () => this.settle());
    this.worker.on('exit', () => {
      this.exited = true;
      this.settle();
      // Gone without close (its connection failed to open, the thread crashed): the writer takes over.
      if (!this.closed) onLost();
    });
  }

  /**
   * A checkpointer for `file` when it is a file of at least `fromBytes`; undefined otherwise. `onLost` runs
   * if its thread ends without close (the caller gives the writer its own checkpoints back).
   */
  static start(
    file: string,
    options: CheckpointerOptions = {},
    onLost: () => void = () => {},
  ): SqliteCheckpointer | undefined {
    if (file === ':memory:' || file === '') return undefined;
    try {
      if (statSync(file).size < (options.fromBytes ?? BACKGROUND_CHECKPOINT_FROM_BYTES)) return undefined;
      return new SqliteCheckpointer(file, options, onLost);
    } catch {
      return undefined;
    }
  }

  /** One checkpoint now (on the checkpointer's thread); undefined when it is gone. */
  checkpoint(): Promise<CheckpointResult | undefined> {
    return this.ask('checkpoint') as Promise<CheckpointResult | undefined>;
  }

  /**
   * Copies the whole WAL and truncates it to zero bytes on the checkpointer's connection (after a delete
   * whose own TRUNCATE found this thread copying: forgotten text must not stay in old frames). Needs the
   * writer between transactions; `busy` = 1 otherwise.
   */
  truncate(): Promise<CheckpointResult | undefined> {
    return this.ask('truncate') as Promise<CheckpointResult | undefined>;
  }

  /**
   * How many checkpoints its thread has run, by mode (PASSIVE from its polls and `checkpoint`, TRUNCATE when
   * asked); undefined when it is gone.
   */
  modes(): Promise<Record<string, number> | undefined> {
    return this.ask('modes') as Promise<Record<string, number> | undefined>;
  }

  private ask(message: 'checkpoint' | 'frames' | 'truncate' | 'modes'): Promise<unknown> {
    if (this.closed || this.exited) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.replies.push((result) => {
        if (this.replies.length === 0) this.worker.unref();
        resolve(result);
      });
      this.worker.ref();
      this.worker.postMessage(message);
    });
  }

  /** The WAL's frames and those copied into the file, as the checkpointer reads them; undefined when gone. */
  frames(): Promise<{ log: number; copied: number } | undefined> {
    return this.ask('frames') as Promise<{ log: number; copied: number } | undefined>;
  }

  /** Closes its connection and ends the thread; resolves once it has. */
  close(): Promise<void> {
    this.closed ??= this.exited
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          this.worker.once('exit', () => resolve());
          // Referenced while closing: an unreferenced thread would let the process exit before it has.
          this.worker.ref();
          this.worker.postMessage('close');
        });
    return this.closed;
  }

  private settle(): void {
    for (const reply of this.replies.splice(0)) reply(undefined);
  }
}

/**
 * The thread (CommonJS, evaluated: no loader needed under tsx or from dist/). Its connection only
 * checkpoints: no migrations, no reads. It reads the WAL's size from the wal-index header in the -shm file
 * (documented layout, sqlite.org/walformat.html: mxFrame, the last valid frame, at byte 16; nBackfill, the
 * frames already copied, at byte 96; native byte order), without a lock: a torn read only moves one
 * checkpoint by a poll. A failing checkpoint (busy, the file gone) is left for the next poll or the writer.
 */
const WORKER_SOURCE = `
const fs = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
// timeout 0: a TRUNCATE (asked for after a delete) that would wait for the writer gives up instead (busy).
const db = new Database(workerData.file, { fileMustExist: true, timeout: 0 });
db.pragma('synchronous = NORMAL');
db.pragma('wal_autocheckpoint = 0');
const header = new Uint32Array(34);
const bytes = new Uint8Array(header.buffer);
let shm;
// [frames in the WAL, frames copied into the file]
const frames = () => {
  try {
    shm ??= fs.openSync(workerData.file + '-shm', 'r');
    if (fs.readSync(shm, bytes, 0, bytes.length, 0) < bytes.length) return [0, 0];
    return [header[4], header[24]];
  } catch {
    return [0, 0];
  }
};
// Checkpoints run, by mode (the owner's \`modes()\`).
const modes = {};
const checkpoint = (mode) => {
  modes[mode] = (modes[mode] ?? 0) + 1;
  try {
    return db.pragma('wal_checkpoint(' + mode + ')')[0];
  } catch {
    return undefined;
  }
};
let timer;
let previous = 0;
const poll = () => {
  const [log, copied] = frames();
  // Near the writer's own checkpoint (it copies whatever is left, inside a COMMIT): copy from a few hundred
  // waiting frames on, so little is left for it, polled faster meanwhile; and whatever waits once the writer
  // paused (no new frame since the last poll), so an idle WAL is not polled for at that rate.
  const near = log >= workerData.eagerFrom && log > copied;
  const eager = near && (log - copied >= workerData.eagerFrames || log === previous);
  previous = log;
  // PASSIVE only: it takes no lock the writer waits for (see BACKGROUND_RESTART_FRAMES for why no RESTART).
  if (log - copied >= workerData.frames || eager) checkpoint('PASSIVE');
  timer = setTimeout(poll, near ? workerData.eagerPollMs : workerData.pollMs);
};
timer = setTimeout(poll, workerData.pollMs);
parentPort.on('message', (message) => {
  if (message === 'checkpoint') parentPort.postMessage(checkpoint('PASSIVE'));
  else if (message === 'truncate') parentPort.postMessage(checkpoint('TRUNCATE'));
  else if (message === 'modes') parentPort.postMessage({ ...modes });
  else if (message === 'frames') {
    const [log, copied] = frames();
    parentPort.postMessage({ log, copied });
  }
  else if (message === 'close') {
    clearTimeout(timer);
    if (shm !== undefined) fs.closeSync(shm);
    db.close();
    parentPort.close();
  }
});
`;
