import { GraphmemixError } from '../errors/index.ts';
import type { ModelSet } from '../providers/model-spec.ts';
import { createAnchorNoveltyEdgeVerifier } from '../verify/anchor-novelty-edge-verifier.ts';
import { createContextLexicalNodeVerifier } from '../verify/context-lexical-node-verifier.ts';
import type { EdgeVerifier } from '../verify/edge-verifier-spec.ts';
import { createModelEdgeVerifier } from '../verify/model-edge-verifier.ts';
import { createModelNodeVerifier } from '../verify/model-node-verifier.ts';
import type { NodeVerifier } from '../verify/node-verifier-spec.ts';
import type { RetrieveOptions } from './retrieval-result.ts';

export interface VerifierPair {
  node?: NodeVerifier;
  edge?: EdgeVerifier;
}

/**
 * 'auto': model-backed verifiers when a verifier model is configured, else the offline pair;
 * 'model' without a verifier model is UNSUPPORTED; 'none' runs neither (retrieval-only prizes, no edges).
 */
export function selectVerifiers(mode: RetrieveOptions['verifiers'], models: ModelSet): VerifierPair {
  const choice = mode ?? 'auto';
  if (choice === 'none') return {};
  if (choice === 'offline' || (choice === 'auto' && models.verifier === undefined)) {
    return { node: createContextLexicalNodeVerifier(), edge: createAnchorNoveltyEdgeVerifier() };
  }
  if (models.verifier === undefined) {
    // The caller asked for what this configuration lacks: UNSUPPORTED (HTTP 400 naming `verifiers`), not a
    // server fault (it was CONFIG, a 500, to an HTTP client that could simply ask for 'auto' or 'offline').
    throw new GraphmemixError(
      'UNSUPPORTED',
      'verifiers "model" need a verifier model in the model config; ask for "auto" or "offline"',
      { location: { field: 'verifiers' } },
    );
  }
  return { node: createModelNodeVerifier(models.verifier), edge: createModelEdgeVerifier(models.verifier) };
}
