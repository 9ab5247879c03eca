import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { EmbeddingModel } from '../providers/model-spec.ts';
import type { ArchiveStore, VectorRow } from '../store/archive-store-spec.ts';
import { vectorRowKey } from '../store/store-rules.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { MemoryView } from '../types/view.ts';

export interface EmbedViewsOptions {
  /** Inputs per embedding request. Default 64. */
  batchSize?: number;
  signal?: AbortSignal;
}

export type EmbedViewsResult =
  | {
      ok: true;
      /** Vector space name in the store: `embedding:${modelId}`. */
      space: string;
      /** One unit vector per record that has an embeddable view: the normalised mean of its view vectors. */
      recordVectors: Map<string, Float32Array>;
      embedded: number;
      reused: number;
    }
  | { ok: false; space: string; warning: string; embedded: number; reused: number };

/** View kinds whose text is embedded (paper 3.3: text and caption routes; OCR stays lexical). */
export const EMBEDDED_VIEW_KINDS = ['text', 'caption'] as const;
/** Pixel views, embedded only by a vision embedding model (`supportsImages`): the image itself is a route in. */
export const EMBEDDED_PIXEL_KINDS = ['image', 'frame'] as const;

/**
 * Digest-time embeddings: embeds the text and caption views of `records` with `model`, stores them with
 * `store.putVectors` in space `embedding:${model.modelId}` and reuses vectors already stored for a view (the
 * store drops a record's vectors when its content changes, so a stored vector is current). Each successful
 * batch is stored at once, so a failure midway keeps the finished work for the next run.
 *
 * A model failure is an expected failure: the result is `{ok: false, warning}` and the caller degrades to
 * the offline TF-IDF space.
 */
export async function embedViews(
  store: ArchiveStore,
  contextId: string,
  records: readonly MemoryRecord[],
  model: EmbeddingModel,
  options: EmbedViewsOptions = {},
): Promise<EmbedViewsResult> {
  const space = `embedding:${model.modelId}`;
  const views = await viewsOf(store, contextId, records, model.supportsImages);
  // Only these records' stored vectors: an add reads what it embeds, not the context's space.
  const stored = new Map<string, Float32Array>();
  for (let start = 0; start < records.length; start += 1000) {
    const ids = records.slice(start, start + 1000).map((record) => record.id);
    for (const row of await store.getVectors(contextId, space, ids))
      stored.set(vectorRowKey(row), row.vector);
  }

  const missing = views.filter((view) => !stored.has(vectorRowKey(view)));
  const reused = views.length - missing.length;
  const batchSize = Math.max(1, options.batchSize ?? 64);
  let embedded = 0;
  /** The space's vector length: its stored vectors', else the first reply's. */
  let dimension: number | undefined = stored.values().next().value?.length;
  for (let start = 0; start < missing.length; start += batchSize) {
    const batch = missing.slice(start, start + batchSize);
    let vectors: Float32Array[];
    try {
      const response = await model.embed(
        batch.map((view) =>
          view.uri !== undefined && isPixelView(view.kind)
            ? { type: 'image' as const, uri: view.uri }
            : { type: 'text' as const, text: view.text },
        ),
        options.signal === undefined ? {} : { signal: options.signal },
      );
      vectors = (response as { vectors?: Float32Array[] } | undefined)?.vectors as Float32Array[];
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return {
        ok: false,
        space,
        warning: `embedding model ${model.modelId} failed (${reason}); semantic_knn uses the offline tfidf space`,
        embedded,
        reused,
      };
    }
    const problem = vectorProblem(vectors, batch.length, dimension);
    if (problem !== undefined) {
      return {
        ok: false,
        space,
        warning: `embedding model ${model.modelId} returned ${problem}; semantic_knn uses the offline tfidf space`,
        embedded,
        reused,
      };
    }
    dimension ??= vectors[0]?.length;
    // A custom model may hand plain number arrays: stored as the Float32Array the store takes.
    vectors = vectors.map((vector) => (vector instanceof Float32Array ? vector : Float32Array.from(vector)));
    const rows: VectorRow[] = batch.map((view, i) => ({
      memoryId: view.memoryId,
      kind: view.kind,
      key: view.key,
      vector: vectors[i]!,
    }));
    try {
      await store.putVectors(contextId, space, rows);
    } catch (error) {
      // The space holds vectors of another length (the model behind the same id changed): a model fault too.
      if (!(error instanceof GraphmemixError) || error.code !== 'INVALID_INPUT') throw error;
      return {
        ok: false,
        space,
        warning: `embedding model ${model.modelId} returned ${error.message}; semantic_knn uses the offline tfidf space`,
        embedded,
        reused,
      };
    }
    for (const row of rows) stored.set(vectorRowKey(row), row.vector);
    embedded += rows.length;
  }

  const sums = new Map<string, Float32Array>();
  for (const view of views) {
    const vector = stored.get(vectorRowKey(view));
    if (!vector) continue;
    const unit = unitVector(vector);
    if (!unit) continue;
    const sum = sums.get(view.memoryId);
    if (!sum) sums.set(view.memoryId, unit);
    else for (let d = 0; d < Math.min(sum.length, unit.length); d++) sum[d] = sum[d]! + unit[d]!;
  }
  const recordVectors = new Map<string, Float32Array>();
  for (const record of records) {
    const sum = sums.get(record.id);
    const unit = sum && unitVector(sum);
    if (unit) recordVectors.set(record.id, unit);
  }
  return { ok: true, space, recordVectors, embedded, reused };
}

