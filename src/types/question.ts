/** An evaluation question stored with an archive (benchmarks), or asked at run time. */
export interface QuestionChoice {
  id: string;
  text: string;
}

export interface QuestionImage {
  /** Path or URL of the question's own image. */
  uri?: string;
  /** Caption given by the dataset, or produced by the vision model and cached. */
  caption?: string;
}

export interface QuestionAnswer {
  text?: string;
  /** Accepted alternative answers (first is best). */
  alternatives?: string[];
  choiceIds?: string[];
  unanswerable?: boolean;
}

export interface EvalQuestion {
  id: string;
  contextId: string;
  prompt: string;
  /** Question type / category of the benchmark (FR, TR, ss, ...). */
  type?: string;
  /** Dataset instruction shown to the reader ("Answer with the option letter."). */
  instruction?: string;
  choices?: QuestionChoice[];
  images?: QuestionImage[];
  answer: QuestionAnswer;
  /** Gold evidence memory ids (as imported, before resolution against the store). */
  evidence: string[];
  /** Evidence references that the importer could not resolve to a memory id (reported, never dropped). */
  unresolvedEvidence?: string[];
  metadata?: Record<string, unknown>;
}
