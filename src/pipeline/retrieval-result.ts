import type { CandidateEdge, EdgeRole, ForestSolution, SolverParams } from '../core/candidate-graph.ts';
import type { TokenUsage } from '../providers/model-spec.ts';
import type { MemoryFilter } from '../store/archive-store-spec.ts';
import type { GeoLocation, MemoryKind } from '../types/memory-record.ts';
import type { QuestionChoice, QuestionImage } from '../types/question.ts';
import type { RelationType } from '../types/relation.ts';
import type { ViewKind } from '../types/view.ts';
import type { VerifierCall } from '../verify/verifier-input.ts';
import type { ExpansionSwitches } from './question-expansions.ts';

/** A question as the pipeline receives it (the CLI/HTTP/MCP shells validate into this). */
export interface QuestionInput {
  prompt: string;
  /** Dataset or caller instruction for the reader ("Answer in one word."). */
  instruction?: string;
  choices?: QuestionChoice[];
  images?: QuestionImage[];
  /** Question type when known (benchmarks); passed to the verifiers as a hint only. */
  type?: string;
  /**
   * The question's own time (ISO), when known: "last Tuesday" and "three days ago" are resolved against it.
   * Without it they are resolved against the context's latest memory (src/pipeline/question-dates.ts).
   */
  asOf?: string;
}

export interface RetrieveOptions {
  /** Reader budget K. Default 10. */
  k?: number;
  /** Seeds L (24), candidate pool M (48), anchors (10), mutual-kNN expansion on/off. */
  seeds?: number;
  poolSize?: number;
  anchors?: number;
  solver?: Partial<Omit<SolverParams, 'k'>>;
  /** Which verifiers: 'auto' = model-backed when a verifier model is configured, else offline. */
  verifiers?: 'auto' | 'model' | 'offline' | 'none';
  /** The client's signal (HTTP disconnect, MCP cancel): every model call stops when it aborts. */
  signal?: AbortSignal;
  /** Who asks (a server passes the API key's name): in read workers, waiting questions of lanes take turns. */
  lane?: string;
  /**
   * Budget of the whole question over all model calls, in ms (default DEFAULT_QUESTION_DEADLINE_MS, 120 s).
   * When it passes, pending calls are aborted, the pipeline continues without them and the trace is flagged
   * `deadline_exceeded`.
   */
  deadlineMs?: number;
  /**
   * Scopes the question to memories passing this filter (agent, run, metadata, event time). Applied before
   * retrieval: seeds, expansion and the packet hold matching memories only (src/retrieval/filtered-candidates.ts).
   */
  filter?: MemoryFilter;
  /** Query expansions (temporal terms, synonyms, feedback); defaults: DEFAULT_EXPANSIONS. */
  expansion?: ExpansionSwitches;
}

/** How a candidate entered the pool. */
export type CandidateOrigin =
  | { kind: 'seed'; rank: number; bestView: ViewKind; viewKey: string }
  | { kind: 'expanded'; parentId: string; relationTypes: RelationType[]; strength: number };

/** One of the M candidates, with every score the pipeline computed for it (the frozen pool). */
export interface PoolCandidate {
  memoryId: string;
  /** 0-based pool position (retrieval order, then expansion order). */
  position: number;
  origin: CandidateOrigin;
  /** s_i on the documented common scale (retrieval score; floor for unscored expanded candidates). */
  retrievalScore: number;
  /** Raw node verifier score 0..5 (0 when the verifier omitted it or did not run). */
  verifierScore: number;
  /** p_i = sigmoid(a*s + b*v + c). */
  prize: number;
  isAnchor: boolean;
}

/**
 * One anchor-candidate edge as the edge verifier (ECV) judged it, kept or rejected (for inspection; the
 * result field is still `verifiedEdges`). Only kept ones reach the solver.
 */
export interface JudgedEdge extends CandidateEdge {
  /** Whether it survived normalisation and role gating (positive role and s_inc > 0). */
  kept: boolean;
}

export interface EvidenceItem {
  /** 1-based reading rank. */
  rank: number;
  memoryId: string;
  sourceId?: string;
  kind: MemoryKind;
  /** ISO timestamp (or date) of the memory. */
  date?: string;
  location?: GeoLocation;
  speaker?: string;
  /** Canonical text for the reader: text, then captions, then OCR capped at 320 chars. */
  text: string;
  /** Media for the reader (image uris; sampled frames for video). */
  media: { kind: 'image' | 'video' | 'frame'; uri: string; caption?: string }[];
  /** Index of its tree in `forest.trees`. */
  tree: number;
  /** Parent memory id in the tree and the relation joining them (absent for roots). */
  parent?: { memoryId: string; relationTypes: RelationType[]; role: EdgeRole; weight: number };
  prize: number;
  retrievalScore: number;
  verifierScore: number;
  /**
   * When the memory entered the archive (the second clock, next to the event `date`). Set for memories with
   * a supersedes link, so the reader sees both dates of every version (version-marks.ts).
   */
  recordedAt?: string;
  /** Set when the memory supersedes or is superseded by another (relation `supersedes`). */
  version?: EvidenceVersion;
}

