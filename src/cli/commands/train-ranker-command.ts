import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { GraphmemixError } from '../../errors/index.ts';

interface TrainRankerFlags {
  db: string[];
  out: string;
  l2?: string;
}

export function registerTrainRankerCommand(program: Command): void {
  program
    .command('train-ranker')
    .description(
      'Fit the listwise-logistic-offline-ranker (prizes of the offline configuration) on the dev-fold questions of one or more archives and write its JSON artifact.',
    )
    .requiredOption('--db <files...>', 'archive database files with imported benchmark questions')
    .requiredOption('--out <file>', 'artifact to write (the shipped one: src/pipeline/offline-ranker.json)')
    .option(
      '--l2 <n>',
      'L2 penalty of the listwise fit (default: RANKER_L2 of src/pipeline/offline-ranker.ts)',
    )
    .addHelpText(
      'after',
      `
Only dev-fold questions (sha256 fold 0, src/eval/splits.ts) are used, for the weights, the calibrations, the
edge reliability and the refinement kappa (the solver replayed per kappa). Example (the shipped artifact):
  $ graphmemix ingest ../shared/data/mem-gallery/dialog --format mem-gallery --db r.db
  $ graphmemix ingest ../shared/data/m3exam --format m3exam --db r.db
  $ graphmemix ingest ../shared/data/mem-gallery/dialog --format mem-gallery --shape turns --db t.db
  $ graphmemix ingest ../shared/data/m3exam --format m3exam --shape turns --db t.db
  $ graphmemix train-ranker --db r.db t.db --out src/pipeline/offline-ranker.json`,
    )
    .action(async (flags: TrainRankerFlags) => {
      if (flags.db.length === 0) {
        throw new GraphmemixError('INVALID_INPUT', '--db needs at least one archive', {
          location: { field: 'db' },
        });
      }
      const l2 = flags.l2 === undefined ? undefined : Number(flags.l2);
      if (l2 !== undefined && !(Number.isFinite(l2) && l2 >= 0)) {
        throw new GraphmemixError('INVALID_INPUT', `--l2 must be a number >= 0, got ${flags.l2}`, {
          location: { field: 'l2' },
        });
      }
      const { openStore, trainOfflineRanker } = await import('../../index.ts');
      const { isDevQuestion } = await import('../../eval/splits.ts');
      const stores = [];
      try {
        for (const db of flags.db) stores.push(await openStore(db, { readonly: true }));
        const ranker = await trainOfflineRanker(stores, {
          include: (q) => isDevQuestion(q.id),
          provenance: {
            command: `graphmemix train-ranker --db ${flags.db.join(' ')}${l2 === undefined ? '' : ` --l2 ${flags.l2}`} --out ${flags.out}`,
            questions_split: 'dev fold (sha256 fold 0)',
            archives: flags.db.map((db) => db.split('/').pop()),
          },
          ...(l2 === undefined ? {} : { fit: { l2 } }),
        });
        const { logLoss: _logLoss, questions: _questions, ...artifact } = ranker;
        writeFileSync(flags.out, `${JSON.stringify(artifact, null, 2)}\n`);
        process.stdout.write(
          `${artifact.name} v${artifact.version} for ${artifact.key}\n${ranker.questions} dev questions, log loss with rounds ${ranker.logLoss.units.toFixed(4)}, without ${ranker.logLoss.turns.toFixed(4)}\n` +
            artifact.features
              .map((name, i) => `  ${name.padEnd(24)} ${artifact.weights[i]!.toFixed(4)}`)
              .join('\n') +
            `\n  prize calibration with rounds a ${artifact.calibration.units.a.toFixed(4)} c ${artifact.calibration.units.c.toFixed(4)}, without a ${artifact.calibration.turns.a.toFixed(4)} c ${artifact.calibration.turns.c.toFixed(4)}\n  refinement kappa ${artifact.refinement?.kappa ?? 'paper 0.12'} (dev Recall@10 by kappa: ${(artifact.fittedOn?.refinementKappa as { recall: { kappa: number; recall: number }[] } | undefined)?.recall.map((r) => `${r.kappa} ${(100 * r.recall).toFixed(2)}`).join(', ') ?? '-'})\nwritten to ${flags.out}\n`,
        );
      } finally {
        for (const store of stores) await store.close();
      }
    });
}
