/**
 * Statements of one warm retrieve on PostgreSQL (diagnostics for issue #11's retrieve target):
 *   npx tsx bench/pg-retrieve-probe.ts <url-of-a-database-holding-context-big> [n]
 * Runs n warm retrieves of generated questions in context 'big' and prints per retrieve: wall p50, Node CPU,
 * statements and transactions, then the statements of the last one with their times.
 */
import { openGraphmemix } from '../src/graphmemix.ts';
import { countPgStatements } from './support/pg-statement-counter.ts';
import { chatQuestions } from './support/realistic-chat.ts';

const [url, nText] = process.argv.slice(2);
if (!url) throw new Error('usage: pg-retrieve-probe.ts <url> [n]');
const n = Number(nText ?? 40);
const counter = countPgStatements(130);
const gm = await openGraphmemix({ db: url });
const size = await gm.store.countMemories('big');
const questions = chatQuestions(n + 10, 6, { contextId: 'big', count: size, seed: 7 });
const times: number[] = [];
let cpu0 = process.cpuUsage();
let s0 = 0;
let b0 = 0;
for (const [i, question] of questions.entries()) {
  if (i === 10) {
    cpu0 = process.cpuUsage();
    s0 = counter.statements;
    b0 = counter.begins;
  }
  if (i === questions.length - 1) counter.trace = [];
  const t = performance.now();
  await gm.retrieve('big', question);
  if (i >= 10) times.push(performance.now() - t);
}
const cpu = process.cpuUsage(cpu0);
const sorted = [...times].sort((a, b) => a - b);
console.log(
  `retrieve in ${size}: n ${times.length} p50 ${sorted[Math.floor(times.length / 2)]!.toFixed(1)} ms; per retrieve: node cpu ${((cpu.user + cpu.system) / 1000 / times.length).toFixed(1)} ms, statements ${((counter.statements - s0) / times.length).toFixed(1)}, transactions ${((counter.begins - b0) / times.length).toFixed(1)}`,
);
console.log(counter.trace?.join('\n'));
await gm.close();
