/**
 * The costliest questions a client may ask, against one context of an existing archive (opened read-only,
 * questions in this thread): a short question, then 4,000-character questions (the schema's maximum) of the
 * context's 50 most common words, of its 1,000 most common words, of rare words, and of dates; then short
 * questions made of words nearly every memory holds (the metadata view's kind and speaker role, weekdays), whose
 * exact BM25 top-k ties across the context. Prints wall and CPU per question (asked twice: first, then with
 * the caches warm), the distinct terms in it, the search's postings rows read and candidates scored (PostgreSQL:
 * candidates completed from their forward lists),
 * and whether a search stopped at its work bound (`lexical_search_bounded`): the figures behind
 * MAX_QUERY_TERMS (docs/interfaces.md) and the lexical work bounds (docs/store-lexical-index.md).
 *
 *   npx tsx bench/worst-question-probe.ts <file.db | postgres url> [context]   (context default 'big', as
 *   retrieve-probe.ts; a PostgreSQL database as bench/pg-add-probe.ts builds it)
 */
import { loadavg } from 'node:os';
import Database from 'better-sqlite3';
import { openGraphmemix } from '../src/graphmemix.ts';
import { queryTerms } from '../src/retrieval/bm25-index.ts';
import { tokenize } from '../src/retrieval/tokenize.ts';
import { MAX_QUESTION_CHARS } from '../src/schemas/question-schema.ts';
import { postgresLexicalCounters } from '../src/store/postgres/postgres-lexical-maxscore.ts';
import { lexicalSearchWork } from '../src/store/search-lexical-index.ts';

const [file, contextId = 'big'] = process.argv.slice(2);
if (!file) throw new Error('usage: <file.db | postgres url> [context]');
const postgres = /^postgres(ql)?:\/\//.test(file);
const graphmemix = await openGraphmemix(
  postgres ? { db: file, readWorkers: false } : { db: file, readonly: true, readWorkers: false },
);
// The vocabulary: the text views of the context's first 20,000 memories.
let texts: string[];
if (postgres) {
  const ids = (await graphmemix.store.listMemories(contextId, { limit: 20_000 })).map((record) => record.id);
  texts = (await graphmemix.store.getViews(contextId, ids))
    .filter((v) => v.kind === 'text')
    .map((v) => v.text);
} else {
  const raw = new Database(file, { readonly: true });
  texts = raw
    .prepare("SELECT text FROM views WHERE context_id = ? AND kind = 'text' LIMIT 20000")
    .pluck()
    .all(contextId) as string[];
  raw.close();
}
const counts = new Map<string, number>();
for (const text of texts) for (const term of tokenize(text)) counts.set(term, (counts.get(term) ?? 0) + 1);
const byCount = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([t]) => t);

/** Words repeated in turn up to the schema's longest question. */
function fill(words: readonly string[]): string {
  let question = '';
  for (let i = 0; ; i++) {
    const word = words[i % words.length]!;
    if (question.length + word.length + 1 > MAX_QUESTION_CHARS) return question.trim();
    question += `${word} `;
  }
}
const dates = Array.from({ length: 400 }, (_, i) => `2023-0${(i % 9) + 1}-${10 + (i % 19)}`);
const cases: [string, string][] = [
  ['short question', 'what did we talk about on the trip last week'],
  ['50 most common words', fill(byCount.slice(0, 50))],
  ['1,000 most common words', fill(byCount.slice(0, 1000))],
  ['rare words', fill(byCount.slice(-2000))],
  ['dates', fill(dates)],
  ['tie: "tell me about the user messages"', 'tell me about the user messages'],
  ['tie: "user"', 'user'],
  ['tie: "message"', 'message'],
  ['tie: "what happened on Friday?"', 'what happened on Friday?'],
];
await graphmemix.retrieve(contextId, { prompt: 'a first question to open the caches' }, { k: 10 });
console.log(`${file} context ${contextId}, load ${loadavg()[0]!.toFixed(2)}`);
// The search's process-wide counters (older code has fewer fields: printed as '-'). PostgreSQL: postings read
// and candidates completed from their forward lists.
const work = (
  postgres
    ? {
        get rows() {
          return postgresLexicalCounters.postingsRead;
        },
        get scored() {
          return postgresLexicalCounters.forwardLists;
        },
      }
    : lexicalSearchWork
) as Partial<Record<string, number>>;
for (const [name, prompt] of cases) {
  for (const pass of ['first', 'again']) {
    const before = { ...work };
    const started = performance.now();
    const cpu = process.cpuUsage();
    const result = await graphmemix.retrieve(contextId, { prompt }, { k: 10 });
    const used = process.cpuUsage(cpu);
    const delta = (key: string) => (work[key] === undefined ? '-' : String(work[key]! - before[key]!));
    console.log(
      `${name} (${pass}): ${(performance.now() - started).toFixed(0)} ms wall, ${((used.user + used.system) / 1000).toFixed(0)} ms CPU, ` +
        `${new Set(tokenize(prompt)).size} distinct terms (${queryTerms(prompt).length} searched), ${result.evidence.length} evidence, ` +
        `rows ${delta('rows')}, scored ${delta('scored')}, ${result.trace.flags.includes('lexical_search_bounded' as never) ? 'BOUNDED' : 'exact'}`,
    );
  }
}
await graphmemix.close();
