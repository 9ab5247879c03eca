/**
 * A small progress line for long CLI jobs (ingest, eval). Drawn only when the stream is a terminal, so
 * pipes, files, CI logs and `--json` output never see control characters. Redraws at most every 100 ms.
 *
 *   const progress = createProgress({ label: 'ingest', total: 1000 });
 *   progress.update(250); ... progress.done();
 */
export interface Progress {
  /** Sets the absolute count (items done so far). */
  update(done: number, note?: string): void;
  /** Clears the line. Call once at the end, also on failure. */
  done(): void;
}

export interface ProgressOptions {
  label: string;
  /** Known total for a bar and percentage; absent shows a running count with a rate. */
  total?: number;
  stream?: NodeJS.WriteStream;
  /** Force drawing on or off (default: only when the stream is a TTY). */
  enabled?: boolean;
  /** Clock in ms (tests inject one). */
  now?: () => number;
}

const BAR_WIDTH = 24;
const REDRAW_MS = 100;

export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const enabled = options.enabled ?? stream.isTTY === true;
  if (!enabled) return { update() {}, done() {} };
  const now = options.now ?? (() => performance.now());
  const started = now();
  let lastDraw = Number.NEGATIVE_INFINITY;
  let drawn = false;
  return {
    update(done, note) {
      const at = now();
      if (at - lastDraw < REDRAW_MS) return;
      lastDraw = at;
      stream.write(
        `\r\x1b[2K${formatProgress(options.label, done, options.total, (at - started) / 1000, note)}`,
      );
      drawn = true;
    },
    done() {
      if (drawn) stream.write('\r\x1b[2K');
      drawn = false;
    },
  };
}

/** The text of one progress line (exported for tests): "ingest [#####-----] 50% 500/1000 1,234/s". */
export function formatProgress(
  label: string,
  done: number,
  total: number | undefined,
  seconds: number,
  note?: string,
): string {
  const rate = seconds > 0 ? `${Math.round(done / seconds).toLocaleString('en-US')}/s` : '';
  const parts = [label];
  if (total !== undefined && total > 0) {
    const fraction = Math.min(1, done / total);
    const filled = Math.round(fraction * BAR_WIDTH);
    parts.push(`[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`, `${Math.floor(fraction * 100)}%`);
    parts.push(`${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')}`);
  } else {
    parts.push(done.toLocaleString('en-US'));
  }
  if (rate) parts.push(rate);
  if (note) parts.push(note);
  return parts.join(' ');
}
