import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { parseInput } from '../../api-schemas/parse-input.ts';
import { viewSchema } from '../../api-schemas/route-schemas.ts';
import { redactDbUrl } from '../../index.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';
import type { ViewerQuestion } from '../../viewer/render-viewer-html.ts';
import { requireArchive, requireContext } from '../archive-checks.ts';
import { DB_FLAG, DB_FLAG_HELP } from '../resolve-db.ts';

interface ViewFlags {
  db: string;
  context: string;
  out: string;
  k?: string;
  gold?: string;
  config?: string;
  json?: boolean;
}

export function registerViewCommand(program: Command): void {
  program
    .command('view')
    .description(
      'Write the evidence-forest viewer page (one self-contained HTML file) for one or more questions.',
    )
    .argument('<questions...>', 'questions to explain')
    .option(DB_FLAG, DB_FLAG_HELP)
    .requiredOption('--context <id>', 'archive context (user id) to ask')
    .option('--out <file>', 'output HTML file', 'graphmemix-view.html')
    .option('--k <n>', 'evidence budget K')
    .option('--gold <ids>', 'comma-separated gold memory ids (evaluation mode)')
    .option('--config <file>', 'model config file')
    .option('--json', 'print a JSON summary instead of text')
    .addHelpText(
      'after',
      `
Example:
  $ graphmemix view "When is the design review?" --db archive.db --context alice --out review.html`,
    )
    .action(async (questions: string[], flags: ViewFlags) => {
      const inputs = questions.map((q) => parseInput(viewSchema, { user_id: flags.context, q, k: flags.k }));
      const gold = flags.gold
        ?.split(',')
        .map((id) => id.trim())
        .filter(Boolean);
      requireArchive(flags.db);
      const { openShellGraphmemix } = await import('../../shell-kit/open-shell-graphmemix.ts');
      const { renderViewerHtml } = await import('../../viewer/render-viewer-html.ts');
      const { inlineThumbnails } = await import('../../viewer/inline-thumbnails.ts');
      const graphmemix = await openShellGraphmemix({
        db: flags.db,
        ...(flags.config ? { config: flags.config } : {}),
        // A one-shot read: no background media queue.
        mediaDigest: 'inline',
      });
      const pages: ViewerQuestion[] = [];
      try {
        await requireContext(graphmemix, flags.context, flags.db);
        for (const input of inputs) {
          const result = await graphmemix.retrieve(
            input.user_id,
            input.q,
            input.k === undefined ? {} : { k: input.k },
          );
          const records = new Map<string, MemoryRecord>();
          for (const record of await graphmemix.store.getMemories(
            input.user_id,
            result.pool.map((c) => c.memoryId),
          )) {
            records.set(record.id, record);
          }
          pages.push({ result, records, ...(gold ? { gold } : {}) });
        }
      } finally {
        await graphmemix.close();
      }
      const out = resolve(flags.out);
      const evidence = pages.flatMap((page) =>
        page.result.evidence.flatMap((item) => {
          const record = (page.records as Map<string, MemoryRecord>).get(item.memoryId);
          return record ? [record] : [];
        }),
      );
      await writeFile(
        out,
        renderViewerHtml(pages, {
          subtitle: `context ${flags.context} · ${redactDbUrl(flags.db)}`,
          mediaUrl: await inlineThumbnails(evidence),
        }),
      );
      if (flags.json) {
        const summary = pages.map((p) => ({
          question: p.result.question.prompt,
          evidence: p.result.evidence.map((e) => e.memoryId),
          trees: p.result.forest.trees.length,
        }));
        process.stdout.write(`${JSON.stringify({ out, questions: summary })}\n`);
      } else process.stdout.write(`${out}\n`);
    });
}
