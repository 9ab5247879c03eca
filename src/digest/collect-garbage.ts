import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Memories from which a full rebuild (bulk import, recovery, explicit compaction) collects garbage between its
 * phases. Why: V8 lets the old generation grow to several times what survived its last full collection before
 * it collects again, so a rebuild's phases stacked their garbage and its peak RSS was set by when V8 happened
 * to collect: a 1M-memory import peaked at 1,115-1,456 MiB over rounds 44-48 (1.5 GB is the limit), at the
 * relation stage's load and schema pass. A collection costs ~0.1-0.3 s at 1M (a 300-500 MB live heap); below
 * this size the peak is far from any limit and collections would only cost time (docs/living-archive.md
 * "Round 49").
 */
export const COLLECT_FROM = 50_000;

/** Growth of the used heap since the last collection from which collectGarbageIfGrown collects. */
export const COLLECT_GROWTH_BYTES = 128 * 1024 * 1024;

let collector: (() => void) | null | undefined;
/** The used heap after this thread's last collection here (0: none yet). */
let usedAfterLast = 0;
/** Collections run here in this thread, and their seconds (benchmarks print them). */
const spent = { collections: 0, seconds: 0 };

/**
 * One full (mark-compact) garbage collection of this thread's heap, now; false when the runtime gives no way to
 * ask for one (nothing happens then). `--expose-gc` is switched on only for the moment it takes to fetch the
 * function from a fresh context and switched off again, so neither this process's global object nor contexts
 * made later get a `gc`. A process started with `--expose-gc` uses its own.
 */
export function collectGarbage(): boolean {
  collector ??= findCollector();
  if (collector === null) return false;
  const started = performance.now();
  collector();
  spent.collections++;
  spent.seconds += (performance.now() - started) / 1000;
  usedAfterLast = getHeapStatistics().used_heap_size;
  return true;
}

/**
 * collectGarbage when the used heap (live and not yet collected) has grown by COLLECT_GROWTH_BYTES since the
 * last collection here: for the steps of a phase that allocates as it goes (a load, the schema pass), where a
 * collection after every step would cost more than it saves. A read of the heap's counters otherwise (~1 us).
 */
export function collectGarbageIfGrown(): boolean {
  if (getHeapStatistics().used_heap_size < usedAfterLast + COLLECT_GROWTH_BYTES) return false;
  return collectGarbage();
}

export function garbageCollectionStats(): { collections: number; seconds: number } {
  return { ...spent };
}

function findCollector(): (() => void) | null {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return exposed as () => void;
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    return null;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
