import type { ChatMessage } from '../providers/model-spec.ts';
import { type ParseResult, parseJsonObject } from '../providers/structured-call.ts';
import { candidateSnippet, locationText, recordModalities } from './candidate-snippet.ts';
import type { VerifierCandidate, VerifierQuestion } from './verifier-input.ts';

/** Verifier output cap (method notes 1). */
export const VERIFIER_MAX_TOKENS = 8192;

const NODE_INSTRUCTIONS = `You judge memories retrieved for a question about a person's long-term history.
For each candidate, decide how strongly the memory ON ITS OWN helps answer the question:
5 = states the answer or the decisive fact, 3 = clearly relevant partial evidence, 1 = weakly related, 0 = not useful.
Question image captions are noisy automatic descriptions, not ground truth. Judge only from the snippets.
Reply with one JSON object and nothing else: {"selected": [{"id": "C00", "score": 4}, ...]}.
List only useful candidates (score > 0), each id at most once; ids must be from the candidate list; scores are numbers from 0 to 5.`;

/** The question part shared by both verifier prompts. */
export function questionPayload(question: VerifierQuestion): Record<string, unknown> {
  return {
    question: question.prompt,
    ...(question.choices && question.choices.length > 0
      ? { choices: question.choices.map((c) => `${c.id}. ${c.text}`) }
      : {}),
    question_image_captions: question.imageCaptions,
    ...(question.type === undefined ? {} : { question_type: question.type }),
  };
}

/** The canonical candidate fields (paper A.4): alias, modalities, date, location, score, snippet. */
export function candidatePayload(
  candidate: VerifierCandidate,
  questionText: string,
): Record<string, unknown> {
  const { record } = candidate;
  return {
    id: candidate.alias,
    modalities: recordModalities(record),
    date: record.timestamp ?? null,
    location: locationText(record) ?? null,
    retrieval_score: Math.round(candidate.retrievalScore * 10_000) / 10_000,
    snippet: candidateSnippet(record, questionText),
  };
}

/** Text the snippets are made query-aware against: the prompt, the choices and the image captions. */
export function questionText(question: VerifierQuestion): string {
  return [question.prompt, ...(question.choices ?? []).map((c) => c.text), ...question.imageCaptions].join(
    '\n',
  );
}

export function nodeVerifierMessages(
  question: VerifierQuestion,
  candidates: readonly VerifierCandidate[],
): ChatMessage[] {
  const text = questionText(question);
  const payload = {
    ...questionPayload(question),
    candidates: candidates.map((candidate) => candidatePayload(candidate, text)),
  };
  return [
    { role: 'system', content: NODE_INSTRUCTIONS },
    { role: 'user', content: JSON.stringify(payload) },
  ];
}

/**
 * Parses {"selected": [{"id", "score"}]} into scores by alias. Rejects unknown ids, duplicate ids, and
 * scores that are not numbers in [0, 5]; candidates left out score 0 (added by the caller).
 */
export function parseNodeVerdict(
  text: string,
  validAliases: ReadonlySet<string>,
): ParseResult<Map<string, number>> {
  const parsed = parseJsonObject(text);
  if (!parsed.ok) return parsed;
  const selected = parsed.value.selected;
  if (!Array.isArray(selected)) return { ok: false, error: 'missing array field "selected"' };
  const scores = new Map<string, number>();
  for (const [index, row] of selected.entries()) {
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      return { ok: false, error: `selected[${index}] is not an object` };
    }
    const { id, score } = row as Record<string, unknown>;
    if (typeof id !== 'string' || !validAliases.has(id)) {
      return { ok: false, error: `selected[${index}] has unknown id ${JSON.stringify(id)}` };
    }
    if (scores.has(id)) return { ok: false, error: `id ${id} appears more than once` };
    const value = typeof score === 'string' && score.trim() !== '' ? Number(score) : score;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 5) {
      return {
        ok: false,
        error: `score of ${id} must be a number from 0 to 5, got ${JSON.stringify(score)}`,
      };
    }
    scores.set(id, value);
  }
  return { ok: true, value: scores };
}

/** The correction message after a bad reply: the error and every valid id (method notes 4). */
export function correctionWithIds(error: string, aliases: readonly string[]): string {
  return `Your previous reply could not be used: ${error}. Valid candidate ids are: ${aliases.join(', ')}. Reply again with only the corrected JSON object.`;
}
