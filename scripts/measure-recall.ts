/**
 * Evidence Recall@K of the offline pipeline on a Mem-Gallery dialog folder (speaker-level rows; a gold round
 * counts as both of its rows; questions with gold only), next to flat lexical top-K.
 *
 *   npx tsx scripts/measure-recall.ts [path=../shared/data/mem-gallery/dialog] [--k 10] [--calibrate] [--json]
 *
 * --calibrate first fits the prize calibration on the DEV fold only (sha256 fold 0) into the temporary store.
 * Skips cleanly (exit 0) when the path is absent. The full evaluation harness is `graphmemix eval`.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDevQuestion } from '../src/eval/splits.ts';
import { openGraphmemix } from '../src/graphmemix.ts';
import { calibratePrizes, toQuestionInput } from '../src/pipeline/calibrate-prizes.ts';

const args = process.argv.slice(2);
const flag = (name: string): boolean => args.includes(name);
const value = (name: string, fallback: string): string => {
  const index = args.indexOf(name);
  return index >= 0 && args[index + 1] !== undefined ? args[index + 1]! : fallback;
};
const path =
  args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--k') ?? '../shared/data/mem-gallery/dialog';
const k = Number(value('--k', '10'));

if (!existsSync(path)) {
  console.log(`measure-recall: ${path} not found, skipping`);
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-recall-'));
const gm = await openGraphmemix({ db: join(dir, 'recall.db') });
try {
  const started = performance.now();
  const report = await gm.ingest(path, { format: 'mem-gallery' });
  const ingestSeconds = (performance.now() - started) / 1000;
  let calibration: unknown;
  if (flag('--calibrate')) {
    const fit = await calibratePrizes(gm.store, {}, { include: (q) => isDevQuestion(q.id) });
    calibration = {
      key: fit.key,
      a: fit.a,
      b: fit.b,
      c: fit.c,
      samples: fit.samples,
      positives: fit.positives,
      questions: fit.questions,
    };
  }
  const rows: {
    dev: boolean;
    flat: number;
    pipeline: number;
    packet: number;
    pool: number;
    type?: string;
  }[] = [];
  const questions = (await Promise.all(report.contexts.map((c) => gm.store.listQuestions(c)))).flat();
  for (const question of questions) {
    const stored = new Set(
      (await gm.store.getMemories(question.contextId, question.evidence)).map((r) => r.id),
    );
    if (stored.size === 0) continue;
    const input = toQuestionInput(question);
    const flat = (await gm.search(question.contextId, input.prompt, { k })).map((h) => h.memoryId);
    const result = await gm.retrieve(question.contextId, input, { k });
    const packet = result.evidence.map((e) => e.memoryId);
    const share = (ids: string[]) => ids.filter((id) => stored.has(id)).length / stored.size;
    rows.push({
      dev: isDevQuestion(question.id),
      flat: share(flat),
      pipeline: share(packet),
      packet: packet.length,
      pool: share(result.pool.map((c) => c.memoryId)),
      ...(question.type === undefined ? {} : { type: question.type }),
    });
  }
  const mean = (xs: number[]) => (xs.length === 0 ? 0 : (100 * xs.reduce((a, b) => a + b, 0)) / xs.length);
  const summary = (subset: typeof rows) => ({
    questions: subset.length,
    flatRecall: round(mean(subset.map((r) => r.flat))),
    pipelineRecall: round(mean(subset.map((r) => r.pipeline))),
    poolRecall: round(mean(subset.map((r) => r.pool))),
    meanPacket: round(subset.reduce((a, r) => a + r.packet, 0) / Math.max(1, subset.length)),
  });
  const out = {
    path,
    k,
    ingestSeconds: round(ingestSeconds),
    memories: report.imported,
    calibration,
    all: summary(rows),
    devFold: summary(rows.filter((r) => r.dev)),
    otherFolds: summary(rows.filter((r) => !r.dev)),
  };
  if (flag('--json')) console.log(JSON.stringify(out, null, 2));
  else {
    console.log(`Mem-Gallery ${path}: ${out.memories} memories, ingest ${out.ingestSeconds}s, K=${k}`);
    if (calibration) console.log(`calibration (dev fold): ${JSON.stringify(calibration)}`);
    console.log('subset        questions  flat-top-K  pipeline  pool(M)  mean packet');
    for (const [name, s] of [
      ['all', out.all],
      ['dev fold', out.devFold],
      ['other folds', out.otherFolds],
    ] as const) {
      console.log(
        `${name.padEnd(13)} ${String(s.questions).padStart(9)}  ${s.flatRecall.toFixed(2).padStart(10)}  ${s.pipelineRecall.toFixed(2).padStart(8)}  ${s.poolRecall.toFixed(2).padStart(7)}  ${s.meanPacket.toFixed(2).padStart(11)}`,
      );
    }
  }
} finally {
  await gm.close();
  rmSync(dir, { recursive: true, force: true });
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
