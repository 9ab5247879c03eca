import { isGraphmemixError } from '../errors/index.ts';
import type { ChatMessage, ChatModel, ChatRequest, TokenUsage } from './model-spec.ts';

/** What a reply parser returns: a value, or an error text that is shown to the model in the correction. */
export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

export interface StructuredCallOptions {
  /** Attempts in total, model calls and transport failures alike (method notes: 3). */
  attempts?: number;
  /**
   * The text of the one user message appended after a bad reply. Gets the parser's error; callers add what
   * the model needs to fix it (e.g. the list of valid ids). Default: names the error, asks for JSON only.
   */
  correction?: (error: string) => string;
}

export type StructuredCallResult<T> =
  | { ok: true; value: T; attempts: number; usage: TokenUsage; latencyMs: number; cached: boolean }
  | { ok: false; error: string; attempts: number; usage: TokenUsage; latencyMs: number };

export const DEFAULT_STRUCTURED_ATTEMPTS = 3;

/**
 * One structured model call with up to `attempts` tries (method notes section 1: 3 for every structured
 * call). A reply the parser rejects is appended as an assistant message, followed by ONE user message that
 * names the error, and the model is asked again; each retry sees only the latest bad reply and correction
 * (the conversation does not grow without bound). Transport failures that outlived the retry wrapper
 * (MODEL_UNAVAILABLE, MODEL_OUTPUT, unknown errors) count as failed attempts and repeat the same messages.
 *
 * Never throws for a model fault. It stops early, returning ok:false, when the caller's signal aborts or an
 * endpoint error is marked non-retryable (e.g. HTTP 400: the same request would fail again). Errors with
 * other GraphmemixError codes (bad input such as a missing image file) are programmer/config errors and
 * are rethrown.
 */
export async function callStructured<T>(
  model: ChatModel,
  request: ChatRequest,
  parse: (text: string) => ParseResult<T>,
  options: StructuredCallOptions = {},
): Promise<StructuredCallResult<T>> {
  const attempts = Math.max(1, Math.floor(options.attempts ?? DEFAULT_STRUCTURED_ATTEMPTS));
  const correction = options.correction ?? defaultCorrection;
  const started = performance.now();
  const usage: TokenUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  const base = request.messages;
  let followUp: ChatMessage[] = [];
  let lastError = 'no attempt made';

  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (request.signal?.aborted) return failure('aborted', attempt - 1);
    let text: string;
    let cached: boolean;
    try {
      const response = await model.chat({ ...request, messages: [...base, ...followUp] });
      addUsage(usage, response.usage);
      text = response.text;
      cached = response.cached;
    } catch (error) {
      if (isGraphmemixError(error) && error.code !== 'MODEL_UNAVAILABLE' && error.code !== 'MODEL_OUTPUT') {
        throw error;
      }
      lastError = `transport: ${error instanceof Error ? error.message : String(error)}`;
      if (request.signal?.aborted) return failure(lastError, attempt);
      if (
        isGraphmemixError(error) &&
        error.details?.retryable === false &&
        error.code === 'MODEL_UNAVAILABLE'
      ) {
        return failure(lastError, attempt);
      }
      continue;
    }
    const parsed = safeParse(parse, text);
    if (parsed.ok) {
      return { ok: true, value: parsed.value, attempts: attempt, usage, latencyMs: elapsed(), cached };
    }
    lastError = parsed.error;
    followUp = [
      { role: 'assistant', content: text },
      { role: 'user', content: correction(parsed.error) },
    ];
  }
  return failure(lastError, attempts);

  function elapsed(): number {
    return performance.now() - started;
  }
  function failure(error: string, made: number): StructuredCallResult<T> {
    return { ok: false, error, attempts: made, usage, latencyMs: elapsed() };
  }
}

/**
 * Tolerant JSON object extraction from a model reply: accepts a bare object, an object inside ``` fences,
 * or an object after/before prose (the first balanced {...} that parses). Arrays and scalars are rejected:
 * every structured protocol here replies with an object.
 */
export function parseJsonObject(text: string): ParseResult<Record<string, unknown>> {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, error: 'the reply was empty; expected a JSON object' };
  const candidates: string[] = [trimmed];
  for (const match of trimmed.matchAll(/```(?:json|JSON)?\s*\n?([\s\S]*?)```/g)) {
    if (match[1] !== undefined) candidates.push(match[1].trim());
  }
  for (const candidate of candidates) {
    const value = tryParse(candidate);
    if (isPlainObject(value)) return { ok: true, value };
  }
  for (const slice of balancedObjects(trimmed)) {
    const value = tryParse(slice);
    if (isPlainObject(value)) return { ok: true, value };
  }
  const whole = tryParse(trimmed);
  if (whole !== undefined) return { ok: false, error: 'the reply was valid JSON but not an object' };
  return { ok: false, error: 'the reply did not contain a valid JSON object' };
}

function defaultCorrection(error: string): string {
  return `Your previous reply could not be used: ${error}. Reply again with only the corrected JSON object.`;
}

function safeParse<T>(parse: (text: string) => ParseResult<T>, text: string): ParseResult<T> {
  try {
    return parse(text);
  } catch (error) {
    // A throwing parser is still a bad reply, not a crash of the question.
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

function addUsage(total: TokenUsage, add: TokenUsage): void {
  total.promptTokens += add.promptTokens;
  total.completionTokens += add.completionTokens;
  total.totalTokens += add.totalTokens;
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Yields each top-level balanced {...} span, skipping braces inside JSON strings. */
function* balancedObjects(text: string): Generator<string> {
  let start = text.indexOf('{');
  while (start !== -1) {
    let depth = 0;
    let inString = false;
    let escaped = false;
    let end = -1;
    for (let i = start; i < text.length; i++) {
      const ch = text[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (ch === '\\') escaped = true;
        else if (ch === '"') inString = false;
        continue;
      }
      if (ch === '"') inString = true;
      else if (ch === '{') depth++;
      else if (ch === '}') {
        depth--;
        if (depth === 0) {
          end = i;
          break;
        }
      }
    }
    if (end === -1) return;
    yield text.slice(start, end + 1);
    start = text.indexOf('{', start + 1);
  }
}
