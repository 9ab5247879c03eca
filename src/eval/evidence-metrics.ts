/**
 * Evidence metrics per question and their averages. Questions without gold are skipped and counted; gold ids
 * that do not resolve to a stored memory are counted and reported by the caller, never silently dropped.
 */
export interface QuestionMetrics {
  /** Share of gold memories in the selection. */
  recall: number;
  /** 1 when any gold memory is selected. */
  hit: number;
  /** 1 when every gold memory is selected. */
  allGold: number;
  selected: number;
}

export function evidenceMetrics(
  selected: readonly string[],
  gold: readonly string[],
): QuestionMetrics | undefined {
  const goldSet = new Set(gold);
  if (goldSet.size === 0) return undefined;
  const chosen = new Set(selected);
  let found = 0;
  for (const id of goldSet) if (chosen.has(id)) found += 1;
  return {
    recall: found / goldSet.size,
    hit: found > 0 ? 1 : 0,
    allGold: found === goldSet.size ? 1 : 0,
    selected: chosen.size,
  };
}

export interface MetricSummary {
  recall: number;
  hit: number;
  all_gold: number;
  mean_selected: number;
  questions: number;
}

export interface MetricAggregate extends MetricSummary {
  by_type: Record<string, MetricSummary>;
  /**
   * The same metrics on the dev fold (fold 0, what calibrations and the offline ranker are fitted on) and on
   * the held-out folds 1-4 (src/eval/splits.ts), so a figure is never read off the data it was fitted on.
   */
  by_fold: { dev: MetricSummary; heldout: MetricSummary };
}

/** Averages per-question metrics overall and by question type (types sorted for stable output). */
export function aggregateMetrics(
  rows: readonly { type?: string; dev?: boolean; metrics: QuestionMetrics }[],
): MetricAggregate {
  const byType = new Map<string, QuestionMetrics[]>();
  for (const row of rows) {
    const key = row.type ?? 'untyped';
    const list = byType.get(key) ?? [];
    list.push(row.metrics);
    byType.set(key, list);
  }
  const by_type: Record<string, MetricSummary> = {};
  for (const key of [...byType.keys()].sort()) by_type[key] = summarize(byType.get(key) ?? []);
  const by_fold = {
    dev: summarize(rows.filter((row) => row.dev === true).map((row) => row.metrics)),
    heldout: summarize(rows.filter((row) => row.dev === false).map((row) => row.metrics)),
  };
  return { ...summarize(rows.map((row) => row.metrics)), by_type, by_fold };
}

function summarize(list: readonly QuestionMetrics[]): MetricSummary {
  const n = list.length;
  const mean = (pick: (m: QuestionMetrics) => number) =>
    n === 0 ? 0 : list.reduce((s, m) => s + pick(m), 0) / n;
  return {
    recall: mean((m) => m.recall),
    hit: mean((m) => m.hit),
    all_gold: mean((m) => m.allGold),
    mean_selected: mean((m) => m.selected),
    questions: n,
  };
}
