/**
 * Leave one dev context out for the offline ranker: how does a ranker fitted WITHOUT a context rank on it, i.e.
 * what does an archive the ranker never saw (a held-out persona, another dataset) get?
 *
 *   npx tsx bench/ranker-loco-probe.ts <archive.db> [<archive.db> ...] [--l2 0.01,0.1,1] [--all-others] [--by-dataset] [--drop-each] [--json out.json]
 *
 * The archives: `graphmemix ingest` of the dev data (e.g. Mem-Gallery and M3Exam, each with and without
 * rounds, as `graphmemix train-ranker` takes them). Every question with gold runs stages 1-3 once; then for each
 * listwise L2 of `--l2` (default: the shipped RANKER_L2) and each context c (a context id, the same in both
 * shapes), rankers are fitted and scored on c's questions by replaying the solver (`rankerRecall`: the packets
 * retrieve returns; the shipped ranker's replay equals `graphmemix eval`):
 * - fold0-others: fitted on fold 0 of the other contexts only (the shipped protocol without c). Its recall on
 *   c's fold 0 uses dev-fold questions only, so a constant chosen by it leaves folds 1-4 clean;
 * - all-others (`--all-others`): fitted on every question of the other contexts (c never seen);
 * - shipped: src/pipeline/offline-ranker.json for comparison (fitted on fold 0 of every context, c's included).
 * `--by-dataset` holds out every context of c's dataset instead (the contexts in the same archives): a ranker
 * fitted on one dataset scored on another. `--drop-each` adds, at the first L2, one fit per feature left out.
 * Printed per archive, pooled over questions: Recall@10 on c's fold 0 / folds 1-4; then per ranker the mean
 * over archives (each archive shape weighs the same, as in the kappa fit). Docs: docs/offline-verifiers.md,
 * "Seventh round".
 */
import { writeFileSync } from 'node:fs';
import { questionFold } from '../src/eval/splits.ts';
import { type OfflineRanker, RANKER_L2, resolveRanker } from '../src/pipeline/offline-ranker.ts';
import { RANKER_FEATURES } from '../src/pipeline/ranker-features.ts';
import { rankerRecall } from '../src/pipeline/ranker-refinement.ts';
import {
  fitRankerOnQuestions,
  offlineRankerKey,
  type RankerTrainingQuestion,
  rankerTrainingQuestions,
} from '../src/pipeline/train-offline-ranker.ts';
import { openStore } from '../src/store/open-store.ts';
import { probeFlags } from './support/probe-args.ts';

const args = process.argv.slice(2);
const flag = probeFlags(args);
const valued = new Set(['--json', '--l2']);
const files = args.filter((arg, at) => !arg.startsWith('--') && !valued.has(args[at - 1] ?? ''));
if (files.length === 0)
  throw new Error(
    'usage: <archive.db> [<archive.db> ...] [--l2 a,b] [--all-others] [--by-dataset] [--drop-each] [--json out.json]',
  );
const jsonOut = args.includes('--json') ? flag('json', '') : '';
const l2Grid = (args.includes('--l2') ? flag('l2', '') : String(RANKER_L2)).split(',').map(Number);
if (l2Grid.some((l2) => !(l2 >= 0))) throw new Error('--l2: comma-separated numbers >= 0');
const allOthers = args.includes('--all-others');

const key = offlineRankerKey();
const shipped = resolveRanker(key);
if (!shipped) throw new Error(`no usable shipped ranker for ${key}`);

