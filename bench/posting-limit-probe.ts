/**
 * What the forward search's posting limit (MAX_POSTINGS_PER_TERM) buys and costs on a large archive: `insertChunk`
 * of generated newcomers (an add-100's searches and list entries, nothing written) with each limit, against the
 * exact search (no limit). Per limit: CPU and wall of a first run on a fresh connection (its reads) and of a
 * second run on the same reads (the arithmetic); agreement with the exact run: recall of the newcomers' own
 * k-lists, lists identical, and Jaccard of the (list owner, newcomer) entries the chunk makes.
 *
 *   npx tsx bench/posting-limit-probe.ts <file.db> [--limits 256,512,1024,2048] [--count 100] [--seed 1900]
 *
 * <file.db>: one context 'big' (retrieve-probe.ts / knn-add-probe.ts build); opened read-only. The exact run
 * goes first (at 1M it reads whole posting lists of common terms: ~25 s), which also puts the pages every
 * limit reads into the OS cache, so the first runs compare connection caches, not the disk.
 */
import { readFileSync } from 'node:fs';
import { distinctTerms, frozenVector } from '../src/digest/incremental/frozen-tfidf.ts';
import { insertChunk } from '../src/digest/incremental/insert-chunk.ts';
import { memoKnnSource } from '../src/digest/incremental/memo-knn-source.ts';
import { storeKnnSource } from '../src/digest/incremental/store-knn-source.ts';
import {
  MAX_POSTINGS_PER_TERM,
  REVERSE_POOL_FACTOR,
  WHOLE_LIST_DF,
} from '../src/digest/incremental/update-semantic-knn.ts';
import { semanticText } from '../src/digest/semantic/semantic-text.ts';
import { createSqliteStore } from '../src/store/sqlite-store.ts';
import { parseCount, positionalArgs, probeFlags } from './support/probe-args.ts';
import { chatRecords } from './support/realistic-chat.ts';

const [file] = positionalArgs();
if (!file) throw new Error('usage: <file.db> [--limits 256,512,1024,2048] [--count 100] [--seed 1900]');
const flag = probeFlags();
const limits = flag('limits', `256,512,${MAX_POSTINGS_PER_TERM},2048`).split(',').map(parseCount);
const count = parseCount(flag('count', '100'));
const seed = Number(flag('seed', '1900'));
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0];

type Inserted = Awaited<ReturnType<typeof insertChunk>>;

/** insertChunk twice on a fresh connection: the first run makes the reads, the second is arithmetic only. */
async function measure(limit: number) {
  const store = createSqliteStore(file!, { readonly: true });
  try {
    const index = store.semantic;
    const snapshot = await index.getSnapshot('big');
    if (!snapshot) throw new Error(`${file}: context 'big' has no semantic snapshot`);
    const size = await store.countMemories('big');
    const records = [...chatRecords({ contextId: 'big', count, seed, start: size })];
    const texts = records.map((record) => semanticText(record));
    const df = await index.documentFrequencies('big', [...new Set(texts.flatMap(distinctTerms))]);
    const chunk = records.map((record, at) => frozenVector(record.id, texts[at]!, snapshot.documents, df));
    const source = storeKnnSource(index, 'big');
    const cached = memoKnnSource({
      termBounds: source.termBounds,
      postings: source.postings,
      topPostings: source.topPostings,
      getDocs: (ids) => index.getDocs('big', ids),
      getVectors: index.getVectors && ((ids) => index.getVectors!('big', ids)),
      wholeList: (term) => (df.get(term) ?? 0) <= WHOLE_LIST_DF,
    });
    const options = {
      k: snapshot.k,
      pool: Math.max(snapshot.k, REVERSE_POOL_FACTOR * snapshot.k),
      df,
      search: { maxPostingsPerTerm: limit },
    };
    const timed = async () => {
      const wall = performance.now();
      const cpu = process.cpuUsage();
      const out = await insertChunk(cached, chunk, options);
      const used = process.cpuUsage(cpu);
      return { out, wall: performance.now() - wall, cpu: (used.user + used.system) / 1000 };
    };
    const first = await timed();
    const second = await timed();
    return { first, second, newcomers: new Set(chunk.map((doc) => doc.memoryId)) };
  } finally {
    await store.close();
  }
}

/** (list owner > newcomer) for every newcomer a stored list holds after the chunk. */
const entries = (out: Inserted, newcomers: ReadonlySet<string>) =>
  new Set(
    out.lists.flatMap((list) =>
      list.neighbours.filter((n) => newcomers.has(n.memoryId)).map((n) => `${list.memoryId}>${n.memoryId}`),
    ),
  );

console.log(`${file}: ${count} newcomers (seed ${seed}), 1-min load ${load()}`);
const exact = await measure(Number.POSITIVE_INFINITY);
const exactEntries = entries(exact.first.out, exact.newcomers);
console.log(
  `exact: first run ${exact.first.wall.toFixed(0)} ms wall / ${exact.first.cpu.toFixed(0)} ms CPU, ` +
    `second ${exact.second.cpu.toFixed(0)} ms CPU, ${exactEntries.size} entries`,
);
console.log(
  '| limit | first run wall / CPU ms | second run CPU ms | own-list recall | lists identical | entries (Jaccard) |',
);
console.log('| --- | --- | --- | --- | --- | --- |');
for (const limit of limits) {
  const { first, second, newcomers } = await measure(limit);
  let hits = 0;
  let wanted = 0;
  let identical = 0;
  first.out.put.forEach((doc, at) => {
    const want = exact.first.out.put[at]!.neighbours.map((n) => n.memoryId);
    const mine = doc.neighbours.map((n) => n.memoryId);
    wanted += want.length;
    hits += mine.filter((id) => want.includes(id)).length;
    if (mine.join('\n') === want.join('\n')) identical++;
  });
  const mine = entries(first.out, newcomers);
  const shared = [...mine].filter((entry) => exactEntries.has(entry)).length;
  console.log(
    `| ${limit} | ${first.wall.toFixed(0)} / ${first.cpu.toFixed(0)} | ${second.cpu.toFixed(0)} | ` +
      `${(hits / Math.max(1, wanted)).toFixed(4)} | ${identical}/${first.out.put.length} | ` +
      `${mine.size} (${(shared / Math.max(1, mine.size + exactEntries.size - shared)).toFixed(4)}) |`,
  );
}
console.log(`1-min load after: ${load()}`);
