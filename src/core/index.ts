export * from './candidate-graph.ts';
export { fitListwise, type ListwiseFit, type ListwiseGroup } from './fit-listwise.ts';
export { fitLogistic, type LogisticFit, type LogisticRow, solveLinear } from './fit-logistic.ts';
export {
  fitRefinementKappa,
  type KappaFit,
  type KappaFitOptions,
  type KappaFitQuestion,
} from './fit-refinement-kappa.ts';
export { compareNodeRank, comparePosition } from './indexed-graph.ts';
export { forestObjective, type KruskalResult, kruskalForest, nodeSetObjective } from './kruskal-forest.ts';
export { orderVersions, type VersionLink } from './order-versions.ts';
export { type FixedKProposal, proposeFixedK } from './propose-fixed-k.ts';
export { MAX_ENUMERATION_SIZE, type RefineMethod, type Refinement, refineExact } from './refine-exact.ts';
export { type SerializedForest, serializeForest } from './serialize-forest.ts';
export { solveForest } from './solve-forest.ts';
export { resolveSolverParams } from './solver-params.ts';
export {
  ecvEdgeWeight,
  edgeCostFromWeight,
  type GainParams,
  MIN_EDGE_WEIGHT,
  OBJECTIVE_TOLERANCE,
  structuralGain,
} from './structural-gain.ts';
export { UnionFind } from './union-find.ts';