const stores = [];
for (const file of files) stores.push(await openStore(file, { readonly: true }));
const started = performance.now();
const sets = await rankerTrainingQuestions(stores, { include: () => true });
for (const store of stores) await store.close();
const archives = files.map((file) => file.split('/').pop()!);
process.stderr.write(
  `${sets.flat().length} questions with gold in ${files.length} archives, pools in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
);

const contexts = [...new Set(sets.flat().map((q) => q.contextId))].sort();
const byDataset = args.includes('--by-dataset');
/** context -> its dataset key (the archives holding it), and dataset key -> its contexts. */
const datasetOf = new Map<string, string>();
const datasetContexts = new Map<string, Set<string>>();
for (const context of contexts) {
  const dataset = archives.filter((_, at) => sets[at]!.some((q) => q.contextId === context)).join('+');
  datasetOf.set(context, dataset);
  if (!datasetContexts.has(dataset)) datasetContexts.set(dataset, new Set());
  datasetContexts.get(dataset)!.add(context);
}
const subset = (keep: (q: RankerTrainingQuestion) => boolean) => sets.map((set) => set.filter(keep));
interface Row {
  l2: number;
  ranker: string;
  archive: string;
  context: string;
  fold0: number;
  later: number;
  n0: number;
  nLater: number;
}
const rows: Row[] = [];
const score = (l2: number, name: string, context: string, ranker: OfflineRanker) => {
  for (const [at, set] of sets.entries()) {
    const mine = set.filter((q) => q.contextId === context);
    if (mine.length === 0) continue;
    const first = mine.filter((q) => questionFold(q.questionId) === 0);
    const later = mine.filter((q) => questionFold(q.questionId) !== 0);
    rows.push({
      l2,
      ranker: name,
      archive: archives[at]!,
      context,
      fold0: 100 * rankerRecall(ranker, first),
      later: 100 * rankerRecall(ranker, later),
      n0: first.length,
      nLater: later.length,
    });
  }
};
for (const context of contexts) score(RANKER_L2, 'shipped', context, shipped);
// --drop-each: also, at the first L2 of the grid, one fit per feature with that feature left out (0 in every
// training row, so its weight stays 0): which features help a context the ranker never saw.
const dropped = (drop: number) => (set: RankerTrainingQuestion[]) =>
  set.map((q) => ({ ...q, rows: q.rows.map((x) => x.map((v, at) => (at === drop ? 0 : v))) }));
const fits: Array<{ name: string; l2: number; drop?: number }> = l2Grid.map((l2) => ({
  name: 'fold0-others',
  l2,
}));
if (args.includes('--drop-each'))
  for (const [at, feature] of RANKER_FEATURES.entries())
    fits.push({ name: `drop ${feature}`, l2: l2Grid[0]!, drop: at });
for (const { name, l2, drop } of fits) {
  for (const context of contexts) {
    // --by-dataset: the held-out unit is every context of c's dataset (the archives naming c), so the fit
    // sees only other datasets (leave one dataset out).
    const held = byDataset ? datasetContexts.get(datasetOf.get(context)!)! : new Set([context]);
    const others = (q: RankerTrainingQuestion) => !held.has(q.contextId);
    const fitWithout = (keep: (q: RankerTrainingQuestion) => boolean, probe: string) => {
      const training = subset(keep);
      return fitRankerOnQuestions(
        drop === undefined ? training : training.map(dropped(drop)),
        key,
        { probe, heldOut: context },
        { l2 },
      );
    };
    score(
      l2,
      name,
      context,
      fitWithout((q) => others(q) && questionFold(q.questionId) === 0, name),
    );
    if (allOthers && drop === undefined) score(l2, 'all-others', context, fitWithout(others, 'all-others'));
  }
  process.stderr.write(`${name} l2 ${l2} done\n`);
}

/** Recall pooled over questions: fold 0 / folds 1-4. */
const pooled = (picked: readonly Row[]) => {
  const mean = (value: (r: Row) => number, n: (r: Row) => number) =>
    picked.reduce((s, r) => s + value(r) * n(r), 0) /
    Math.max(
      1,
      picked.reduce((s, r) => s + n(r), 0),
    );
  return {
    fold0: mean(
      (r) => r.fold0,
      (r) => r.n0,
    ),
    later: mean(
      (r) => r.later,
      (r) => r.nLater,
    ),
  };
};
const text = ({ fold0, later }: { fold0: number; later: number }) =>
  `${fold0.toFixed(2)} / ${later.toFixed(2)}`;
console.log('Recall@10 on the held-out context: fold 0 / folds 1-4, pooled over its questions');
const variants = [...new Map(rows.map((r) => [`${r.ranker} l2=${r.l2}`, r])).values()];
for (const variant of variants) {
  const mine = rows.filter((r) => r.ranker === variant.ranker && r.l2 === variant.l2);
  const perArchive = archives.map((archive) => pooled(mine.filter((r) => r.archive === archive)));
  const meanOf = (pick: (p: { fold0: number; later: number }) => number) =>
    perArchive.reduce((s, p) => s + pick(p), 0) / perArchive.length;
  const name = variant.ranker === 'shipped' ? 'shipped' : `${variant.ranker} l2=${variant.l2}`;
  console.log(
    `${name.padEnd(24)} ${archives.map((archive, at) => `${archive} ${text(perArchive[at]!)}`).join(' | ')} | mean ${text({ fold0: meanOf((p) => p.fold0), later: meanOf((p) => p.later) })}`,
  );
}
if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify({ files, rows }, null, 2)}\n`);
