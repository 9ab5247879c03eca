import { existsSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { type EvalReport, runEval } from '../../eval/run-eval.ts';
import { parseSelectorList } from '../../eval/selectors/selector-registry.ts';
import { QUESTION_SPLITS } from '../../eval/splits.ts';
import { writeEvalReport } from '../../eval/write-eval-report.ts';
import { createModels, loadModelConfig, openGraphmemix } from '../../index.ts';
import { renderViewerHtml } from '../../viewer/render-viewer-html.ts';
import { createProgress } from '../progress.ts';

/** The one schema of the eval flags (the CLI is this command's only edge). */
const evalFlagsSchema = z.object({
  format: z.enum(['mem-gallery', 'locomo', 'm3exam', 'bundle', 'unified']),
  data: z.string().min(1),
  k: z.coerce.number().int().min(1).max(64).default(10),
  selectors: z.string().optional(),
  questions: z.enum(QUESTION_SPLITS as unknown as ['all', 'dev', 'heldout', 'heldout100']).default('all'),
  json: z.string().optional(),
  report: z.string().optional(),
  db: z.string().optional(),
  config: z.string().optional(),
  ablation: z.boolean().default(true),
  answers: z.boolean().optional(),
  limit: z.coerce.number().int().min(1).optional(),
  shape: z.enum(['rounds', 'turns']).optional(),
});

export function registerEvalCommand(program: Command): void {
  program
    .command('eval')
    .description(
      'Evaluate evidence selection (and answers, with models) on a dataset: all selectors on one frozen pool.',
    )
    .requiredOption('--format <format>', 'mem-gallery|locomo|m3exam|bundle|unified')
    .requiredOption('--data <path>', 'dataset file or directory')
    .option('--k <n>', 'evidence budget K', '10')
    .option('--selectors <list>', 'comma-separated selectors, or all (default)')
    .option('--questions <split>', 'all|dev|heldout|heldout100', 'all')
    .option('--json <file>', 'write the result object to this file ("-" for stdout)')
    .option('--report <dir>', 'write report.md, SVG charts and the viewer page here')
    .option(
      '--db <file|url>',
      'use (and keep) this archive (SQLite file or postgres:// URL) instead of a temporary one',
    )
    .option('--config <file>', 'model configuration file (default: env / ./graphmemix.config.json)')
    .option('--no-ablation', 'skip the ablation ladder')
    .option('--answers', 'answer with the reader and judge (needs reader and judge models)')
    .option('--limit <n>', 'only the first n questions of the split')
    .option(
      '--shape <shape>',
      'mem-gallery/m3exam: rounds (default) or turns (two-person-chat shape, no rounds)',
    )
    .addHelpText(
      'after',
      `
Examples:
  $ graphmemix eval --format mem-gallery --data ../shared/data/mem-gallery/dialog --report out/mg
  $ graphmemix eval --format m3exam --data ../shared/data/m3exam --questions heldout100 --json out/m3.json`,
    )
    .action(async (rawFlags: Record<string, unknown>) => {
      const parsed = evalFlagsSchema.safeParse(rawFlags);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new GraphmemixError('INVALID_INPUT', issue?.message ?? 'invalid flags', {
          location: { field: issue?.path.join('.') ?? 'flags' },
        });
      }
      const flags = parsed.data;
      if (!existsSync(flags.data)) {
        throw new GraphmemixError('NOT_FOUND_PATH', `no such file or directory: ${flags.data}`, {
          location: { file: flags.data, field: 'data' },
        });
      }
      const models = createModels(loadModelConfig(flags.config === undefined ? {} : { path: flags.config }));
      const progress = createProgress({ label: 'eval' });
      let report: EvalReport;
      try {
        report = await runEval({
          format: flags.format,
          data: flags.data,
          k: flags.k,
          selectors: parseSelectorList(flags.selectors),
          questions: flags.questions,
          models,
          ablation: flags.ablation,
          ...(flags.answers === undefined ? {} : { answers: flags.answers }),
          ...(flags.db === undefined ? {} : { db: flags.db }),
          ...(flags.limit === undefined ? {} : { limit: flags.limit }),
          ...(flags.shape === undefined ? {} : { shape: flags.shape }),
          onProgress: (done, total) => progress.update(done, `of ${total} questions`),
          open: (db, openModels) => openGraphmemix({ db, models: openModels }),
        });
      } finally {
        progress.done();
      }
      // A table of zeros is not a result: no question, or none with gold, means the data or format is wrong.
      if (report.questions === 0 || report.questions_without_gold === report.questions) {
        throw new GraphmemixError(
          'INVALID_INPUT',
          report.questions === 0
            ? `no questions read from ${flags.data} as ${flags.format} (check --format, --data, --questions)`
            : `none of the ${report.questions} questions has gold evidence in ${flags.data} (check --format)`,
          { location: { field: 'format' } },
        );
      }
      const { examples: _examples, ...json } = report;
      if (flags.json === '-') process.stdout.write(`${JSON.stringify(json)}\n`);
      else if (flags.json) writeFileSync(flags.json, `${JSON.stringify(json, null, 2)}\n`);
      if (flags.report) {
        writeEvalReport(report, flags.report, (examples) =>
          renderViewerHtml(
            examples.map((e) => ({
              result: e.result,
              gold: e.gold,
              label: `${e.question.id} (${e.question.type ?? 'untyped'})`,
            })),
            { title: `graphmemix eval: ${report.dataset}` },
          ),
        );
      }
      if (flags.json !== '-') process.stdout.write(formatTable(report, flags.report));
    });
}

