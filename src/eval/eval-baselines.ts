import { buildTfidfSpace, type TfidfSpace } from '../digest/semantic/tfidf-space.ts';
import type { Graphmemix } from '../graphmemix-api.ts';
import type { QuestionInput } from '../pipeline/retrieval-result.ts';
import { Bm25Index } from '../retrieval/bm25-index.ts';
import type { MemoryRecord } from '../types/memory-record.ts';

/** The question text plus its image captions (the question's own images count as query text). */
export function searchText(input: QuestionInput): string {
  return [input.prompt, ...(input.images ?? []).map((image) => image.caption ?? '')].join(' ').trim();
}

export interface ContextBaselines {
  space: TfidfSpace;
  indexOf: Map<string, number>;
  /** One flat BM25 document per memory: its text and captions (no views, no graph). */
  flat: Bm25Index;
}

/**
 * Per-context data of the baselines: the offline TF-IDF space (similarities for MMR, DPP, facility location)
 * and the flat BM25 index of `lexical-topk`, which scores one document per memory (text + captions, as the
 * paper's conversion puts a round's captions on its user row), the classic flat-retrieval baseline.
 */
export function contextBaselines(records: readonly MemoryRecord[]): ContextBaselines {
  const space = buildTfidfSpace(records);
  const flat = Bm25Index.build(
    records.map((record) => ({
      memoryId: record.id,
      kind: 'text' as const,
      key: 'flat',
      text: [
        record.text,
        ...record.assets.flatMap((asset) => asset.derived?.captions ?? []),
        ...(record.derived?.captions ?? []),
      ].join(' '),
    })),
  );
  return { space, indexOf: new Map(space.ids.map((id, index) => [id, index])), flat };
}

export function flatTopK(index: Bm25Index, query: string, k: number): string[] {
  return index.search(query, { limit: k }).map((hit) => hit.memoryId);
}

/** Single-view retrieval through the store: BM25 over one view kind, max-pooled per memory, top-K. */
export async function flatLexical(
  gm: Graphmemix,
  contextId: string,
  query: string,
  k: number,
  kinds: ('text' | 'caption' | 'ocr' | 'metadata')[],
): Promise<string[]> {
  const hits = await gm.store.searchLexical(contextId, query, { limit: k * 8, kinds });
  const best = new Map<string, number>();
  for (const hit of hits)
    best.set(hit.memoryId, Math.max(best.get(hit.memoryId) ?? Number.NEGATIVE_INFINITY, hit.rawScore));
  return [...best.entries()]
    .sort((a, b) => (b[1] !== a[1] ? b[1] - a[1] : a[0] < b[0] ? -1 : 1))
    .slice(0, k)
    .map(([id]) => id);
}
