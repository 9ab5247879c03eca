// The evaluation harness (package entry `graphmemix/eval`): all selectors on one frozen pool per question.
export { type EvalOptions, type EvalReport, runEval } from './run-eval.ts';
export { writeEvalReport } from './write-eval-report.ts';
