import type { ArchiveStore } from '../../../src/store/archive-store-spec.ts';
import type { MemoryRecord } from '../../../src/types/memory-record.ts';

/** A message of context 'ctx' (the kNN tests' one context). */
export function record(id: string, text: string, sequence: number): MemoryRecord {
  return { id, contextId: 'ctx', kind: 'message', sequence, text, assets: [] };
}

/** Writes records into 'ctx' without views (the semantic side reads the record text). */
export async function put(store: ArchiveStore, records: readonly MemoryRecord[]): Promise<void> {
  await store.writeMemories(
    'ctx',
    records.map((r) => ({ record: r, views: [], contentHash: `${r.id}:${r.text}` })),
  );
}

/**
 * A text of `minWords` to `minWords + spread - 1` words drawn skewed from `words`: low-index words are
 * common (long posting lists, many ties).
 */
export function skewedText(
  words: readonly string[],
  random: () => number,
  minWords: number,
  spread: number,
): string {
  const length = minWords + Math.floor(random() * spread);
  return Array.from({ length }, () => words[Math.floor(random() ** 2 * words.length)]!).join(' ');
}
