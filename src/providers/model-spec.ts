/**
 * The model port: chat (with JSON mode and image parts) and embeddings. Implementations: the
 * OpenAI-compatible HTTP client (vLLM, Ollama, llama.cpp server, OpenAI). Retries, caching, rate limits and
 * usage accounting are wrappers around this port, not flags inside callers.
 */
export type ChatContentPart =
  | { type: 'text'; text: string }
  /** `uri`: local file path, http(s) URL or data: URL. The client inlines local files as data URLs. */
  | { type: 'image'; uri: string; mime?: string };

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string | ChatContentPart[];
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** Ask for a JSON object reply (response_format json_object). */
  jsonMode?: boolean;
  temperature?: number;
  maxTokens?: number;
  signal?: AbortSignal;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ChatResponse {
  text: string;
  usage: TokenUsage;
  model: string;
  /** True when served from the on-disk cache (no tokens spent). */
  cached: boolean;
  latencyMs: number;
}

export interface ChatModel {
  readonly specificationVersion: 'v1';
  /** 'openai-compatible', ... */
  readonly provider: string;
  readonly modelId: string;
  chat(request: ChatRequest): Promise<ChatResponse>;
}

export type EmbeddingInput = { type: 'text'; text: string } | { type: 'image'; uri: string };

export interface EmbeddingResponse {
  vectors: Float32Array[];
  usage: TokenUsage;
  cached: boolean;
}

export interface EmbeddingModel {
  readonly specificationVersion: 'v1';
  readonly provider: string;
  readonly modelId: string;
  /** Whether image inputs are accepted (vision embedding model). */
  readonly supportsImages: boolean;
  embed(inputs: EmbeddingInput[], options?: { signal?: AbortSignal }): Promise<EmbeddingResponse>;
}

/** The models a graphmemix instance may use. Each is optional: with none, everything runs offline. */
export interface ModelSet {
  /** Node verifier and ECV. */
  verifier?: ChatModel;
  /** Reader that answers from the evidence packet. */
  reader?: ChatModel;
  /** Vision model for captions of question images and photos. */
  vision?: ChatModel;
  /** Evaluation judge. */
  judge?: ChatModel;
  /** Text (and optionally image) embeddings. */
  embedding?: EmbeddingModel;
}