function formatTable(report: EvalReport, reportDir: string | undefined): string {
  const pct = (x: number) => (x * 100).toFixed(2).padStart(7);
  const rows = (list: EvalReport['selectors']) =>
    list.map(
      (s) =>
        `  ${s.name.padEnd(22)} ${pct(s.recall)} ${pct(s.hit)} ${pct(s.all_gold)} ${s.mean_selected.toFixed(2).padStart(8)} ${pct(s.by_fold.dev.recall)} ${pct(s.by_fold.heldout.recall)}`,
    );
  const header = `  ${'selector'.padEnd(22)} ${'Recall'.padStart(7)} ${'Hit'.padStart(7)} ${'AllGold'.padStart(7)} ${'selected'.padStart(8)} ${'R fold0'.padStart(7)} ${'R 1-4'.padStart(7)}`;
  const lines = [
    `${report.dataset}: ${report.questions} questions, ${report.questions_without_gold} without gold, ${report.unresolved_gold} unresolved gold ids, K = ${report.k}`,
    header,
    ...rows(report.selectors),
  ];
  if (report.ablation) lines.push('ablation ladder:', header, ...rows(report.ablation));
  lines.push(
    `digest ${report.digest_seconds.toFixed(2)} s (${report.memories} memories); retrieve p50 ${report.latency_ms.retrieve_p50.toFixed(1)} ms, p95 ${report.latency_ms.retrieve_p95.toFixed(1)} ms; solver p50 ${report.latency_ms.solver_p50.toFixed(2)} ms`,
    `packet sizes (graphmemix, questions with gold): ${Object.entries(report.packet_sizes)
      .sort((a, b) => Number(a[0]) - Number(b[0]))
      .map(([size, count]) => `${size}: ${count}`)
      .join(', ')}`,
    ...(['dev', 'heldout'] as const).map((fold) => {
      const g = report.recall_gap[fold];
      return `recall gap ${fold === 'dev' ? 'fold 0' : 'folds 1-4'} (points of gold): outside pool ${g.outside_pool.toFixed(2)}, in pool not proposed ${g.in_pool_not_proposed.toFixed(2)}, dropped by refinement ${g.dropped_by_refinement.toFixed(2)}; packet ${g.packet_recall.toFixed(2)}, mean size ${g.mean_packet_size.toFixed(2)}, below K ${(100 * g.below_k).toFixed(1)}%`;
    }),
    `model calls/question ${report.model_calls_per_question.toFixed(2)}, tokens/question ${report.tokens_per_question.toFixed(0)}, lifecycle ${report.lifecycle.total_seconds.toFixed(1)} s`,
  );
  if (report.answers) {
    lines.push(
      `answers: judge accuracy ${pct(report.answers.accuracy)} (${report.answers.judged} judged), EM ${pct(report.answers.exact_match)}, F1 ${pct(report.answers.token_f1)}`,
    );
  }
  if (reportDir) lines.push(`report: ${reportDir}/report.md`);
  return `${lines.join('\n')}\n`;
}
