import pg from 'pg';

/** What countPgStatements counts (read differences around the calls measured). */
export interface PgStatementCounter {
  statements: number;
  begins: number;
  /** Rows received (every result of a simple query counted). */
  rows: number;
  trace?: string[];
  /** performance.now() the trace's start offsets count from (set with `trace`; default: the first statement). */
  traceFrom?: number;
  /** process.cpuUsage() the trace's CPU offsets count from (set with `trace`; default: the first statement). */
  traceCpu?: NodeJS.CpuUsage;
}

/**
 * Counts the statements and transactions (BEGIN) this process sends through `pg.Client.query` and the rows
 * they return, and while `trace` is an array, appends each statement's time, row count and first `width`
 * characters to it. Probes read differences of `statements` / `begins` around the calls they measure. Patches
 * the prototype once.
 */
export function countPgStatements(width = 150): PgStatementCounter {
  const counter: PgStatementCounter = {
    statements: 0,
    begins: 0,
    rows: 0,
  };
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    counter.statements++;
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string })?.text;
    if (text?.startsWith('BEGIN')) counter.begins++;
    const t0 = performance.now();
    const out = (original as (...a: unknown[]) => unknown).apply(this, args);
    if (out instanceof Promise) {
      void out.then(
        (r: unknown) => {
          for (const one of Array.isArray(r) ? r : [r])
            counter.rows += (one as { rows?: unknown[] })?.rows?.length ?? 0;
        },
        () => {},
      );
    }
    const trace = counter.trace;
    if (trace && out instanceof Promise) {
      counter.traceFrom ??= t0;
      counter.traceCpu ??= process.cpuUsage();
      const from = counter.traceFrom;
      const used = process.cpuUsage(counter.traceCpu);
      // Start offset (wall), Node CPU used by then (load-robust: the gaps are Node's work between statements).
      const head = `at ${(t0 - from).toFixed(2)} cpu ${((used.user + used.system) / 1000).toFixed(2)}`;
      // The main thread's busy time while the statement was out (event loop utilisation): what of its wall
      // time is Node's own work (the other updater's, the results' parsing) rather than the server's.
      const loop = performance.eventLoopUtilization();
      void out.then(
        (r: { rowCount?: number }) =>
          trace.push(
            `${head} ${(performance.now() - t0).toFixed(2)} ms (node busy ${performance.eventLoopUtilization(loop).active.toFixed(2)}) rows ${r?.rowCount} ${text?.replace(/\s+/g, ' ').slice(0, width)}`,
          ),
        () => {},
      );
    }
    return out;
  } as typeof original;
  return counter;
}
