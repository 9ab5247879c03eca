/**
 * `npm run bench:digest [-- <mem-gallery dir>] [--json] [--quick]`: offline digest throughput and store size.
 *
 * Scenarios (each into a fresh SQLite file): generated text archives of 600 memories, 10k memories, 100k
 * memories in one context, and 100 contexts x 1k; plus the Mem-Gallery dev files at the given path (default
 * ../shared/data/mem-gallery), skipped with a reason when the path or the importer is absent.
 * Seconds include parsing, views, writes, relations (all schema types + semantic kNN) and building the BM25
 * index of every context (the first lexical search). Targets (issue 3): 10k at >= 2,000 memories/s, 600 in
 * < 1 s, 100k completes. `--quick` runs only the 600 and 10k scenarios.
 */

import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ingestItems } from '../src/digest/ingest.ts';
import type { IngestReport } from '../src/digest/ingest-report.ts';
import type { ImportItem } from '../src/importers/importer-spec.ts';
import { openStore } from '../src/store/open-store.ts';
import type { MemoryRecord } from '../src/types/memory-record.ts';
import { checkBenchFlags } from './support/probe-args.ts';
import { chatArchive } from './support/realistic-chat.ts';

checkBenchFlags('npm run bench:digest [-- <mem-gallery dir>] [--json] [--quick]', ['--json', '--quick']);

interface Row {
  scenario: string;
  contexts: number;
  memories: number;
  seconds: number;
  memoriesPerSecond: number;
  steps: Record<string, number>;
  edges: number;
  storeMiB: number;
  target?: string;
  met?: boolean;
  skipped?: string;
}

const args = process.argv.slice(2);
const json = args.includes('--json');
const quick = args.includes('--quick');
const memGalleryPath = resolve(args.find((arg) => !arg.startsWith('--')) ?? '../shared/data/mem-gallery');
const relationsAvailable = existsSync(new URL('../src/digest/build-relations.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-digest-bench-'));

const rows: Row[] = [];
try {
  rows.push(await generated('600 text, 1 context', 1, 600, (row) => [`< 1 s`, row.seconds < 1]));
  rows.push(
    await generated('10k text, 1 context', 1, 10_000, (row) => [
      '>= 2,000 mem/s',
      row.memoriesPerSecond >= 2000,
    ]),
  );
  rows.push(await singleAdd(10_000));
  if (!quick) {
    rows.push(await generated('100k text, 1 context', 1, 100_000, () => ['completes', true]));
    rows.push(await generated('100k text, 100 x 1k', 100, 1_000, () => ['completes', true]));
  }
  rows.push(await memGallery());
} finally {
  rmSync(dir, { recursive: true, force: true });
}

if (json) process.stdout.write(`${JSON.stringify({ relations: relationsAvailable, rows }, null, 2)}\n`);
else printTable();

async function generated(
  scenario: string,
  contexts: number,
  perContext: number,
  target: (row: Row) => [string, boolean],
): Promise<Row> {
  const items = async function* (): AsyncGenerator<ImportItem> {
    for (let c = 0; c < contexts; c++) yield* conversation(`ctx${c}`, perContext, c + 1);
  };
  return measure(scenario, items(), target);
}

/**
 * What an agent's write path costs: one new memory added to an existing context (relations updated
 * incrementally from the write's journal). Median of three adds; bench:scale measures p50/p99 over many.
 */
async function singleAdd(existing: number): Promise<Row> {
  const scenario = `add 1 into ${existing / 1000}k context`;
  const file = join(dir, `${rows.length}.db`);
  const store = await openStore(file);
  try {
    await ingestItems(store, conversation('ctx0', existing, 7), { relations: relationsAvailable });
    const times: number[] = [];
    let report: IngestReport | undefined;
    for (let n = 0; n < 3; n++) {
      const record: MemoryRecord = {
        id: `added${n}`,
        contextId: 'ctx0',
        kind: 'note',
        sequence: existing + n,
        text: 'a new note about the pottery workshop, the kalomira trip and the train ticket',
        assets: [],
      };
      const started = performance.now();
      report = await ingestItems(store, [{ type: 'record', record, source: { file: 'generated' } }], {
        relations: relationsAvailable,
      });
      times.push((performance.now() - started) / 1000);
    }
    const seconds = [...times].sort((a, b) => a - b)[1]!;
    return {
      scenario,
      contexts: 1,
      memories: 1,
      seconds: round(seconds),
      memoriesPerSecond: Math.round(1 / seconds),
      steps: Object.fromEntries(Object.entries(report?.stepSeconds ?? {}).map(([k, v]) => [k, round(v)])),
      edges: Object.values(report?.edges ?? {}).reduce((sum, n) => sum + n, 0),
      storeMiB: round(sizeOf(file) / 1024 / 1024),
      target: 'reported',
      met: true,
    };
  } finally {
    await store.close();
  }
}

