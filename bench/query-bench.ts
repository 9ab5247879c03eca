/**
 * Per-stage latency of the offline question pipeline (retrieval, expansion, verifiers, solver, packet),
 * p50/p95 over many questions, excluding model calls (offline verifiers, no models configured):
 * 1. a generated 10k-memory context (chat sessions with rounds; deterministic generator);
 * 2. Mem-Gallery dev (path argument; skipped cleanly when absent).
 *
 *   npm run bench:query -- [mem-gallery dialog dir] [--questions 200] [--json]
 * Target (issue 4): 10k context p50 <= 15 ms, p95 <= 40 ms.
 */

import { existsSync } from 'node:fs';
import { percentile } from '../src/eval/percentile.ts';
import { openGraphmemix } from '../src/graphmemix.ts';
import type { Graphmemix, MemoryRecordInput } from '../src/graphmemix-api.ts';
import type { StageName } from '../src/pipeline/retrieval-result.ts';
import { checkBenchFlags } from './support/probe-args.ts';

checkBenchFlags('npm run bench:query -- [mem-gallery dialog dir] [--questions 200] [--json]', [
  '--questions',
  '--json',
]);

const args = process.argv.slice(2);
const json = args.includes('--json');
const qIndex = args.indexOf('--questions');
const questionCount = qIndex >= 0 ? Number(args[qIndex + 1]) : 200;
const dataPath =
  args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--questions') ??
  '../shared/data/mem-gallery/dialog';
const STAGES: StageName[] = ['retrieve', 'expand', 'verify', 'solve', 'packet'];

interface BenchRow {
  name: string;
  memories: number;
  questions: number;
  stages: Record<string, { p50: number; p95: number }>;
  total: { p50: number; p95: number };
}

const rows: BenchRow[] = [];
rows.push(await benchGenerated(10_000));
if (existsSync(dataPath)) rows.push(await benchMemGallery(dataPath));
else if (!json) console.log(`(Mem-Gallery dev not found at ${dataPath}: skipped)`);

if (json) console.log(JSON.stringify(rows, null, 2));
else {
  console.log(`stage latency in ms (p50 / p95), offline verifiers, no model calls`);
  console.log(
    [
      'dataset'.padEnd(22),
      'mem'.padStart(6),
      'q'.padStart(5),
      ...STAGES.map((s) => s.padStart(14)),
      'total'.padStart(14),
    ].join(' '),
  );
  for (const row of rows) {
    const cell = (x: { p50: number; p95: number }) =>
      `${x.p50.toFixed(2)} / ${x.p95.toFixed(2)}`.padStart(14);
    console.log(
      [
        row.name.padEnd(22),
        String(row.memories).padStart(6),
        String(row.questions).padStart(5),
        ...STAGES.map((s) => cell(row.stages[s] ?? { p50: 0, p95: 0 })),
        cell(row.total),
      ].join(' '),
    );
  }
}

async function measure(
  name: string,
  gm: Graphmemix,
  contextId: string,
  questions: string[],
  memories: number,
): Promise<BenchRow> {
  const per: Record<string, number[]> = {};
  const totals: number[] = [];
  for (const q of questions.slice(0, 5)) await gm.retrieve(contextId, q, { verifiers: 'offline' }); // warm caches
  for (const q of questions) {
    const result = await gm.retrieve(contextId, q, { verifiers: 'offline' });
    for (const stage of STAGES) pushTo(per, stage, result.trace.timings[stage] ?? 0);
    totals.push(result.trace.totalMs);
  }
  const stat = (xs: number[]) => ({ p50: percentile(xs, 50), p95: percentile(xs, 95) });
  return {
    name,
    memories,
    questions: questions.length,
    stages: Object.fromEntries(STAGES.map((s) => [s, stat(per[s] ?? [])])),
    total: stat(totals),
  };
}

/** Deterministic synthetic chat archive: sessions of rounds over a vocabulary of topics. */
async function benchGenerated(size: number): Promise<BenchRow> {
  let state = 12345;
  const random = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const words = Array.from({ length: 4000 }, (_, i) => `w${i.toString(36)}`);
  const pick = () => words[Math.floor(random() ** 2 * words.length)]!;
  const sentence = (n: number) => Array.from({ length: n }, pick).join(' ');
  const records: MemoryRecordInput[] = [];
  for (let i = 0; records.length < size; i++) {
    const session = `S${Math.floor(i / 12)}`;
    const round = `${session}:${i % 12}`;
    const day = `2024-${String(1 + (Math.floor(i / 12) % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`;
    records.push({
      id: `${round}:user`,
      kind: 'message',
      role: 'user',
      sessionId: session,
      roundId: round,
      timestamp: day,
      text: sentence(15),
    });
    records.push({
      id: `${round}:assistant`,
      kind: 'message',
      role: 'assistant',
      sessionId: session,
      roundId: round,
      timestamp: day,
      text: sentence(45),
    });
  }
  const gm = await openGraphmemix({ db: ':memory:' });
  try {
    await gm.addMemories('bench', records.slice(0, size));
    const questions = Array.from({ length: questionCount }, () => `what about ${sentence(6)}?`);
    return await measure('generated-10k', gm, 'bench', questions, size);
  } finally {
    await gm.close();
  }
}

async function benchMemGallery(path: string): Promise<BenchRow> {
  const gm = await openGraphmemix({ db: ':memory:' });
  try {
    const report = await gm.ingest(path, { format: 'mem-gallery' });
    const questions = (await Promise.all(report.contexts.map((c) => gm.store.listQuestions(c)))).flat();
    const per: Record<string, number[]> = {};
    const totals: number[] = [];
    for (const q of questions) {
      const result = await gm.retrieve(q.contextId, q.prompt, { verifiers: 'offline' });
      for (const stage of STAGES) pushTo(per, stage, result.trace.timings[stage] ?? 0);
      totals.push(result.trace.totalMs);
    }
    const stat = (xs: number[]) => ({ p50: percentile(xs, 50), p95: percentile(xs, 95) });
    return {
      name: 'mem-gallery-dev',
      memories: report.imported,
      questions: questions.length,
      stages: Object.fromEntries(STAGES.map((s) => [s, stat(per[s] ?? [])])),
      total: stat(totals),
    };
  } finally {
    await gm.close();
  }
}

function pushTo(target: Record<string, number[]>, key: string, value: number): void {
  const list = target[key] ?? [];
  list.push(value);
  target[key] = list;
}