async function viewsOf(
  store: ArchiveStore,
  contextId: string,
  records: readonly MemoryRecord[],
  withPixels: boolean,
): Promise<MemoryView[]> {
  const kinds = new Set<string>(EMBEDDED_VIEW_KINDS);
  const out: MemoryView[] = [];
  for (let start = 0; start < records.length; start += 1000) {
    const ids = records.slice(start, start + 1000).map((record) => record.id);
    for (const view of await store.getViews(contextId, ids)) {
      if (kinds.has(view.kind) && view.text.trim() !== '') out.push(view);
      else if (withPixels && isPixelView(view.kind) && view.uri !== undefined) out.push(view);
    }
  }
  return out;
}

function isPixelView(kind: string): boolean {
  return (EMBEDDED_PIXEL_KINDS as readonly string[]).includes(kind);
}

/**
 * Why a model's reply cannot be stored as this batch's vectors, or undefined: not one vector per input, a vector
 * that is not numbers, empty, not finite (NaN, Infinity: a custom or broken model stored them silently), or
 * of another length than the space's. Such a reply is a model fault: the write falls back to tfidf, flagged.
 */
function vectorProblem(vectors: unknown, inputs: number, dimension: number | undefined): string | undefined {
  if (!Array.isArray(vectors)) return 'no vector list';
  if (vectors.length !== inputs) return `${vectors.length} vectors for ${inputs} inputs`;
  const length = dimension ?? (vectors[0] as { length?: unknown } | undefined)?.length;
  for (const vector of vectors) {
    if (!(vector instanceof Float32Array) && !Array.isArray(vector)) return 'a vector that is not numbers';
    if (vector.length === 0 || vector.length !== length)
      return `vectors of ${vector.length} and ${length} values`;
    for (const value of vector)
      if (!Number.isFinite(value)) return 'a vector with a value that is not finite';
  }
  return undefined;
}

/** A fresh L2-normalised copy, or undefined for a zero or non-finite vector. */
function unitVector(vector: Float32Array): Float32Array | undefined {
  let norm = 0;
  for (const value of vector) norm += value * value;
  if (!(norm > 0) || !Number.isFinite(norm)) return undefined;
  const scale = 1 / Math.sqrt(norm);
  return vector.map((value) => value * scale);
}
