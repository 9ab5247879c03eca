import type { ChatMessage, ChatModel } from '../providers/model-spec.ts';
import { callStructured, type ParseResult, type StructuredCallResult } from '../providers/structured-call.ts';
import { correctionWithIds, VERIFIER_MAX_TOKENS } from './node-verifier-protocol.ts';
import type { VerifierCall } from './verifier-input.ts';

/**
 * The one structured call both model-backed verifiers make (method notes 4, 5): JSON mode, temperature 0, the
 * verifier output cap, 3 attempts whose correction lists the valid candidate aliases. Returns the parse result
 * and the call record for the trace; never throws for a model fault.
 */
export async function callVerifierModel<T>(
  model: ChatModel,
  messages: ChatMessage[],
  parse: (text: string) => ParseResult<T>,
  options: { aliases: readonly string[]; attempts?: number; signal?: AbortSignal },
): Promise<{ result: StructuredCallResult<T>; call: VerifierCall }> {
  const result = await callStructured(
    model,
    {
      messages,
      jsonMode: true,
      temperature: 0,
      maxTokens: VERIFIER_MAX_TOKENS,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    },
    parse,
    { attempts: options.attempts ?? 3, correction: (error) => correctionWithIds(error, options.aliases) },
  );
  const call: VerifierCall = {
    model: model.modelId,
    attempts: result.attempts,
    ok: result.ok,
    cached: result.ok ? result.cached : false,
    latencyMs: result.latencyMs,
    usage: result.usage,
    ...(result.ok ? {} : { error: result.error }),
  };
  return { result, call };
}
