import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { ImportItem } from '../importers/importer-spec.ts';
import { workerExecArgv } from '../store/worker-exec-argv.ts';
import { explicitSequence } from './ingest-stages.ts';
import { type PreparedRecord, type PrepareOptions, plainRecordSize } from './prepare-records.ts';
import type { PrepareMessage, PrepareReply, PrepareRequest } from './prepare-worker-protocol.ts';

/** An import item, with its record already validated, hashed and given views when the helper did it (items come in chunks). */
export interface PreparedItem {
  item: ImportItem;
  prepared?: PreparedRecord;
}

export interface PreparedItemsOptions extends PrepareOptions {
  /** Records an import passes through before a helper thread prepares the rest (default PREPARE_HELPER_FROM). */
  helperFrom?: number;
  /** The helper's entry module (tests: one that fails). */
  helperEntry?: URL;
}

/**
 * Records of an import before the helper starts. Its start (80-90 ms built, 220-270 ms from the TypeScript sources,
 * on the other core) slowed a 10k import from the sources by ~8% at 4,096 (the caller's parse and writes
 * 0.1-0.2 s slower while it loaded; `npx tsx bench/ingest-probe.ts --size 10k`, alternating), where it saves
 * ~17 us a record: so it pays from a few tens of thousands of records, and small imports never start one.
 */
export const PREPARE_HELPER_FROM = 16_384;
/** Items per chunk sent to the helper (~6 ms of its work on chat records). */
const CHUNK = 256;
/**
 * Bytes of records per chunk (plainRecordSize): with AHEAD chunks, what the read-ahead holds stays ~32 MiB
 * (and as much again in the helper's copies) even when records are large documents, not 4,096 of them.
 */
const CHUNK_BYTES = 2 * 1024 * 1024;
/**
 * Chunks read ahead of the one being consumed: the helper works on these while the caller writes. Two write
 * batches' worth (UNSCHEDULED_INGEST_BATCH_SIZE = 2,000): the caller consumes a batch in a burst between its
 * writes, so with less ahead it waited for the helper each batch (~1 s of 10 at 100k with 1,024 ahead).
 */
const AHEAD = 16;

interface Chunk {
  items: ImportItem[];
  /** Index in `items` of each record sent to the helper, in order. */
  sent: number[];
  reply?: Promise<PrepareReply | undefined>;
}

/**
 * The items of an import in order, in chunks of up to 256 (a step of this generator a chunk: no microtask hop
 * per item), with the record-only part of their way in (validation, write time, content
 * hash, views, relation keys: prepare-records.ts) done ahead on a helper thread once the import is large: the
 * caller's thread then spends its time on the writes, which only it can do, while the second core prepares the
 * next records. What comes out is what the caller would have made itself: the same function runs in both
 * threads, and only records that are plain data with their own sequence go across (a record without one gets
 * its sequence from the store, in order, in the caller's thread). A chunk the helper cannot take (a copy
 * fails, the helper fails or exits) comes back unprepared and the caller prepares it as always.
 */
export async function* preparedItems(
  items: AsyncIterable<ImportItem> | Iterable<ImportItem>,
  options: PreparedItemsOptions,
): AsyncGenerator<PreparedItem[]> {
  const asynchronous = Symbol.asyncIterator in items;
  const source = iteratorOf(items);
  const from =
    options.helperFrom ??
    (process.env.GRAPHMEMIX_PREPARE_HELPER === '0' ? Number.POSITIVE_INFINITY : PREPARE_HELPER_FROM);
  const worthIt = from < Number.POSITIVE_INFINITY && availableParallelism() > 1;
  const prepareOptions: PrepareOptions = { contextId: options.contextId, maxTextBytes: options.maxTextBytes };
  let helper: PrepareHelper | undefined;
  let sequenced = 0;
  let sourceDone = false;
  let sourceError: { error: unknown } | undefined;
  /** The next chunk of the source (a sync source read without a microtask per item), or undefined at its end. */
  const read = async (withSizes: boolean): Promise<Chunk | undefined> => {
    const chunk: Chunk = { items: [], sent: [] };
    let bytes = 0;
    try {
      while (!sourceDone && chunk.items.length < CHUNK && bytes < CHUNK_BYTES) {
        const next = asynchronous
          ? await (source as AsyncIterator<ImportItem>).next()
          : (source as Iterator<ImportItem>).next();
        if (next.done) {
          sourceDone = true;
          break;
        }
        const item = next.value;
        if (withSizes) {
          const size = eligibleSize(item);
          if (size !== undefined) chunk.sent.push(chunk.items.length);
          bytes += size ?? 0;
        } else if (
          worthIt &&
          item.type === 'record' &&
          explicitSequence(item.record as unknown as Record<string, unknown>) !== undefined
        ) {
          sequenced++;
        }
        chunk.items.push(item);
      }
    } catch (error) {
      // Thrown after the items read before it have been handed on, where a plain loop would have met it.
      sourceDone = true;
      sourceError = { error };
    }
    return chunk.items.length === 0 ? undefined : chunk;
  };
  try {
    // Before the helper: chunks handed on as they are read (a chunk, not an item, per step of this generator).
    while (helper === undefined) {
      const chunk = await read(false);
      if (chunk === undefined) break;
      yield chunk.items.map((item) => ({ item }));
      if (sequenced >= from) helper = new PrepareHelper(options.helperEntry);
    }
    const ahead: Chunk[] = [];
    let nextId = 0;
    for (;;) {
      while (ahead.length < AHEAD && !sourceDone && helper !== undefined) {
        // Until the helper has loaded (80-90 ms built, 220-270 ms from the sources) the caller prepares one chunk
        // at a time itself instead of waiting; chunks are read ahead and sent only once it is ready.
        const ready = await helper.ready();
        if (!ready && ahead.length > 0) break;
        const chunk = await read(ready);
        if (chunk === undefined) break;
        if (ready && chunk.sent.length > 0) chunk.reply = helper.prepare(nextId++, prepareOptions, chunk);
        ahead.push(chunk);
      }
      const head = ahead.shift();
      if (head === undefined) break;
      // Awaited, not raced: the caller's writes are synchronous, so a helper's message is only ever received
      // while the caller waits for one (preparing a chunk itself whenever the answer was not yet in, it never
      // took one: the whole import prepared here, plus the copies). The helper is ahead by then.
      const reply = await head.reply;
      const prepared = reply?.type === 'prepared' ? reply.prepared : undefined;
      const out: PreparedItem[] = head.items.map((item) => ({ item }));
      if (prepared !== undefined) {
        for (let k = 0; k < head.sent.length; k++) out[head.sent[k]!]!.prepared = prepared[k]!;
      }
      yield out;
    }
    if (sourceError !== undefined) throw sourceError.error;
  } finally {
    helper?.stop();
    // A consumer that stops early (a failed write) ends the source too, as its own loop would have.
    if (!sourceDone) await source.return?.();
  }
}

