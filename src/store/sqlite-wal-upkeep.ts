import type Database from 'better-sqlite3';
import { WRITER_CHECKPOINT_PAGES } from './open-sqlite-database.ts';
import {
  BACKGROUND_RESTART_FRAMES,
  type CheckpointerOptions,
  SqliteCheckpointer,
  WRITER_CHECKPOINT_FRAMES,
} from './sqlite-checkpointer.ts';

/**
 * A file below the checkpointer's size has its size looked at again every this many committed writes (one
 * `stat`): a server opened on a small archive gets its checkpointer once the archive has grown, not only
 * when reopened.
 */
export const CHECKPOINTER_SIZE_CHECK_COMMITS = 64;

/**
 * The SQLite store's WAL upkeep: the background checkpointer of a large writable file (started once the file
 * has grown to its size) and the truncation of the WAL after a delete.
 */
export class SqliteWalUpkeep {
  /** Copies the WAL into the file off this thread (large writable files only). */
  private checkpointer: SqliteCheckpointer | undefined;
  /**
   * Commits left before the file's size is looked at again, while it may still need a checkpointer (a
   * writable file below the size, e.g. a server started on a new archive that grows for months); undefined
   * once one runs or when none may.
   */
  private checkpointerWatch: number | undefined;
  private readonly checkpointerOptions: CheckpointerOptions | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly file: string,
    options: { readonly?: boolean; checkpointer?: CheckpointerOptions | false },
    private readonly run: <T>(work: () => T) => T,
  ) {
    this.checkpointerOptions = options.checkpointer === false ? undefined : options.checkpointer;
    const mayCheckpoint =
      !options.readonly && options.checkpointer !== false && file !== ':memory:' && file !== '';
    if (mayCheckpoint) this.startCheckpointer();
  }

  /** Starts the background checkpointer when the file has reached its size; otherwise watches commits. */
  private startCheckpointer(): void {
    const db = this.db;
    this.checkpointer = SqliteCheckpointer.start(this.file, this.checkpointerOptions, () => {
      if (db.open) db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
    });
    this.checkpointerWatch = this.checkpointer ? undefined : CHECKPOINTER_SIZE_CHECK_COMMITS;
    // The checkpointer copies the WAL from here on; this connection's own checkpoint is the net.
    if (this.checkpointer) db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_FRAMES}`);
  }

  /** After a write transaction committed: a file that has grown past the size gets its checkpointer. */
  committed(): void {
    if (this.checkpointerWatch === undefined || --this.checkpointerWatch > 0 || !this.db.open) return;
    this.startCheckpointer();
  }

  /**
   * After a delete: copies the WAL into the (secure-deleted) main file and truncates it, so the WAL does not
   * keep the forgotten text in old frames. Best effort: another process reading the file can hold frames
   * back, and then the next delete or the next automatic checkpoint finishes the job. A checkpoint running
   * on the background checkpointer makes this one busy at once: that thread truncates after it instead.
   */
  async truncateWal(): Promise<true> {
    if (!this.db.readonly && this.file !== ':memory:') {
      const [row] = this.run(() => this.db.pragma('wal_checkpoint(TRUNCATE)')) as Array<{ busy: number }>;
      if (row?.busy && this.checkpointer) await this.checkpointer.truncate();
    }
    return true;
  }

  /**
   * Between steps of long maintenance: a WAL of at least BACKGROUND_RESTART_FRAMES frames (the checkpointer's
   * `restartFrames`), not all of them copied yet, is copied into the file now on the checkpointer's thread, so
   * the next write transaction restarts it. A compaction's steps write back to back and leave the WAL no
   * moment to be restarted: at 100k the writer's own checkpoint then ran inside one step's COMMIT in ~36
   * (~100 ms; docs/living-archive.md "Round 27").
   */
  async maintenancePause(): Promise<void> {
    const checkpointer = this.checkpointer;
    if (!checkpointer) return;
    const frames = await checkpointer.frames();
    const from = this.checkpointerOptions?.restartFrames ?? BACKGROUND_RESTART_FRAMES;
    if (frames !== undefined && frames.log >= from && frames.copied < frames.log)
      await checkpointer.checkpoint();
  }

  /** The checkpointer's connection (closed before the store's own). */
  async close(): Promise<void> {
    await this.checkpointer?.close();
  }
}
