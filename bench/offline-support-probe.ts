/**
 * `npx tsx bench/offline-support-probe.ts <file.db> <checkoutA> [<checkoutB>]`
 *
 * CPU of the offline verifiers' lexical support for one question, per checkout, alternating question by
 * question in one process: the node verifier (contextSupportScores), the ranker's two reads
 * (contextSupportParts alone and in context) and the edge verifier's unitSupport over part of the pool. Pools:
 * 48 consecutive records of the bench:scale archive (bench/retrieve-probe.ts builds it; context 'big') with
 * round / turn relations between neighbours, one per question (chatQuestions seed 5, 400 of them); the first
 * pass warms the token cache and is not counted, as on a warm question path.
 */
import { loadavg } from 'node:os';
import Database from 'better-sqlite3';
import type { MemoryRecord } from '../src/types/memory-record.ts';
import type { PoolRelation } from '../src/verify/node-verifier-spec.ts';
import { chatQuestions } from './support/realistic-chat.ts';

interface SupportModule {
  verifierDocumentText(record: MemoryRecord): string;
  contextSupportScores(q: string, docs: { id: string; text: string }[], rels: PoolRelation[]): unknown;
  contextSupportParts(q: string, docs: { id: string; text: string }[], rels: PoolRelation[]): unknown;
  unitSupport(q: string, docs: { id: string; text: string }[], rels: PoolRelation[]): unknown;
}

const [file, ...checkouts] = process.argv.slice(2);
if (!file || checkouts.length === 0) throw new Error('usage: <file.db> <checkoutA> [<checkoutB>]');
const db = new Database(file, { readonly: true });
const records = (
  db
    .prepare("SELECT record FROM memories WHERE context_id = 'big' ORDER BY rowid LIMIT 4800")
    .pluck()
    .all() as string[]
).map((json) => JSON.parse(json) as MemoryRecord);
db.close();
const questions = chatQuestions(400, 5, { contextId: 'big', count: 10_000, seed: 11 });
const pools = questions.map((question, i) => {
  const start = (i * 97) % (records.length - 48);
  const pool = records.slice(start, start + 48);
  const relations: PoolRelation[] = pool.slice(1).map((record, j) => ({
    a: pool[j]!.id,
    b: record.id,
    types: j % 2 === 0 ? ['same_round', 'consecutive_turn'] : ['consecutive_turn'],
  }));
  return { question, pool, relations };
});
const sides: { checkout: string; module: SupportModule; us: number }[] = [];
for (const checkout of checkouts) {
  const module = (await import(`${checkout}/src/verify/context-lexical-node-verifier.ts`)) as SupportModule;
  sides.push({ checkout, module, us: 0 });
}
for (let pass = 0; pass < 3; pass++) {
  for (const [i, { question, pool, relations }] of pools.entries()) {
    for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
      const m = side.module;
      const started = process.cpuUsage();
      const verifier = pool.map((r) => ({ id: r.id, text: m.verifierDocumentText(r) }));
      m.contextSupportScores(question, verifier, relations);
      const ranker = pool.map((r) => ({ id: r.id, text: m.verifierDocumentText(r) }));
      m.contextSupportParts(question, ranker, []);
      m.contextSupportParts(question, ranker, relations);
      m.unitSupport(question, ranker.slice(0, 30), relations.slice(0, 20));
      const spent = process.cpuUsage(started);
      if (pass > 0) side.us += spent.user + spent.system;
    }
  }
}
for (const side of sides) {
  process.stdout.write(
    `${side.checkout}: ${(side.us / (2 * pools.length)).toFixed(0)} us CPU per question, load ${loadavg()[0]!.toFixed(2)}\n`,
  );
}
