/**
 * CPU of the forward search's long posting reads through the store port, in a fresh process: the 1,024
 * heaviest postings of terms in more than 1,024 documents (`{ top: 1024 }`) and the whole lists of terms in
 * 64-1,024 documents (`{ minWeight: 0 }`), 300 terms per pass, three passes over different terms (the first
 * also pays for compiling the code). Run it with two checkouts on two copies of one archive to compare
 * (e.g. /work/main on a file from before SQLite migration 12, a branch on a copy `graphmemix migrate` filled).
 *
 *   npx tsx bench/semantic-top-read-probe.ts <file.db> <checkout> [--whole]
 *
 * <file.db>: one context 'big' (retrieve-probe.ts); opened for writing (a file from before migration 12 is
 * migrated, and reads may keep rows): pass a copy.
 */
import { loadavg } from 'node:os';
import Database from 'better-sqlite3';
import type { ArchiveStore } from '../src/store/archive-store-spec.ts';

const [file, checkout] = process.argv.slice(2);
if (!file || !checkout) throw new Error('usage: <file.db> <checkout> [--whole]');
const whole = process.argv.includes('--whole');
const raw = new Database(file, { readonly: true });
const terms = raw
  .prepare(
    `SELECT term FROM semantic_df WHERE context_id = 'big' AND ${whole ? 'df BETWEEN 64 AND 1024' : 'df > 1024'}
     ORDER BY term LIMIT 900`,
  )
  .pluck()
  .all() as string[];
raw.close();
const { openStore } = (await import(`${checkout}/src/store/open-store.ts`)) as {
  openStore(db: string): Promise<ArchiveStore>;
};
const store = await openStore(file);
for (let pass = 0; pass < 3; pass++) {
  const part = terms.slice(300 * pass, 300 * pass + 300);
  const started = process.cpuUsage();
  const t = performance.now();
  let postings = 0;
  for (const term of part) {
    const filter = whole ? { minWeight: 0 } : { top: 1024 };
    postings += (await store.semantic.postings('big', term, filter)).length;
  }
  const used = process.cpuUsage(started);
  console.log(
    `${checkout} pass ${pass}: ${part.length} terms, ${postings} postings, CPU ${((used.user + used.system) / 1000).toFixed(1)} ms, ` +
      `wall ${(performance.now() - t).toFixed(1)} ms, 1-min load ${loadavg()[0]!.toFixed(2)}`,
  );
}
await store.close();
