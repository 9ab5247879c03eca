import type { Command } from 'commander';
import { GraphmemixError } from '../../errors/index.ts';
import { requireArchive } from '../archive-checks.ts';
import { DB_FLAG, DB_FLAG_HELP } from '../resolve-db.ts';

interface CalibrateFlags {
  db: string;
  context?: string[];
  questions: string;
  verifiers?: string;
  config?: string;
  dryRun?: boolean;
  json?: boolean;
}

export function registerCalibrateCommand(program: Command): void {
  program
    .command('calibrate')
    .description(
      'Fit the prize calibration p = sigmoid(a*s + b*v + c) on the stored dev questions and save it in the archive.',
    )
    .option(DB_FLAG, DB_FLAG_HELP)
    .option('--context <id...>', 'contexts whose questions are used (default: all)')
    .option('--questions <split>', 'dev (sha256 fold 0, the only split meant for fitting) | all', 'dev')
    .option('--verifiers <mode>', 'auto | model | offline | none (default auto): the configuration to fit')
    .option('--config <file>', 'model config file')
    .option('--dry-run', 'fit and print, do not save')
    .option('--json', 'print the fit as JSON')
    .addHelpText(
      'after',
      `
A configuration (retriever + node verifier + edge verifier) with no fitted calibration, neither in the
archive nor shipped, uses the paper's (a, b, c), which were fitted for another score scale: every result
then carries the flag calibration_unfitted and trace.calibration.fitted = false. To fit one:
  1. put questions with gold evidence in the archive: unified JSONL rows
     {"type":"question","id":"q1","prompt":"...","evidence":["m1","m2"]} (docs/archive-format.md), or a
     benchmark format (mem-gallery, locomo, m3exam);
  2. run calibrate with the models you retrieve with (same --config, same --verifiers):
Example:
  $ graphmemix ingest ../shared/data/mem-gallery/dialog --format mem-gallery --db dev.db
  $ graphmemix calibrate --db dev.db --questions dev`,
    )
    .action(async (flags: CalibrateFlags) => {
      if (flags.questions !== 'dev' && flags.questions !== 'all') {
        throw new GraphmemixError('INVALID_INPUT', '--questions must be dev or all', {
          location: { field: 'questions' },
        });
      }
      const verifiers = flags.verifiers;
      if (verifiers !== undefined && !['auto', 'model', 'offline', 'none'].includes(verifiers)) {
        throw new GraphmemixError('INVALID_INPUT', '--verifiers must be auto, model, offline or none', {
          location: { field: 'verifiers' },
        });
      }
      const { calibratePrizes, createModels, loadModelConfig, openStore } = await import('../../index.ts');
      const { isDevQuestion } = await import('../../eval/splits.ts');
      requireArchive(flags.db);
      const models = createModels(loadModelConfig(flags.config === undefined ? {} : { path: flags.config }));
      const store = await openStore(flags.db);
      try {
        const report = await calibratePrizes(store, models, {
          ...(flags.context ? { contexts: flags.context } : {}),
          include: flags.questions === 'dev' ? (q) => isDevQuestion(q.id) : () => true,
          ...(verifiers === undefined
            ? {}
            : { verifiers: verifiers as 'auto' | 'model' | 'offline' | 'none' }),
          save: !flags.dryRun,
        });
        if (report.samples === 0) {
          throw new GraphmemixError(
            'NOT_FOUND',
            'no stored questions with gold evidence matched: ingest questions with an "evidence" list ' +
              '(unified JSONL, docs/archive-format.md) or a benchmark first; see graphmemix calibrate --help',
            {
              location: { field: 'questions' },
            },
          );
        }
        if (flags.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        else {
          process.stdout.write(
            `key ${report.key}\n` +
              `a ${report.a.toFixed(6)}  b ${report.b.toFixed(6)}  c ${report.c.toFixed(6)}\n` +
              `${report.questions} questions (${report.skipped} skipped without stored gold), ${report.samples} pool candidates, ${report.positives} gold; log loss ${report.logLoss.toFixed(4)}\n` +
              `${report.saved ? 'saved to the archive' : 'not saved (--dry-run)'}\n`,
          );
        }
      } finally {
        await store.close();
      }
    });
}
