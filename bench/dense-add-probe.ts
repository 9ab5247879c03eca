/**
 * What an add costs with an embedding model configured, as the archive grows:
 *
 *   npx tsx bench/dense-add-probe.ts --size 20k --db /tmp/dense-20k.db|postgres://... [--adds 40] [--dims 256] [--questions 20] [--checkout dir]
 *
 * Builds (once; reused when `--db` exists) one context of bench:scale's generated chat (seed 11) through
 * `ingestItems` with an in-process embedding model, then times `--adds` add-1 (`addMemories`, new records of
 * the same generator) and, after each, one retrieve (the first question after a write). Prints add-1 and
 * retrieve p50 / p95 wall and CPU, with the 1-minute load. No network and no weights: the model is a hashed
 * bag of words (each token hashed to a dimension and a sign, tf-weighted, unit length), so texts that share
 * words are near, as with a real text embedding, and the same text always gets the same vector. It measures
 * the store and the kNN upkeep, not a model's latency (a real endpoint adds its own round trip).
 * `--checkout dir`: run another worktree's modules (before / after on one machine). The archive is written to.
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import type { Graphmemix } from '../src/graphmemix-api.ts';
import type { ImportItem } from '../src/importers/importer-spec.ts';
import type { EmbeddingInput, EmbeddingModel } from '../src/providers/model-spec.ts';
import type { ArchiveStore } from '../src/store/archive-store-spec.ts';
import { parseCount, probeFlags } from './support/probe-args.ts';
import { chatArchive, chatQuestions, chatRecords } from './support/realistic-chat.ts';

const flag = probeFlags();
const sizeText = flag('size', '20k');
const size = parseCount(sizeText);
const file = flag('db', `/tmp/graphmemix-dense-${sizeText}.db`);
const adds = parseCount(flag('adds', '40'));
const dims = parseCount(flag('dims', '256'));
const questions = parseCount(flag('questions', '20'));
const checkout = resolve(flag('checkout', resolve(import.meta.dirname, '..')));

/** FNV-1a of a token: its dimension and sign. */
function hash(token: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < token.length; i++) {
    h ^= token.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function embedText(text: string): Float32Array {
  const vector = new Float32Array(dims);
  for (const token of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const h = hash(token);
    vector[h % dims]! += h & 0x80000000 ? -1 : 1;
  }
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < dims; i++) vector[i] = vector[i]! / norm;
  return vector;
}

const embedding: EmbeddingModel = {
  specificationVersion: 'v1',
  provider: 'probe',
  modelId: `hashed-bag-of-words-${dims}`,
  supportsImages: false,
  async embed(inputs: EmbeddingInput[]) {
    return {
      vectors: inputs.map((input) => embedText(input.type === 'text' ? input.text : input.uri)),
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      cached: false,
    };
  },
};

const { openGraphmemix } = (await import(`${checkout}/src/graphmemix.ts`)) as {
  openGraphmemix(options: {
    db: string;
    models?: { embedding?: EmbeddingModel };
  }): Promise<Graphmemix & { store: ArchiveStore }>;
};
const { ingestItems } = (await import(`${checkout}/src/digest/ingest.ts`)) as {
  ingestItems(
    store: ArchiveStore,
    items: Iterable<ImportItem>,
    options: { embedding: EmbeddingModel },
  ): Promise<unknown>;
};

const onPostgres = file.startsWith('postgres');
const fileExisted = !onPostgres && existsSync(file);
const gm = await openGraphmemix({ db: file, models: { embedding } });
// A PostgreSQL URL is "built" once its context holds memories.
const built = onPostgres ? (await gm.store.countMemories('big')) > 0 : fileExisted;
if (!built) {
  const t = performance.now();
  await ingestItems(gm.store, chatArchive({ contextId: 'big', count: size, seed: 11 }), { embedding });
  console.log(`built ${size} memories with embeddings in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}
const stored = await gm.store.countMemories('big');
const asked = chatQuestions(adds + questions, 5, { contextId: 'big', count: stored, seed: 11 });
// The first question of this process: what opening the archive leaves for a question to build.
const firstStarted = performance.now();
const firstCpu = process.cpuUsage();
await gm.retrieve('big', asked[0]!);
const firstQuestion = { wall: performance.now() - firstStarted, cpu: process.cpuUsage(firstCpu) };
console.log(
  `first question in this process: wall ${firstQuestion.wall.toFixed(0)} ms, CPU ${((firstQuestion.cpu.user + firstQuestion.cpu.system) / 1000).toFixed(0)} ms (${gm.store.vectorSupport ?? 'in-process'} vectors)`,
);
for (const question of asked.slice(1, questions)) await gm.retrieve('big', question);

const cpuMs = (from: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
};
const addWall: number[] = [];
const addCpu: number[] = [];
const askWall: number[] = [];
const askCpu: number[] = [];
/** Each add's ingest report step seconds (the slowest adds are printed with theirs). */
const steps: Array<Record<string, number>> = [];
for (let i = 0; i < adds; i++) {
  const records = [...chatRecords({ contextId: 'big', count: 1, seed: 700 + i, start: stored + i })];
  let cpu = process.cpuUsage();
  let t = performance.now();
  const report = (await gm.addMemories('big', records)) as { stepSeconds?: Record<string, number> };
  addWall.push(performance.now() - t);
  steps.push(report.stepSeconds ?? {});
  addCpu.push(cpuMs(cpu));
  cpu = process.cpuUsage();
  t = performance.now();
  await gm.retrieve('big', asked[questions + i]!);
  askWall.push(performance.now() - t);
  askCpu.push(cpuMs(cpu));
}
await gm.close();
for (const at of addWall
  .map((_, i) => i)
  .sort((x, y) => addWall[y]! - addWall[x]!)
  .slice(0, 3)) {
  const parts = Object.entries(steps[at]!).map(([step, sec]) => `${step} ${(sec * 1000).toFixed(1)}`);
  console.log(`slow add #${at}: ${addWall[at]!.toFixed(1)} ms (${parts.join(', ')})`);
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};
const show = (values: number[]) =>
  `${quantile(values, 0.5).toFixed(1)} / ${quantile(values, 0.95).toFixed(1)}`;
console.log(
  `${stored} memories, ${dims}-dim embeddings, ${adds} add-1: wall p50/p95 ${show(addWall)} ms, CPU ${show(addCpu)} ms; ` +
    `first retrieve after each: wall ${show(askWall)} ms, CPU ${show(askCpu)} ms; load ${loadavg()[0]!.toFixed(2)}`,
);
