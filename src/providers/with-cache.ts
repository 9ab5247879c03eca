import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type {
  ChatModel,
  ChatRequest,
  ChatResponse,
  EmbeddingInput,
  EmbeddingModel,
  TokenUsage,
} from './model-spec.ts';

export interface CacheOptions {
  /** Directory of the cache files (created on first write). */
  dir: string;
  /**
   * Which chat calls are cached. 'structured' (default): calls with temperature 0 or jsonMode, whose
   * replies are meant to be reproducible; other calls go straight through. 'all': every call. Embedding
   * calls are always cached (embeddings are deterministic).
   */
  chat?: 'structured' | 'all';
}

const NO_USAGE: TokenUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

/**
 * An on-disk cache of model calls. The key is sha256 of the exact request JSON (provider, model id,
 * messages, jsonMode, temperature, maxTokens; the abort signal excluded), so any change to a prompt is a
 * miss. Image parts are keyed by their uri as given, not by file content: a changed file at the same path
 * is served stale (clear the cache directory). Files: `{dir}/{hash[0..2]}/{hash}.json`, written atomically
 * (temp file + rename) so concurrent writers never leave half a file. A hit has `cached: true`, zero usage
 * (no tokens spent) and never reaches the wrapped model. Unreadable or corrupt entries count as misses.
 */
export function withCache(model: ChatModel, options: CacheOptions): ChatModel;
export function withCache(model: EmbeddingModel, options: CacheOptions): EmbeddingModel;
export function withCache(
  model: ChatModel | EmbeddingModel,
  options: CacheOptions,
): ChatModel | EmbeddingModel {
  const base = { specificationVersion: 'v1', provider: model.provider, modelId: model.modelId } as const;
  const store = fileStore(options.dir);
  if ('chat' in model) {
    return {
      ...base,
      async chat(request: ChatRequest): Promise<ChatResponse> {
        if (options.chat !== 'all' && request.temperature !== 0 && request.jsonMode !== true) {
          return model.chat(request);
        }
        const started = performance.now();
        const key = cacheKey({
          kind: 'chat',
          provider: model.provider,
          model: model.modelId,
          messages: request.messages,
          jsonMode: request.jsonMode ?? false,
          temperature: request.temperature ?? null,
          maxTokens: request.maxTokens ?? null,
        });
        const hit = await store.read(key);
        if (isChatEntry(hit)) {
          return {
            text: hit.text,
            model: hit.model,
            usage: NO_USAGE,
            cached: true,
            latencyMs: performance.now() - started,
          };
        }
        const response = await model.chat(request);
        await store.write(key, { text: response.text, model: response.model });
        return response;
      },
    };
  }
  return {
    ...base,
    supportsImages: model.supportsImages,
    async embed(inputs: EmbeddingInput[], embedOptions?: { signal?: AbortSignal }) {
      const key = cacheKey({ kind: 'embedding', provider: model.provider, model: model.modelId, inputs });
      const hit = await store.read(key);
      if (isEmbeddingEntry(hit) && hit.vectors.length === inputs.length) {
        return { vectors: hit.vectors.map((v) => Float32Array.from(v)), usage: NO_USAGE, cached: true };
      }
      const response = await model.embed(inputs, embedOptions);
      await store.write(key, { vectors: response.vectors.map((v) => Array.from(v)) });
      return response;
    },
  };
}

/** sha256 hex of the request JSON; exported so callers and tests can find an entry. */
export function cacheKey(request: unknown): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}

function fileStore(dir: string) {
  const pathOf = (key: string): string => join(dir, key.slice(0, 2), `${key}.json`);
  return {
    async read(key: string): Promise<unknown> {
      try {
        return JSON.parse(await readFile(pathOf(key), 'utf8')) as unknown;
      } catch {
        return undefined; // missing or corrupt: a miss
      }
    },
    /** A failed write (read-only or full disk) loses the entry, never the model reply. */
    async write(key: string, value: unknown): Promise<void> {
      const path = pathOf(key);
      try {
        await mkdir(join(dir, key.slice(0, 2)), { recursive: true });
        const temp = `${path}.${randomUUID()}.tmp`;
        await writeFile(temp, JSON.stringify(value));
        await rename(temp, path);
      } catch {
        // best effort: the cache is an optimisation
      }
    },
  };
}

function isChatEntry(value: unknown): value is { text: string; model: string } {
  const entry = value as { text?: unknown; model?: unknown } | undefined;
  return typeof entry?.text === 'string' && typeof entry.model === 'string';
}

function isEmbeddingEntry(value: unknown): value is { vectors: number[][] } {
  const entry = value as { vectors?: unknown } | undefined;
  return Array.isArray(entry?.vectors) && entry.vectors.every((v) => Array.isArray(v));
}
