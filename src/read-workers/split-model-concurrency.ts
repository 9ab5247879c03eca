import { DEFAULT_MAX_CONCURRENCY } from '../providers/create-models.ts';
import type { ResolvedEndpoint, ResolvedModelConfig } from '../providers/model-config.ts';

const ROLES = ['verifier', 'reader', 'vision', 'judge', 'embedding'] as const;

/**
 * The model config each of `parts` read workers gets: every endpoint's maxConcurrency divided among them
 * (at least 1 each). A concurrency limiter lives in one thread, so N workers with the full limit would send
 * an endpoint N times the requests it was configured for.
 */
export function splitModelConcurrency(config: ResolvedModelConfig, parts: number): ResolvedModelConfig {
  if (parts <= 1) return config;
  const split = <T extends ResolvedEndpoint>(endpoint: T): T => ({
    ...endpoint,
    maxConcurrency: Math.max(1, Math.floor((endpoint.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY) / parts)),
  });
  const out: ResolvedModelConfig = { ...config };
  for (const role of ROLES) {
    const endpoint = config[role];
    if (endpoint) (out as Record<string, ResolvedEndpoint>)[role] = split(endpoint);
  }
  return out;
}