async function memGallery(): Promise<Row> {
  const scenario = 'Mem-Gallery dev files';
  if (!existsSync(memGalleryPath)) return skippedRow(scenario, `no data at ${memGalleryPath}`);
  let importer: Awaited<ReturnType<typeof import('../src/importers/importer-registry.ts')['getImporter']>>;
  try {
    importer = await (await import('../src/importers/importer-registry.ts')).getImporter('mem-gallery');
  } catch (error) {
    return skippedRow(scenario, `importer unavailable: ${(error as Error).message}`);
  }
  return measure(scenario, importer.read(memGalleryPath, {}), (row) => [
    '< 1 s per 600',
    row.memoriesPerSecond >= 600,
  ]);
}

async function measure(
  scenario: string,
  items: AsyncIterable<ImportItem>,
  target: (row: Row) => [string, boolean],
): Promise<Row> {
  const file = join(dir, `${rows.length}.db`);
  const store = await openStore(file);
  const started = performance.now();
  const report: IngestReport = await ingestItems(store, items, { relations: relationsAvailable });
  const lexicalStarted = performance.now();
  for (const contextId of report.contexts)
    await store.searchLexical(contextId, 'warm up the index', { limit: 1 });
  const lexicalSeconds = (performance.now() - lexicalStarted) / 1000;
  const seconds = (performance.now() - started) / 1000;
  await store.close();
  const memories = report.imported + report.updated + report.unchanged;
  const row: Row = {
    scenario,
    contexts: report.contexts.length,
    memories,
    seconds: round(seconds),
    memoriesPerSecond: Math.round(memories / seconds),
    steps: Object.fromEntries(
      Object.entries({ ...report.stepSeconds, lexicalIndex: lexicalSeconds }).map(([k, v]) => [k, round(v)]),
    ),
    edges: Object.values(report.edges).reduce((sum, n) => sum + n, 0),
    storeMiB: round(sizeOf(file) / 1024 / 1024),
  };
  const [label, met] = target(row);
  row.target = label;
  row.met = met;
  if (!json) process.stderr.write(`done: ${scenario} (${row.seconds} s)\n`);
  return row;
}

/**
 * Realistic generated chat (bench/support/realistic-chat.ts: Zipfian 40k-word vocabulary, topical sessions,
 * rounds, timestamps, some photos). A 150-word vocabulary made every memory look alike and gave zero
 * similarity edges at 10k, so its costs said nothing about real text.
 */
function conversation(contextId: string, count: number, seed: number): Generator<ImportItem> {
  return chatArchive({ contextId, count, seed });
}

function skippedRow(scenario: string, reason: string): Row {
  return {
    scenario,
    contexts: 0,
    memories: 0,
    seconds: 0,
    memoriesPerSecond: 0,
    steps: {},
    edges: 0,
    storeMiB: 0,
    skipped: reason,
  };
}

function sizeOf(file: string): number {
  return [file, `${file}-wal`].reduce((sum, path) => sum + (existsSync(path) ? statSync(path).size : 0), 0);
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function printTable(): void {
  process.stdout.write(
    `relations: ${relationsAvailable ? 'built' : 'SKIPPED (src/digest/build-relations.ts missing)'}\n`,
  );
  const header = [
    'scenario',
    'contexts',
    'memories',
    'seconds',
    'mem/s',
    'edges',
    'store MiB',
    'target',
    'met',
  ];
  const body = rows.map((row) =>
    row.skipped
      ? [row.scenario, '', '', '', '', '', '', `skipped: ${row.skipped}`, '']
      : [
          row.scenario,
          row.contexts,
          row.memories,
          row.seconds,
          row.memoriesPerSecond,
          row.edges,
          row.storeMiB,
          row.target ?? '',
          row.met ? 'yes' : 'NO',
        ].map(String),
  );
  const widths = header.map((title, i) =>
    Math.max(title.length, ...body.map((cells) => String(cells[i]).length)),
  );
  const line = (cells: readonly unknown[]) =>
    cells.map((cell, i) => String(cell).padEnd(widths[i]!)).join('  ');
  process.stdout.write(`${line(header)}\n${body.map(line).join('\n')}\n\nseconds per step:\n`);
  for (const row of rows) {
    if (row.skipped) continue;
    const steps = Object.entries(row.steps)
      .map(([step, seconds]) => `${step} ${seconds}`)
      .join(', ');
    process.stdout.write(`  ${row.scenario}: ${steps}\n`);
  }
}
