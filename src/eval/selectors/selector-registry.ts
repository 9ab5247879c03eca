import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { ecvPointwise } from './ecv-pointwise.ts';
import { forestProposal, graphmemixForest, greedyForest } from './forest-selectors.ts';
import type { Selector } from './frozen-pool.ts';
import { dpp, facilityLocation, mmr, nodeTopK } from './similarity-selectors.ts';

/**
 * Selector names are fixed (issue 5, paper A.6). `lexical-topk` is not a pool selector: it ranks the whole
 * context by flat lexical retrieval with no graph, and the evaluation runner computes it from the store.
 */
export const SELECTOR_NAMES = [
  'lexical-topk',
  'node-topk',
  'mmr',
  'dpp',
  'facility-location',
  'ecv-pointwise',
  'greedy-forest',
  'forest-proposal',
  'graphmemix',
] as const;
export type SelectorName = (typeof SELECTOR_NAMES)[number];
export type PoolSelectorName = Exclude<SelectorName, 'lexical-topk'>;

const POOL_SELECTORS: Record<PoolSelectorName, Selector> = {
  'node-topk': nodeTopK,
  mmr: mmr(),
  dpp: dpp(),
  'facility-location': facilityLocation(),
  'ecv-pointwise': ecvPointwise(),
  'greedy-forest': greedyForest(),
  'forest-proposal': forestProposal(),
  graphmemix: graphmemixForest(),
};

export function poolSelector(name: PoolSelectorName): Selector {
  return POOL_SELECTORS[name];
}

export function parseSelectorList(text: string | undefined): SelectorName[] {
  if (text === undefined || text.trim() === '' || text === 'all') return [...SELECTOR_NAMES];
  const names = text.split(',').map((name) => name.trim());
  for (const name of names) {
    if (!(SELECTOR_NAMES as readonly string[]).includes(name)) {
      throw new GraphmemixError(
        'UNSUPPORTED',
        `unknown selector "${name}"; known: ${SELECTOR_NAMES.join(', ')}`,
        {
          location: { field: 'selectors' },
        },
      );
    }
  }
  return names as SelectorName[];
}
