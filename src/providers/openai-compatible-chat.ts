import { GraphmemixError, isGraphmemixError } from '../errors/index.ts';
import type {
  ChatContentPart,
  ChatMessage,
  ChatModel,
  ChatRequest,
  ChatResponse,
  TokenUsage,
} from './model-spec.ts';
import { type OpenAIEndpointConfig, postOpenAIJson } from './post-openai-json.ts';
import { toImageUrl } from './to-image-url.ts';

export type OpenAICompatibleChatConfig = OpenAIEndpointConfig;

/**
 * ChatModel over POST {baseUrl}/chat/completions (vLLM, Ollama, llama.cpp server, OpenAI). Image parts are
 * sent as {type:'image_url', image_url:{url}}, local files inlined as data URLs. No retries here: those are
 * the with-retry wrapper's job; this client only classifies faults (see postOpenAIJson).
 */
export function createOpenAICompatibleChat(config: OpenAICompatibleChatConfig): ChatModel {
  if (!config.baseUrl)
    throw new GraphmemixError('CONFIG', 'chat model needs a baseUrl', { location: { field: 'baseUrl' } });
  if (!config.model)
    throw new GraphmemixError('CONFIG', 'chat model needs a model id', { location: { field: 'model' } });
  return {
    specificationVersion: 'v1',
    provider: 'openai-compatible',
    modelId: config.model,
    async chat(request: ChatRequest): Promise<ChatResponse> {
      const started = performance.now();
      const body: Record<string, unknown> = {
        model: config.model,
        messages: await Promise.all(request.messages.map(toWireMessage)),
      };
      if (request.temperature !== undefined) body.temperature = request.temperature;
      if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
      if (request.jsonMode) body.response_format = { type: 'json_object' };
      const reply = await postOpenAIJson(config, '/chat/completions', body, request.signal);
      const text = readContent(reply);
      if (text === undefined || text === '') {
        throw new GraphmemixError('MODEL_OUTPUT', `model ${config.model} replied without content`, {
          details: { model: config.model, finishReason: readFinishReason(reply) },
        });
      }
      return {
        text,
        usage: readUsage(reply),
        model: typeof field(reply, 'model') === 'string' ? (field(reply, 'model') as string) : config.model,
        cached: false,
        latencyMs: performance.now() - started,
      };
    },
  };
}

/** OpenAI usage object -> TokenUsage; missing fields count as 0 (some local servers omit usage). */
export function readUsage(reply: unknown): TokenUsage {
  const usage = field(reply, 'usage');
  const promptTokens = numberOr0(field(usage, 'prompt_tokens'));
  const completionTokens = numberOr0(field(usage, 'completion_tokens'));
  const total = field(usage, 'total_tokens');
  return {
    promptTokens,
    completionTokens,
    totalTokens: typeof total === 'number' ? total : promptTokens + completionTokens,
  };
}

async function toWireMessage(message: ChatMessage): Promise<Record<string, unknown>> {
  if (typeof message.content === 'string') return { role: message.role, content: message.content };
  const parts = await Promise.all(message.content.map(toWirePart));
  return { role: message.role, content: parts };
}

async function toWirePart(part: ChatContentPart): Promise<Record<string, unknown>> {
  if (part.type === 'text') return { type: 'text', text: part.text };
  try {
    return { type: 'image_url', image_url: { url: await toImageUrl(part.uri, part.mime) } };
  } catch (error) {
    // Media outside the allowed roots / remote allow-list (see to-image-url.ts) is withheld, not fatal: the
    // model gets a marker instead, so one hostile or remote reference cannot sink the whole call.
    if (isGraphmemixError(error) && error.code === 'FORBIDDEN') {
      return { type: 'text', text: '[image withheld: not an allowed media source]' };
    }
    throw error;
  }
}

function readContent(reply: unknown): string | undefined {
  const choices = field(reply, 'choices');
  const first = Array.isArray(choices) ? (choices[0] as unknown) : undefined;
  const content = field(field(first, 'message'), 'content');
  if (typeof content === 'string') return content;
  // Some servers return content as an array of text parts.
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) =>
        typeof field(part, 'text') === 'string' ? (field(part, 'text') as string) : '',
      )
      .join('');
  }
  return undefined;
}

function readFinishReason(reply: unknown): unknown {
  const choices = field(reply, 'choices');
  return Array.isArray(choices) ? field(choices[0], 'finish_reason') : undefined;
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

function numberOr0(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
