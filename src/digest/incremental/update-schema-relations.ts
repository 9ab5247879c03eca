import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import type { ArchiveStore, EdgeChange } from '../../store/archive-store-spec.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';
import { SCHEMA_RELATION_TYPES, type SchemaRelationType } from '../../types/relation.ts';
import { eventBridgeDelta } from './event-bridge-delta.ts';
import { KeyLookup } from './key-lookup.ts';
import { recordGroundingDelta } from './record-grounding-delta.ts';
import { sameRecordDelta } from './same-record-delta.ts';
import { consecutiveTurnDelta, sameRoundDelta } from './sequence-relations-delta.ts';
import { supersedesDelta } from './supersedes-delta.ts';
import { type RecordChange, TypeDelta } from './type-delta.ts';

/**
 * A write already applied to the store: upserted records with the stored version each replaced (absent
 * for inserts), and deleted records as they were. The store must hold each record's relation keys
 * (MemoryWrite.keys = relationKeys(record)) and the schema edges of the state before the write.
 */
export interface SchemaDelta {
  upserted: ReadonlyArray<{ before?: MemoryRecord; after: MemoryRecord }>;
  removed: readonly MemoryRecord[];
}

export interface SchemaUpdateResult {
  /** Pairs that gained / lost each schema type. */
  added: Record<SchemaRelationType, number>;
  removed: Record<SchemaRelationType, number>;
  /** Records whose edges of each type were recomputed (the work done). */
  dirty: Record<SchemaRelationType, number>;
}

type DeltaStep = (lookup: KeyLookup, changes: readonly RecordChange[], delta: TypeDelta) => Promise<void>;

const STEPS: ReadonlyArray<[SchemaRelationType, DeltaStep]> = [
  ['same_round', sameRoundDelta],
  ['consecutive_turn', consecutiveTurnDelta],
  ['event_bridge', eventBridgeDelta],
  ['same_record', sameRecordDelta],
  ['record_grounding', recordGroundingDelta],
  ['supersedes', supersedesDelta],
];

/**
 * The incremental counterpart of the schema part of buildRelations: brings the schema relation types
 * of one context from the state before `delta` to the state after it, exactly (the same rules decide every
 * pair), with ONE changeEdges call. Each type names its dirty records (whose edges of the type may change)
 * and their pairs after the write; the stored edges of the type touching dirty records are diffed against
 * those pairs. semantic_knn is never touched. Cost per change: the key groups it touches, never the
 * context size:
 * - consecutive_turn: about 4 adjacency reads per old/new place in a session;
 * - same_round: the round when it is (or was) a clique, at most 32 + joiners; adjacency reads otherwise;
 * - event_bridge: the capture chains (gaps <= 1 h) within 1 h of the old/new capture time, read whole;
 * - same_record: per dirty email its thread groups (uncapped, like the rebuild), <= 51 per code or date
 *   group and its subject's mails within 14 days; a code/date group crossing 50 makes its members dirty;
 * - record_grounding: the mails stating the changed media's days, and the media of their stated days;
 * - supersedes: its thread from 8 memories before to 16 after each old/new place, plus the explicit lists.
 * Plus one neighbors read for the dirty records and one changeEdges write.
 */
export async function updateSchemaRelations(
  store: ArchiveStore,
  contextId: string,
  delta: SchemaDelta,
): Promise<SchemaUpdateResult> {
  const changes = toChanges(contextId, delta);
  const lookup = new KeyLookup(store, contextId);
  const deltas = new Map<SchemaRelationType, TypeDelta>();
  const everyDirty = new Set<string>();
  // The types' reads are independent (each fills its own delta; the lookup caches what they share): run
  // together, a networked store answers their reads of each round together.
  const computed = await Promise.all(
    STEPS.map(async ([type, step]) => {
      const typeDelta = new TypeDelta();
      await step(lookup, changes, typeDelta);
      return [type, typeDelta] as const;
    }),
  );
  for (const [type, typeDelta] of computed) {
    // A changed record may lose every pair of a type (it left its session, its round, email kind...).
    for (const change of changes) if (change.after) typeDelta.dirty.add(change.id);
    for (const id of typeDelta.dirty) everyDirty.add(id);
    deltas.set(type, typeDelta);
  }

  const stored = await store.neighbors(contextId, [...everyDirty]);
  const result: SchemaUpdateResult = { added: counts(), removed: counts(), dirty: counts() };
  const edgeChanges = new Map<
    string,
    { a: string; b: string; add: SchemaRelationType[]; remove: SchemaRelationType[] }
  >();
  const changeOf = (a: string, b: string) => {
    const key = `${a}\u0000${b}`;
    let found = edgeChanges.get(key);
    if (!found) {
      found = { a, b, add: [], remove: [] };
      edgeChanges.set(key, found);
    }
    return found;
  };
  for (const [type, { dirty, pairs }] of deltas) {
    result.dirty[type] = dirty.size;
    const touches = (a: string, b: string) => dirty.has(a) || dirty.has(b);
    const existing = new Set<string>();
    for (const edge of stored) {
      if (!edge.types.includes(type) || !touches(edge.a, edge.b)) continue;
      existing.add(`${edge.a}\u0000${edge.b}`);
      if (!pairs.has(edge.a, edge.b)) {
        changeOf(edge.a, edge.b).remove.push(type);
        result.removed[type] += 1;
      }
    }
    for (const [a, b] of pairs.pairs) {
      if (!touches(a, b) || existing.has(`${a}\u0000${b}`)) continue;
      changeOf(a, b).add.push(type);
      result.added[type] += 1;
    }
  }
  const writes: EdgeChange[] = [...edgeChanges.values()];
  await store.changeEdges(contextId, writes);
  return result;
}

function toChanges(contextId: string, delta: SchemaDelta): RecordChange[] {
  const changes = new Map<string, RecordChange>();
  const check = (record: MemoryRecord, role: string): void => {
    if (record.contextId !== contextId) {
      throw new GraphmemixError(
        'INVALID_INPUT',
        `${role} record "${record.id}" belongs to "${record.contextId}", not "${contextId}"`,
        { location: { recordId: record.id, field: 'contextId' } },
      );
    }
    if (changes.has(record.id)) {
      throw new GraphmemixError('INVALID_INPUT', `record "${record.id}" appears twice in one delta`, {
        location: { recordId: record.id },
      });
    }
  };
  for (const { before, after } of delta.upserted) {
    check(after, 'upserted');
    if (before && before.id !== after.id) {
      throw new GraphmemixError('INVALID_INPUT', `before "${before.id}" paired with after "${after.id}"`, {
        location: { recordId: after.id },
      });
    }
    changes.set(after.id, before ? { id: after.id, before, after } : { id: after.id, after });
  }
  for (const record of delta.removed) {
    check(record, 'removed');
    changes.set(record.id, { id: record.id, before: record });
  }
  return [...changes.values()];
}

function counts(): Record<SchemaRelationType, number> {
  return Object.fromEntries(SCHEMA_RELATION_TYPES.map((type) => [type, 0])) as Record<
    SchemaRelationType,
    number
  >;
}
