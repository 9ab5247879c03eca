import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EvalReport, SelectorSummary } from './run-eval.ts';
import { barChartSvg, scatterSvg } from './svg-chart.ts';

/**
 * Writes `report.md` with tables and SVG charts (recall by selector, recall by question type, and accuracy
 * against lifecycle time when answers were judged) into `dir`, plus the viewer page of example questions
 * when a renderer is given. Returns the written paths.
 */
export function writeEvalReport(
  report: EvalReport,
  dir: string,
  renderViewer?: (examples: EvalReport['examples']) => string,
): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  const write = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    written.push(path);
  };
  write(
    'recall-by-selector.svg',
    barChartSvg(
      `Recall@${report.k} by selector`,
      report.selectors.map((s) => ({ label: s.name, value: s.recall * 100 })),
      { max: 100, unit: '%' },
    ),
  );
  const main = report.selectors.find((s) => s.name === 'graphmemix') ?? report.selectors[0];
  if (main) {
    write(
      'recall-by-type.svg',
      barChartSvg(
        `Recall@${report.k} by question type (${main.name})`,
        Object.entries(main.by_type).map(([type, m]) => ({
          label: `${type} (n=${m.questions})`,
          value: m.recall * 100,
        })),
        { max: 100, unit: '%' },
      ),
    );
  }
  if (report.answers && report.answers.judged > 0) {
    write(
      'accuracy-vs-lifecycle.svg',
      scatterSvg(
        'Judge accuracy against estimated full lifecycle',
        [{ label: 'graphmemix', x: report.lifecycle.total_seconds / 3600, y: report.answers.accuracy * 100 }],
        { x: 'estimated lifecycle (hours)', y: 'judge accuracy (%)' },
      ),
    );
  }
  if (renderViewer && report.examples.length > 0) write('viewer.html', renderViewer(report.examples));
  write('report.md', renderMarkdown(report, written));
  return written;
}

export function renderMarkdown(report: EvalReport, files: readonly string[] = []): string {
  const pct = (x: number) => (x * 100).toFixed(2);
  const table = (rows: readonly SelectorSummary[]) => [
    `| selector | Recall@${report.k} | Hit@${report.k} | AllGold@${report.k} | mean selected | questions |`,
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (s) =>
        `| ${s.name} | ${pct(s.recall)} | ${pct(s.hit)} | ${pct(s.all_gold)} | ${s.mean_selected.toFixed(2)} | ${s.questions} |`,
    ),
  ];
  const types = [...new Set(report.selectors.flatMap((s) => Object.keys(s.by_type)))].sort();
  const lines = [
    `# graphmemix evaluation: ${report.dataset}`,
    '',
    `${report.questions} questions (${report.questions_without_gold} without gold evidence, skipped for evidence metrics);`,
    `${report.unresolved_gold} gold ids did not resolve to a stored memory${report.unresolved_gold > 0 ? ' (listed below)' : ''}.`,
    '',
    '## Evidence selection',
    '',
    ...table(report.selectors),
    '',
    '![recall by selector](recall-by-selector.svg)',
    '',
    '## Recall by question type',
    '',
    `| selector | ${types.join(' | ')} |`,
    `| --- | ${types.map(() => '---:').join(' | ')} |`,
    ...report.selectors.map(
      (s) =>
        `| ${s.name} | ${types.map((t) => (s.by_type[t] ? pct(s.by_type[t].recall) : '-')).join(' | ')} |`,
    ),
    '',
    '![recall by type](recall-by-type.svg)',
    '',
  ];
  if (report.ablation) lines.push('## Ablation ladder (paper Table 3)', '', ...table(report.ablation), '');
  lines.push(
    '## Cost',
    '',
    '| measure | value |',
    '| --- | ---: |',
    `| digest seconds (${report.memories} memories) | ${report.digest_seconds.toFixed(2)} |`,
    `| digest ms per memory | ${(report.digest_seconds_per_memory * 1000).toFixed(3)} |`,
    `| retrieve p50 / p95 ms | ${report.latency_ms.retrieve_p50.toFixed(1)} / ${report.latency_ms.retrieve_p95.toFixed(1)} |`,
    `| solver p50 ms | ${report.latency_ms.solver_p50.toFixed(2)} |`,
    ...Object.entries(report.latency_ms.stages_mean).map(
      ([stage, ms]) => `| mean ${stage} ms per question | ${ms.toFixed(2)} |`,
    ),
    `| model calls per question | ${report.model_calls_per_question.toFixed(2)} |`,
    `| tokens per question | ${report.tokens_per_question.toFixed(0)} |`,
    `| estimated full lifecycle (digest all + answer all) | ${report.lifecycle.total_seconds.toFixed(1)} s |`,
    '',
  );
  if (report.answers) {
    lines.push(
      '## Answers',
      '',
      `judge accuracy ${pct(report.answers.accuracy)} over ${report.answers.judged} judged; exact match ${pct(report.answers.exact_match)};`,
      `token F1 ${pct(report.answers.token_f1)}; reader failures ${report.answers.failed}.`,
      '',
    );
    if (files.some((f) => f.endsWith('accuracy-vs-lifecycle.svg')))
      lines.push('![accuracy](accuracy-vs-lifecycle.svg)', '');
  }
  if (Object.keys(report.flags).length > 0) {
    lines.push(
      '## Flags',
      '',
      ...Object.entries(report.flags).map(([flag, count]) => `- ${flag}: ${count}`),
      '',
    );
  }
  if (report.unresolved.length > 0) {
    lines.push(
      '## Unresolved gold',
      '',
      ...report.unresolved.map((u) => `- ${u.question_id}: ${u.memory_ids.join(', ')}`),
      '',
    );
  }
  if (files.some((f) => f.endsWith('viewer.html')))
    lines.push('Evidence forests of example questions: [viewer.html](viewer.html)', '');
  return `${lines.join('\n')}\n`;
}
