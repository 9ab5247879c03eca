// `npm run demo`: the one-command tour. Builds the shipped example archive, ingests it offline into an
// embedded store, asks the example questions, prints each evidence forest and writes the viewer page.
// The LAST line printed is the path of that page (scripts and the demo test rely on it).
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { openGraphmemix } from '../graphmemix.ts';
import type { Graphmemix } from '../graphmemix-api.ts';
import type { ImportFormat } from '../importers/importer-spec.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import { formatForestText } from '../viewer/format-forest-text.ts';
import { inlineThumbnails } from '../viewer/inline-thumbnails.ts';
import { renderViewerHtml, type ViewerQuestion } from '../viewer/render-viewer-html.ts';
import { writeExampleArchive } from './example-archive.ts';

export interface DemoResult {
  outDir: string;
  dbPath: string;
  viewerPath: string;
  seconds: number;
}

/**
 * Runs the demo into `outDir` (a fresh temp dir by default). Offline by construction: no model set is
 * passed, so verifiers and relations use their offline implementations whatever the environment says.
 */
export async function runDemo(
  options: { outDir?: string; write?: (line: string) => void } = {},
): Promise<DemoResult> {
  const started = performance.now();
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const outDir = resolve(options.outDir ?? (await mkdtemp(join(tmpdir(), 'graphmemix-demo-'))));
  const archive = await writeExampleArchive(join(outDir, 'example-archive'));
  const dbPath = join(outDir, 'demo.db');
  write(`graphmemix demo: example archive in ${join(outDir, 'example-archive')}`);
  if (!archive.hasVideo)
    write('note: ffmpeg is not installed, so the example video and its question are left out');
  if (!archive.hasPdfTools)
    write(
      'note: poppler-utils is not installed, so the example PDF is stored without its pages and its question is left out',
    );

  const graphmemix = await openGraphmemix({ db: dbPath });
  const pages: ViewerQuestion[] = [];
  try {
    // All three sources land in the example person's one context.
    await ingestAll(
      graphmemix,
      archive.contextId,
      [
        ['unified', archive.unifiedFile],
        ['mail', archive.mailDir],
        ['media', archive.photosDir],
        ['documents', archive.documentsDir],
      ],
      write,
    );

    for (const [index, question] of archive.questions.entries()) {
      const result = await graphmemix.retrieve(archive.contextId, question.prompt, { k: 8 });
      write('');
      write(`Q${index + 1}. ${question.prompt}`);
      write(indent(formatForestText(result), '  '));
      const expected = question.expectMemoryIds ?? [];
      if (expected.length > 0) {
        const found = expected.filter((id) => result.forest.order.includes(id)).length;
        write(
          `  expected evidence in the forest: ${found}/${expected.length}${question.answer ? ` (answer: ${question.answer})` : ''}`,
        );
      }
      const records = new Map<string, MemoryRecord>();
      const ids = result.pool.map((candidate) => candidate.memoryId);
      for (const record of await graphmemix.store.getMemories(archive.contextId, ids))
        records.set(record.id, record);
      pages.push({
        result,
        records,
        ...(question.expectMemoryIds ? { gold: question.expectMemoryIds } : {}),
      });
    }
    await showUpdateAndHistory(graphmemix, archive.contextId, write);
    await showSupersession(graphmemix, archive.contextId, write);
  } finally {
    await graphmemix.close();
  }

  const viewerPath = join(outDir, 'demo-view.html');
  // Thumbnails and frame strips of the evidence, inlined so the page stays one offline file.
  const evidence = pages.flatMap((page) =>
    page.result.evidence.flatMap((item) => {
      const record = (page.records as Map<string, MemoryRecord> | undefined)?.get(item.memoryId);
      return record ? [record] : [];
    }),
  );
  await writeFile(
    viewerPath,
    renderViewerHtml(pages, {
      title: 'graphmemix demo: evidence forests',
      subtitle: `archive ${dbPath}`,
      mediaUrl: await inlineThumbnails(evidence),
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  write('');
  write(
    `done in ${seconds.toFixed(1)} s. Open the viewer page (candidate pool, verified edges, swaps, forests):`,
  );
  write(viewerPath);
  return { outDir, dbPath, viewerPath, seconds };
}

async function ingestAll(
  graphmemix: Graphmemix,
  contextId: string,
  sources: [ImportFormat, string][],
  write: (line: string) => void,
): Promise<void> {
  for (const [format, path] of sources) {
    const report = await graphmemix.ingest(path, { format, contextId });
    const edges = Object.entries(report.edges)
      .filter(([, count]) => count > 0)
      .map(([type, count]) => `${type} ${count}`)
      .join(', ');
    write(
      `ingested ${format.padEnd(9)} ${String(report.imported + report.updated + report.unchanged).padStart(3)} memories` +
        `${report.rejected.length > 0 ? `, ${report.rejected.length} rejected` : ''} in ${report.seconds.toFixed(1)} s` +
        `${edges ? ` (edges: ${edges})` : ''}`,
    );
    for (const rejection of report.rejected)
      write(`  rejected ${rejection.recordId ?? rejection.file ?? ''}: ${rejection.message}`);
  }
}

/**
 * The memory lifecycle: an appointment is stored, then moved (`updateMemory` writes version 2, version 1
 * stays in the history with its time), and the question about it is answered from the current version.
 */
async function showUpdateAndHistory(
  graphmemix: Graphmemix,
  contextId: string,
  write: (line: string) => void,
): Promise<void> {
  write('');
  write('Memory update and history:');
  await graphmemix.addMemories(contextId, [
    {
      id: 'dentist',
      text: 'Dentist appointment with Dr. Ruiz on Monday June 3 at 9:00',
      timestamp: '2024-05-20T10:00:00Z',
      agentId: 'calendar',
    },
  ]);
  const update = await graphmemix.updateMemory(contextId, 'dentist', {
    text: 'Dentist appointment with Dr. Ruiz moved to Thursday June 6 at 11:00',
    timestamp: '2024-05-28T16:30:00Z',
  });
  write(`  updateMemory('dentist') -> version ${update.version}`);
  for (const version of (await graphmemix.memoryHistory(contextId, 'dentist')) ?? []) {
    write(
      `  v${version.version} event ${version.record.timestamp} recorded ${version.record.recordedAt}: ${version.record.text}`,
    );
  }
  const question = 'When is the dentist appointment with Dr. Ruiz?';
  const result = await graphmemix.retrieve(contextId, question, { k: 4, filter: { agentId: 'calendar' } });
  write(`  Q. ${question} (filters: agent_id calendar)`);
  for (const item of result.evidence) write(`    ${item.rank}. [${item.date ?? 'undated'}] ${item.text}`);
}

/**
 * Two clocks and supersession: a later note corrects an earlier one (detected offline: same stream, a
 * revision cue, a changed date), so the question about it gets both versions, oldest first with both dates,
 * and the current value is marked; the demo answers with the current value first, then its history.
 */
async function showSupersession(
  graphmemix: Graphmemix,
  contextId: string,
  write: (line: string) => void,
): Promise<void> {
  write('');
  write('Supersession (two clocks):');
  await graphmemix.addMemories(contextId, [
    {
      id: 'recital',
      kind: 'note',
      text: "Lea's piano recital is on Friday June 14 at 18:00 in the music school hall",
      timestamp: '2024-06-01T09:00:00Z',
    },
  ]);
  await graphmemix.addMemories(contextId, [
    {
      id: 'recital-moved',
      kind: 'note',
      text: "Update: Lea's piano recital moved to Saturday June 15 at 17:00",
      timestamp: '2024-06-10T19:15:00Z',
    },
  ]);
  const question = "When is Lea's piano recital now?";
  const result = await graphmemix.retrieve(contextId, question, { k: 4 });
  write(`  Q. ${question}`);
  for (const item of result.evidence) {
    const status = item.version ? ` ${item.version.status.toUpperCase()}` : '';
    write(
      `    ${item.rank}.${status} [event ${item.date ?? 'undated'} | recorded ${item.recordedAt ?? '-'}] ${item.text}`,
    );
  }
  const current = result.evidence.filter((item) => item.version?.status === 'current');
  const history = result.evidence.filter((item) => item.version?.status === 'superseded');
  for (const item of current) write(`  answer (current value): ${item.text}`);
  for (const item of history) write(`    was (superseded): ${item.text}`);
  if (current.length === 0) write('  answer: no current version found (unexpected)');
}

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line) => prefix + line)
    .join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { out: { type: 'string' } }, strict: true });
  try {
    await runDemo(values.out === undefined ? {} : { outDir: values.out });
  } catch (error) {
    process.stderr.write(
      `demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  }
}
