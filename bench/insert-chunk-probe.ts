/**
 * The CPU of an add-100's forward searches alone: `insertChunk` of 100 generated newcomers against an
 * archive, through one memo source whose reads are all made by a first (untimed) run, so the timed runs are
 * the searches' arithmetic (partial sums, bounds, exact scores, list entries) with no SQLite in them.
 * Alternates checkouts run by run in one process (the same load on both) and hashes each checkout's result
 * (lists of the newcomers and of the lists they enter): an optimisation must print the same hash.
 *
 *   npx tsx bench/insert-chunk-probe.ts <file.db> <runs> <checkoutA> [<checkoutB>] [--seed 1900] [--count 100]
 *
 * <file.db>: one context 'big' (retrieve-probe.ts / knn-add-probe.ts build); opened read-only.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { probeFlags } from './support/probe-args.ts';

const flag = probeFlags();
const positional = process.argv
  .slice(2)
  .filter((arg, at, all) => !arg.startsWith('--') && !all[at - 1]?.startsWith('--'));
const [file, runsText, ...checkouts] = positional;
if (!file || checkouts.length === 0) throw new Error('usage: <file.db> <runs> <checkoutA> [<checkoutB>]');
const runs = Number(runsText);
const seed = Number(flag('seed', '1900'));
const count = Number(flag('count', '100'));

interface Side {
  checkout: string;
  run: () => Promise<unknown>;
  cpu: number[];
  hash: string;
  /** CPU of the first run: every read (a fresh connection) and the arithmetic. */
  firstCpu: number;
}

const sides: Side[] = [];
for (const checkout of checkouts) {
  const { createSqliteStore } = await import(`${checkout}/src/store/sqlite-store.ts`);
  const { chatRecords } = await import(`${checkout}/bench/support/realistic-chat.ts`);
  const { semanticText } = await import(`${checkout}/src/digest/semantic/semantic-text.ts`);
  const { distinctTerms, frozenVector } = await import(`${checkout}/src/digest/incremental/frozen-tfidf.ts`);
  const { insertChunk } = await import(`${checkout}/src/digest/incremental/insert-chunk.ts`);
  const { memoKnnSource } = await import(`${checkout}/src/digest/incremental/memo-knn-source.ts`);
  const { storeKnnSource } = await import(`${checkout}/src/digest/incremental/store-knn-source.ts`);
  const knn = await import(`${checkout}/src/digest/incremental/update-semantic-knn.ts`);
  const store = createSqliteStore(file, { readonly: true });
  const index = store.semantic;
  const snapshot = await index.getSnapshot('big');
  const size = await store.countMemories('big');
  const records = [...chatRecords({ contextId: 'big', count, seed, start: size })];
  const texts = records.map((record: unknown) => semanticText(record));
  const df = await index.documentFrequencies('big', [...new Set(texts.flatMap(distinctTerms))]);
  const chunk = records.map((record: { id: string }, at: number) =>
    frozenVector(record.id, texts[at], snapshot.documents, df),
  );
  const source = storeKnnSource(index, 'big');
  const cached = memoKnnSource({
    termBounds: source.termBounds,
    postings: source.postings,
    topPostings: source.topPostings,
    getDocs: (ids: readonly string[]) => index.getDocs('big', ids),
    getVectors: index.getVectors && ((ids: readonly string[]) => index.getVectors('big', ids)),
    wholeList: (term: string) => (df.get(term) ?? 0) <= knn.WHOLE_LIST_DF,
  });
  const options = {
    k: snapshot.k,
    pool: Math.max(snapshot.k, knn.REVERSE_POOL_FACTOR * snapshot.k),
    df,
    search: { maxPostingsPerTerm: knn.MAX_POSTINGS_PER_TERM },
  };
  const run = () => insertChunk(cached, chunk, options);
  // The untimed first run makes every read; its result is the one hashed.
  const started = process.cpuUsage();
  const first = await run();
  const used = process.cpuUsage(started);
  const hash = createHash('sha256').update(JSON.stringify(first)).digest('hex').slice(0, 16);
  sides.push({ checkout, run, cpu: [], hash, firstCpu: (used.user + used.system) / 1000 });
}
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
const loadBefore = load();
for (let r = 0; r < runs; r++) {
  for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
    const started = process.cpuUsage();
    await side.run();
    const used = process.cpuUsage(started);
    side.cpu.push((used.user + used.system) / 1000);
  }
}
const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
console.log(`${count} newcomers, ${runs} runs per checkout, 1-min load ${loadBefore} -> ${load()}`);
for (const side of sides) {
  console.log(
    `${side.checkout}: insertChunk CPU median ${median(side.cpu).toFixed(1)} ms (min ${Math.min(...side.cpu).toFixed(1)});` +
      ` first run with its reads ${side.firstCpu.toFixed(1)} ms; result ${side.hash}`,
  );
}
