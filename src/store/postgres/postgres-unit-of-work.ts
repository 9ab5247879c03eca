import type pg from 'pg';
import type { UnitEdges } from './postgres-unit-edges.ts';
import type { UnitPrefetch } from './postgres-unit-prefetch.ts';

/**
 * Statements sent in front of others in one simple query (a unit's BEGIN, its queued statements): `count`
 * queued statements end it; `settle` gets its results (those of the statements after it removed).
 */
export interface Lead {
  text: string;
  count: number;
  settle: (results: pg.QueryResult[]) => void;
  fail: (error: unknown) => void;
}

/** A simple query's results as a list (one statement gives one result, not a list). */
export function asResults(out: unknown): pg.QueryResult[] {
  return Array.isArray(out) ? (out as pg.QueryResult[]) : [out as pg.QueryResult];
}

/** A connection's own query below the unit's wrapper (texts and named statements, in call order). */
type RawQuery = (text: string) => Promise<unknown>;

interface Queued {
  /** ONE statement (the results of a flush are matched to the queue by position from the end). */
  text: string;
  /** A queued read (queueRead): settled with its statement's result. */
  read?: { resolve: (result: pg.QueryResult) => void; reject: (error: unknown) => void };
}

/**
 * A unit of work in progress (PostgresSession.unitOfWork): its connection, what it read ahead, and the
 * statements it holds back to send with its next statement. Node's pg client pays one round trip per query,
 * so statements whose result the work does not need yet (queued writes, a read the caller collects after
 * the unit, a unit's BEGIN) ride in front of the next statement, in ONE simple query, or with the COMMIT.
 */
export class UnitOfWork {
  open = true;
  /** A read unit (PostgresSession.readUnit): a read-only transaction that writes never join. */
  readOnly = false;
  prefetch?: UnitPrefetch;
  /** The read-ahead is read by the first call that wants it (a unit that starts with the records' write). */
  prefetchDue?: Promise<UnitPrefetch> | 'due';
  /** Stored edges read in the unit (changeEdges skips its read for pairs that touch them). */
  edges?: UnitEdges | undefined;
  /** The unit's last edge write (PostgresSession.serialEdgeWrite): the next one starts after it. */
  edgeWrites: Promise<unknown> = Promise.resolve();
  /** Edge writes started and not settled (none: the next one starts at once, in its caller's order). */
  edgeWritesRunning = 0;
  /** Meta writes queued by deferMetaInUnit, by key (the last write of a key wins). */
  readonly deferredMeta = new Map<string, string>();
  /** Gets the results of a lazy unit's BEGIN text when it went out in front of a statement. */
  onBegin?: (results: pg.QueryResult[]) => void;
  /** Writes of the unit that may change what it reads ahead (a read-ahead in flight across one is dropped). */
  changes = 0;
  private queue: Queued[] = [];

  constructor(
    readonly session: object,
    readonly contextId: string,
    readonly client: pg.PoolClient,
    private readonly query: RawQuery,
    /** The transaction's begin, not sent yet (a lazy unit): it goes with the unit's first statement. */
    private begin?: string,
  ) {}

  /** A scoped write that may change the context parts of the read-ahead. */
  invalidatePrefetch(): void {
    this.changes++;
    this.prefetch?.invalidateContext();
  }

  /** Queues a write whose result nobody reads (one statement, literals only). */
  defer(text: string): void {
    this.queue.push({ text });
  }

  /** Queues the meta writes waiting for a meta statement (one about to run). */
  releaseMeta(): void {
    for (const text of this.deferredMeta.values()) this.defer(text);
    this.deferredMeta.clear();
  }

  /**
   * Queues a read (one statement, literals only) whose result is wanted later: it is sent with the unit's
   * next statement or its COMMIT, so it sees exactly what it would see now (nothing of this transaction runs
   * between, and no other writer of the context runs while the unit holds its lock). If nothing else is sent
   * by the next macrotask (the caller awaits it inside the unit), it is sent alone.
   */
  queueRead(text: string): Promise<pg.QueryResult> {
    return new Promise((resolve, reject) => {
      const entry: Queued = { text, read: { resolve, reject } };
      this.queue.push(entry);
      setImmediate(() => {
        if (this.open && this.queue.includes(entry)) this.send().catch(() => {});
      });
    });
  }

  /** Whether statements wait to go out before the unit's next one. */
  waiting(): boolean {
    return this.begin !== undefined || this.queue.length > 0;
  }

  /** Takes what waits (the unit's BEGIN, queued statements) to send in front of a statement. */
  take(): Lead | undefined {
    const begin = this.begin;
    const queued = this.queue.splice(0);
    this.begin = undefined;
    if (begin === undefined && queued.length === 0) return undefined;
    return {
      text: [...(begin === undefined ? [] : [begin]), ...queued.map((entry) => entry.text)].join('; '),
      count: queued.length,
      settle: (results) => {
        if (begin !== undefined) this.onBegin?.(results.slice(0, results.length - queued.length));
        const tail = results.slice(results.length - queued.length);
        queued.forEach((entry, at) => {
          entry.read?.resolve(tail[at]!);
        });
      },
      fail: (error) => {
        for (const entry of queued) entry.read?.reject(error);
      },
    };
  }

  /**
   * Sends what waits and `text` (ONE statement, literals only; none: only what waits) as one simple query;
   * `text`'s result.
   */
  async send(text?: string): Promise<pg.QueryResult> {
    const lead = this.take();
    if (lead === undefined && text === undefined) throw new Error('unit: nothing to send');
    const full = [lead?.text, text].filter((part) => part !== undefined).join('; ');
    let results: pg.QueryResult[];
    try {
      results = asResults(await this.query(full));
    } catch (error) {
      lead?.fail(error);
      throw error;
    }
    lead?.settle(text === undefined ? results : results.slice(0, -1));
    return results.at(-1)!;
  }

  /** The text that commits the unit: what still waits, the queued meta writes, COMMIT. */
  commitText(): { text: string; settle: (out: unknown) => void; fail: (error: unknown) => void } {
    const begin = this.begin;
    this.begin = undefined;
    const queued = this.queue.splice(0);
    const meta = [...this.deferredMeta.values()];
    this.deferredMeta.clear();
    const texts = [...queued.map((entry) => entry.text), ...meta, 'COMMIT'];
    return {
      text: [...(begin === undefined ? [] : [begin]), ...texts].join('; '),
      settle: (out) => {
        const results = asResults(out);
        const tail = results.slice(results.length - texts.length);
        queued.forEach((entry, at) => {
          entry.read?.resolve(tail[at]!);
        });
        this.prefetch?.ended(true);
      },
      fail: (error) => {
        for (const entry of queued) entry.read?.reject(error);
        this.prefetch?.ended(false);
      },
    };
  }

  /** The unit failed before its COMMIT: reads still queued never ran. */
  abandon(error: unknown): void {
    for (const entry of this.queue.splice(0)) entry.read?.reject(error);
    this.prefetch?.ended(false);
  }
}
