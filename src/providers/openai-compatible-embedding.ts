import { GraphmemixError } from '../errors/index.ts';
import type { EmbeddingInput, EmbeddingModel, EmbeddingResponse, TokenUsage } from './model-spec.ts';
import { readUsage } from './openai-compatible-chat.ts';
import { type OpenAIEndpointConfig, postOpenAIJson } from './post-openai-json.ts';
import { toImageUrl } from './to-image-url.ts';

export interface OpenAICompatibleEmbeddingConfig extends OpenAIEndpointConfig {
  /** The server embeds images too (a vision embedding model). Without it, image inputs are UNSUPPORTED. */
  supportsImages?: boolean;
  /** Inputs per HTTP request (default 64). */
  batchSize?: number;
}

export const DEFAULT_EMBEDDING_BATCH_SIZE = 64;

/**
 * EmbeddingModel over POST {baseUrl}/embeddings. Always sends `encoding_format: 'float'` (some servers
 * default to base64, which would otherwise be misread). Replies are ordered by `index`, not by position.
 *
 * Wire shape of inputs: a batch of texts only is `input: ["a", "b"]` (plain OpenAI). A batch holding an
 * image is sent in the Jina / vLLM-multimodal object form, `input: [{"text": "a"}, {"image": "<url>"}]`,
 * with local image files inlined as data URLs. Servers that accept images in another shape need another
 * adapter.
 */
export function createOpenAICompatibleEmbedding(config: OpenAICompatibleEmbeddingConfig): EmbeddingModel {
  if (!config.baseUrl) {
    throw new GraphmemixError('CONFIG', 'embedding model needs a baseUrl', {
      location: { field: 'baseUrl' },
    });
  }
  if (!config.model) {
    throw new GraphmemixError('CONFIG', 'embedding model needs a model id', { location: { field: 'model' } });
  }
  const supportsImages = config.supportsImages ?? false;
  const batchSize = Math.max(1, Math.floor(config.batchSize ?? DEFAULT_EMBEDDING_BATCH_SIZE));
  return {
    specificationVersion: 'v1',
    provider: 'openai-compatible',
    modelId: config.model,
    supportsImages,
    async embed(
      inputs: EmbeddingInput[],
      options: { signal?: AbortSignal } = {},
    ): Promise<EmbeddingResponse> {
      if (!supportsImages && inputs.some((input) => input.type === 'image')) {
        throw new GraphmemixError('UNSUPPORTED', `embedding model ${config.model} does not accept images`, {
          details: { model: config.model },
        });
      }
      const vectors: Float32Array[] = [];
      const usage: TokenUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
      for (let start = 0; start < inputs.length; start += batchSize) {
        const batch = inputs.slice(start, start + batchSize);
        const reply = await postOpenAIJson(
          config,
          '/embeddings',
          { model: config.model, input: await toWireInput(batch), encoding_format: 'float' },
          options.signal,
        );
        vectors.push(...readVectors(reply, batch.length, config.model));
        const batchUsage = readUsage(reply);
        usage.promptTokens += batchUsage.promptTokens;
        usage.completionTokens += batchUsage.completionTokens;
        usage.totalTokens += batchUsage.totalTokens;
      }
      return { vectors, usage, cached: false };
    },
  };
}

async function toWireInput(batch: EmbeddingInput[]): Promise<unknown[]> {
  if (batch.every((input) => input.type === 'text')) return batch.map((input) => input.text);
  return Promise.all(
    batch.map(async (input) =>
      input.type === 'text' ? { text: input.text } : { image: await toImageUrl(input.uri) },
    ),
  );
}

function readVectors(reply: unknown, expected: number, model: string): Float32Array[] {
  const data = (reply as { data?: unknown } | null)?.data;
  if (!Array.isArray(data) || data.length !== expected) {
    throw new GraphmemixError(
      'MODEL_OUTPUT',
      `embedding reply from ${model} has ${Array.isArray(data) ? data.length : 'no'} vectors, expected ${expected}`,
      { details: { model } },
    );
  }
  const out: Float32Array[] = new Array(expected);
  data.forEach((item: unknown, position) => {
    const entry = item as { index?: unknown; embedding?: unknown };
    const index = typeof entry.index === 'number' ? entry.index : position;
    if (!Number.isInteger(index) || index < 0 || index >= expected || out[index] !== undefined) {
      throw new GraphmemixError('MODEL_OUTPUT', `embedding reply from ${model} has a bad index ${index}`, {
        details: { model },
      });
    }
    out[index] = toFloat32(entry.embedding, model);
  });
  return out;
}

function toFloat32(embedding: unknown, model: string): Float32Array {
  if (Array.isArray(embedding) && embedding.every((x) => typeof x === 'number')) {
    return Float32Array.from(embedding as number[]);
  }
  // A server that ignored encoding_format and sent base64 little-endian float32.
  if (typeof embedding === 'string') {
    const bytes = Buffer.from(embedding, 'base64');
    const copy = new Uint8Array(bytes); // aligned copy for the Float32Array view
    return new Float32Array(copy.buffer, 0, Math.floor(copy.byteLength / 4));
  }
  throw new GraphmemixError(
    'MODEL_OUTPUT',
    `embedding reply from ${model} has a vector that is not numbers`,
    {
      details: { model },
    },
  );
}