/** The size of a record item the helper may prepare (its own sequence, plain data); undefined for others. */
function eligibleSize(item: ImportItem): number | undefined {
  if (item.type !== 'record') return undefined;
  const raw = item.record as unknown as Record<string, unknown> | null;
  return explicitSequence(raw) === undefined ? undefined : plainRecordSize(raw);
}

function iteratorOf<T>(items: AsyncIterable<T> | Iterable<T>): AsyncIterator<T> | Iterator<T> {
  return Symbol.asyncIterator in items
    ? (items as AsyncIterable<T>)[Symbol.asyncIterator]()
    : (items as Iterable<T>)[Symbol.iterator]();
}

/** One helper thread answering chunks in the order they were sent; undefined answers once it has failed. */
class PrepareHelper {
  readonly #worker: Worker;
  readonly #waiting = new Map<number, (reply: PrepareReply | undefined) => void>();
  #failed = false;
  #loaded = false;

  constructor(entry: URL | undefined) {
    // From TypeScript sources the helper needs tsx's loader in its own thread (the .mjs entry registers it);
    // no inherited flags: tsx's loader registered twice in one thread hangs module loading.
    const url =
      entry ??
      new URL(
        import.meta.url.endsWith('.ts') ? './prepare-worker-tsx-entry.mjs' : './prepare-worker-main.js',
        import.meta.url,
      );
    this.#worker = new Worker(url, { execArgv: workerExecArgv() });
    // It keeps the process alive only while a chunk is out (an abandoned import leaves it idle, not running).
    this.#worker.unref();
    this.#worker.on('message', (reply: PrepareMessage) => {
      if (reply.type === 'loaded') {
        this.#loaded = true;
        return;
      }
      const resolve = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      if (this.#waiting.size === 0) this.#worker.unref();
      resolve?.(reply);
    });
    const fail = () => {
      this.#failed = true;
      for (const resolve of this.#waiting.values()) resolve(undefined);
      this.#waiting.clear();
    };
    this.#worker.once('error', fail);
    this.#worker.once('exit', fail);
  }

  /**
   * Whether it has loaded and can take chunks. A message is only received in a turn of the event loop, which
   * an import of synchronous writes otherwise never gives while it reads: one turn (setImmediate, ~8 us idle)
   * a chunk until then.
   */
  async ready(): Promise<boolean> {
    if (this.#failed) return false;
    if (!this.#loaded) await new Promise<void>((resolve) => setImmediate(resolve));
    return this.#loaded && !this.#failed;
  }

  prepare(id: number, options: PrepareOptions, chunk: Chunk): Promise<PrepareReply | undefined> {
    if (this.#failed) return Promise.resolve(undefined);
    const request: PrepareRequest = {
      id,
      options,
      items: chunk.sent.map((i) => {
        const item = chunk.items[i] as Extract<ImportItem, { type: 'record' }>;
        const raw = item.record as unknown as Record<string, unknown>;
        return { record: raw, source: item.source, sequence: explicitSequence(raw)! };
      }),
    };
    try {
      this.#worker.postMessage(request);
    } catch {
      // Something in the chunk cannot be copied: the caller prepares it.
      return Promise.resolve(undefined);
    }
    if (this.#waiting.size === 0) this.#worker.ref();
    return new Promise<PrepareReply | undefined>((resolve) => this.#waiting.set(id, resolve));
  }

  stop(): void {
    this.#failed = true;
    void this.#worker.terminate();
  }
}
