export * from './candidate-graph.ts';
