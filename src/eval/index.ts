/// <reference types="node" preserve="true" />
// The declarations use Node globals (AbortSignal, fetch, URL, NodeJS.ProcessEnv); @types/node is a dependency
// so a consumer type-checks with no @types of its own.
// The evaluation harness (package entry `graphmemix/eval`): all selectors on one frozen pool per question.
export { type EvalOptions, type EvalReport, runEval } from './run-eval.ts';
export { writeEvalReport } from './write-eval-report.ts';
