import { expect } from 'vitest';
import { relationKeys } from '../../../src/digest/incremental/relation-keys.ts';
import {
  type SchemaUpdateResult,
  updateSchemaRelations,
} from '../../../src/digest/incremental/update-schema-relations.ts';
import { consecutiveTurnPairs } from '../../../src/digest/relations/consecutive-turn.ts';
import { eventBridgePairs } from '../../../src/digest/relations/event-bridge.ts';
import { recordGroundingPairs } from '../../../src/digest/relations/record-grounding.ts';
import type { RecordPair } from '../../../src/digest/relations/record-pair.ts';
import { sameRecordPairs } from '../../../src/digest/relations/same-record.ts';
import { sameRoundPairs } from '../../../src/digest/relations/same-round.ts';
import { supersedesPairs } from '../../../src/digest/relations/supersedes.ts';
import type { ArchiveStore } from '../../../src/store/archive-store-spec.ts';
import type { MemoryRecord } from '../../../src/types/memory-record.ts';
import { RELATION_TYPES, type RelationType, type SchemaRelationType } from '../../../src/types/relation.ts';

export const CTX = 'ctx';

const FULL: ReadonlyArray<[SchemaRelationType, (records: readonly MemoryRecord[]) => RecordPair[]]> = [
  ['same_round', sameRoundPairs],
  ['consecutive_turn', consecutiveTurnPairs],
  ['event_bridge', eventBridgePairs],
  ['same_record', sameRecordPairs],
  ['record_grounding', recordGroundingPairs],
  ['supersedes', supersedesPairs],
];

/** Writes records (with their relation keys) and updates the schema relations incrementally. */
export async function upsert(store: ArchiveStore, records: MemoryRecord[]): Promise<SchemaUpdateResult> {
  const befores = new Map(
    (
      await store.getMemories(
        CTX,
        records.map((r) => r.id),
      )
    ).map((r) => [r.id, r]),
  );
  await store.writeMemories(
    CTX,
    records.map((record) => ({
      record,
      views: [],
      contentHash: JSON.stringify(record),
      keys: relationKeys(record),
    })),
  );
  return updateSchemaRelations(store, CTX, {
    upserted: records.map((after) => {
      const before = befores.get(after.id);
      return before ? { before, after } : { after };
    }),
    removed: [],
  });
}

/** Deletes records and updates the schema relations incrementally. */
export async function remove(store: ArchiveStore, ids: string[]): Promise<SchemaUpdateResult> {
  const removed = await store.getMemories(CTX, ids);
  for (const record of removed) await store.deleteMemory(CTX, record.id);
  return updateSchemaRelations(store, CTX, { upserted: [], removed });
}

/** Edges of the store by type, as sorted "a|b" strings. */
export async function storedPairs(store: ArchiveStore): Promise<Record<RelationType, string[]>> {
  const ids = (await store.listMemories(CTX)).map((record) => record.id);
  const byType = Object.fromEntries(RELATION_TYPES.map((type) => [type, [] as string[]])) as Record<
    RelationType,
    string[]
  >;
  for (const edge of await store.neighbors(CTX, ids)) {
    for (const type of edge.types) byType[type].push(`${edge.a}|${edge.b}`);
  }
  for (const list of Object.values(byType)) list.sort();
  return byType;
}

/** What the full rebuild gives for the schema types over the stored records, as sorted "a|b" strings. */
export async function rebuiltPairs(store: ArchiveStore): Promise<Record<SchemaRelationType, string[]>> {
  const records = await store.listMemories(CTX);
  const out = {} as Record<SchemaRelationType, string[]>;
  for (const [type, compute] of FULL) {
    out[type] = [...new Set(compute(records).map(([a, b]) => (a < b ? `${a}|${b}` : `${b}|${a}`)))].sort();
  }
  return out;
}

/** Asserts that every schema type in the store equals the full rebuild, type by type. */
export async function expectMatchesRebuild(store: ArchiveStore, step = ''): Promise<void> {
  const stored = await storedPairs(store);
  const rebuilt = await rebuiltPairs(store);
  for (const [type] of FULL) expect(stored[type], `${type} ${step}`).toEqual(rebuilt[type]);
}
