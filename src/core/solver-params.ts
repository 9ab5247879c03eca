import { GraphmemixError } from '../errors/index.ts';
import { DEFAULT_SOLVER_PARAMS, type SolverParams } from './candidate-graph.ts';

/** Fills defaults and rejects budgets and costs the objective is not defined for (INVALID_INPUT). */
export function resolveSolverParams(params: Partial<SolverParams> = {}): SolverParams {
  const resolved: SolverParams = { ...DEFAULT_SOLVER_PARAMS };
  for (const key of ['k', 'lambda', 'kappaProposal', 'kappa'] as const) {
    const value = params[key];
    if (value !== undefined) resolved[key] = value;
  }
  if (!Number.isInteger(resolved.k) || resolved.k < 1) {
    throw bad('k', `budget k must be an integer >= 1, got ${resolved.k}`);
  }
  for (const key of ['lambda', 'kappaProposal', 'kappa'] as const) {
    const value = resolved[key];
    if (!Number.isFinite(value) || value < 0)
      throw bad(key, `${key} must be a finite number >= 0, got ${value}`);
  }
  return resolved;
}

function bad(field: string, message: string): GraphmemixError {
  return new GraphmemixError('INVALID_INPUT', message, { location: { field } });
}
