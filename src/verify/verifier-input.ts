import type { TokenUsage } from '../providers/model-spec.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { QuestionChoice } from '../types/question.ts';

/** The question as both verifiers see it: text, options, and the (noisy) captions of its images. */
export interface VerifierQuestion {
  prompt: string;
  instruction?: string;
  choices?: QuestionChoice[];
  /** Captions of the question's own images (dataset-given or from the vision model); marked noisy in prompts. */
  imageCaptions: string[];
  type?: string;
}

/** One frozen pool member handed to a verifier. `alias` (C00..C47) is all a model ever sees of its id. */
export interface VerifierCandidate {
  memoryId: string;
  alias: string;
  record: MemoryRecord;
  /** s_i on the common retrieval scale. */
  retrievalScore: number;
  isAnchor: boolean;
}

/** What one model call cost, reported back so the pipeline can trace it (no call: offline verifier). */
export interface VerifierCall {
  model: string;
  attempts: number;
  ok: boolean;
  cached: boolean;
  latencyMs: number;
  usage: TokenUsage;
  error?: string;
}

/** Candidate aliases in pool order: C00, C01, ... (two digits up to 100 candidates, then three). */
export function candidateAlias(position: number): string {
  return `C${String(position).padStart(2, '0')}`;
}
