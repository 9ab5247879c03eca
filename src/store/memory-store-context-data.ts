import type { Bm25Index } from '../retrieval/bm25-index.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { MemoryEdge } from '../types/relation.ts';
import type { MemoryView } from '../types/view.ts';
import type { ContextInfo, RelationWork, VectorRow } from './archive-store-spec.ts';
import type { MemoryKeyIndex } from './memory-key-index.ts';
import type { VectorIndex } from './vector-index.ts';

/** One memory as the in-memory store holds it. */
interface StoredMemory {
  record: MemoryRecord;
  views: MemoryView[];
  contentHash: string;
}

/** What the in-memory store holds per context. */
export interface ContextData {
  memories: Map<string, StoredMemory>;
  edges: Map<string, MemoryEdge>;
  /** memory id -> pair keys of its edges, for neighbors() and deletes. */
  edgesByMemory: Map<string, Set<string>>;
  /** space -> "memoryId\0kind\0key" -> row. */
  vectors: Map<string, Map<string, VectorRow>>;
  lexical?: Bm25Index;
  vectorIndexes: Map<string, VectorIndex>;
  /** The relation journal (ArchiveStore.pendingRelationWork), in seq order. */
  journal: RelationWork[];
  /** Relation lookup keys (MemoryWrite.keys). */
  keys: MemoryKeyIndex;
  lastWrite?: string;
  /** memory id -> its replaced versions, oldest first (ArchiveStore.memoryVersions). */
  versions: Map<string, MemoryRecord[]>;
}

export function contextInfo(id: string, data: ContextData): ContextInfo {
  let maxSequence: number | undefined;
  for (const stored of data.memories.values()) {
    if (maxSequence === undefined || stored.record.sequence > maxSequence)
      maxSequence = stored.record.sequence;
  }
  return maxSequence === undefined
    ? { id, memories: data.memories.size }
    : { id, memories: data.memories.size, maxSequence };
}