/**
 * Where a memory stands among the versions of one fact: `current` when nothing supersedes it. Ids name
 * memories of the question's scope, in the packet or not.
 */
export interface EvidenceVersion {
  status: 'current' | 'superseded';
  /** Older versions this one replaces. */
  supersedes: string[];
  /** Newer versions that replace this one. */
  supersededBy: string[];
}

export type StageName = 'retrieve' | 'expand' | 'verify' | 'solve' | 'packet' | 'read';

/** One model call in a question's trace: what it cost, whether it worked, and which stage made it. */
export interface ModelCallRecord extends VerifierCall {
  stage: 'node_verifier' | 'edge_verifier' | 'caption' | 'reader' | 'embedding' | 'judge';
}

/**
 * Flags make degradation visible: a caller can see that a verifier failed and prizes fell back to retrieval
 * only, that no schema edge was eligible, that the pool was smaller than K, ...
 */
export type PipelineFlag =
  | 'node_verifier_failed'
  | 'edge_verifier_failed'
  | 'node_verifier_offline'
  | 'edge_verifier_offline'
  | 'no_verifier'
  | 'no_eligible_edges'
  | 'empty_context'
  | 'no_lexical_match'
  /**
   * A lexical search stopped at the store's work bound (postings rows read or candidates scored per view
   * kind; SQLite LEXICAL_ROWS_BOUND / LEXICAL_SCORED_BOUND): a question made only of words most memories
   * hold. Its hits are the best found within the bound, not necessarily the exact BM25 top.
   */
  | 'lexical_search_bounded'
  | 'dense_retrieval_failed'
  | 'question_caption_failed'
  | 'reader_failed'
  | 'pool_smaller_than_k'
  /**
   * No calibration is fitted for this retriever + verifier configuration (none stored in the archive, none
   * shipped): prizes use the paper's (a, b, c), fitted for the authors' cosine encoder, i.e. for another
   * score scale. `graphmemix calibrate` fits one (see its --help).
   */
  | 'calibration_unfitted'
  /** The question deadline passed: model calls were cut short and their stages degraded. */
  | 'deadline_exceeded'
  /**
   * Some of the context's recent writes have no semantic_knn edges yet: they wait in its semantic backlog (an
   * archive opened with `semanticUpdates: 'after-write'` between a write and its drain, or a compaction in
   * steps under way). Lexical views and schema edges already hold them; mutual-kNN expansion does not.
   */
  | 'semantic_pending'
  /**
   * Some of the context's memories wait for their schema relations (same_round, consecutive_turn, ...): an
   * import's relation update is under way, or a process stopped between a write's records and its relation
   * update (a killed import), which the user's next write applies. Views hold those memories; expansion along
   * schema edges does not reach them yet.
   */
  | 'relations_pending';

export type CalibrationSource = 'store' | 'default' | 'paper';

export interface PipelineTrace {
  /** Milliseconds per stage. */
  timings: Partial<Record<StageName, number>>;
  totalMs: number;
  modelCalls: ModelCallRecord[];
  usage: TokenUsage;
  flags: PipelineFlag[];
  /** Names of the implementations used, e.g. { retriever: 'bm25+tfidf', nodeVerifier: 'lexical-support' }. */
  components: Record<string, string>;
  /**
   * Prize calibration used: (a, b, c), the key it was stored under, where it came from (`store`: fitted on
   * this archive by `graphmemix calibrate`; `default`: shipped, fitted on dev folds for this configuration;
   * `paper`: the paper's values, not fitted for this score scale) and whether it was fitted at all.
   */
  calibration: { a: number; b: number; c: number; key: string; source?: CalibrationSource; fitted?: boolean };
}

export interface RetrievalResult {
  contextId: string;
  question: QuestionInput;
  /** Ordered evidence packet (at most K items, never empty when the context has memories). */
  evidence: EvidenceItem[];
  /** Text rendering of the packet for prompts. */
  packetText: string;
  /** The frozen candidate pool (M candidates) with all scores, in pool order. */
  pool: PoolCandidate[];
  /** Every ECV judgement (kept and dropped). */
  verifiedEdges: JudgedEdge[];
  /** The solver's output, including its trace (initial set, swaps, dropped nodes, trees). */
  forest: ForestSolution;
  trace: PipelineTrace;
}

export interface AnswerResult extends RetrievalResult {
  answer: string;
  /** False when no reader model is configured or the reader failed (flagged); `answer` is then ''. */
  answered: boolean;
}
