import { GraphmemixError } from '../errors/graphmemix-error.ts';
import {
  edgeStrength,
  hasSchemaType,
  type MemoryEdge,
  RELATION_TYPES,
  type RelationType,
  SCHEMA_RELATION_TYPES,
} from '../types/relation.ts';
import type { EdgeChange } from './archive-store-spec.ts';

/** Key of an undirected pair (a < b). */
export function pairKey(a: string, b: string): string {
  return `${a}\u0000${b}`;
}

/**
 * The replaceEdges semantics shared by every backend, computed as a diff so a backend writes only what changed:
 * every type in `types` is removed from the context's existing edges, then `edges` are merged in (types
 * united per pair). Strength follows MemoryEdge: the schema strength when any schema type holds, else the
 * mutual-kNN similarity. Edges are normalised (a < b, types deduplicated in canonical order); a self-loop, a
 * foreign context or a type outside `types` is a caller bug and throws INVALID_INPUT.
 */
export function diffEdgeReplacement(
  contextId: string,
  existing: Iterable<MemoryEdge>,
  types: readonly RelationType[],
  edges: readonly MemoryEdge[],
): { upserts: MemoryEdge[]; deletes: MemoryEdge[] } {
  const replaced = new Set(types);
  const before = new Map<string, MemoryEdge>();
  const after = new Map<string, MemoryEdge>();
  for (const edge of existing) {
    const key = pairKey(edge.a, edge.b);
    before.set(key, edge);
    if (!edge.types.some((type) => replaced.has(type))) continue;
    const kept = stripTypes(edge, replaced);
    if (kept) after.set(key, kept);
    else after.set(key, DELETED);
  }
  for (const raw of edges) {
    const edge = normalizeEdge(contextId, raw, replaced);
    const key = pairKey(edge.a, edge.b);
    const current = after.has(key) ? after.get(key) : before.get(key);
    after.set(key, current && current !== DELETED ? mergeTwo(current, edge) : edge);
  }
  const upserts: MemoryEdge[] = [];
  const deletes: MemoryEdge[] = [];
  for (const [key, edge] of after) {
    const previous = before.get(key);
    if (edge === DELETED) {
      if (previous) deletes.push(previous);
    } else if (!previous || !sameEdge(previous, edge)) {
      upserts.push(edge);
    }
  }
  return { upserts, deletes };
}

/**
 * replaceEdges without the diff's maps, when no stored edge of the context carries any of the replaced types
 * (a bulk import's rebuild: the schema edges into a fresh context, then its semantic_knn edges next to them)
 * and `edges` name every pair once in strictly increasing (a, b) order after normalisation (what
 * mergeRelationEdges and compactSemantic produce). Then nothing is stripped or deleted, and each new edge
 * becomes its pair's stored edge merged with it: the diff's upserts, in the same order, computed as they
 * stream by with one `stored` read per pair. All edges are checked first (the same INVALID_INPUT as the
 * diff, before anything is written); undefined when a pair repeats or the order differs (the caller then
 * takes diffEdgeReplacement, which merges repeats). At 1M memories the diff held every stored edge and
 * every new one in maps (~1M each): about a third of the import's peak RSS (docs/living-archive.md).
 */
export function streamEdgeReplacement(
  contextId: string,
  types: readonly RelationType[],
  edges: readonly MemoryEdge[],
  stored: (a: string, b: string) => MemoryEdge | undefined,
): Iterable<MemoryEdge> | undefined {
  const replaced = new Set(types);
  let last: MemoryEdge | undefined;
  for (const raw of edges) {
    const edge = normalizeEdge(contextId, raw, replaced);
    if (last !== undefined && !(last.a < edge.a || (last.a === edge.a && last.b < edge.b))) return undefined;
    last = edge;
  }
  return (function* () {
    for (const raw of edges) {
      const edge = normalizeEdge(contextId, raw, replaced);
      const previous = stored(edge.a, edge.b);
      if (previous === undefined) yield edge;
      else {
        const merged = mergeTwo(previous, edge);
        if (!sameEdge(previous, merged)) yield merged;
      }
    }
  })();
}

/**
 * The changeEdges semantics shared by every backend: the edge after one pair's change, or undefined when the
 * pair is left without types. `existing` is the stored edge of the pair (if any).
 */
export function applyEdgeChange(
  contextId: string,
  existing: MemoryEdge | undefined,
  change: EdgeChange,
): MemoryEdge | undefined {
  if (change.a === change.b) {
    throw new GraphmemixError('INVALID_INPUT', `self-loop edge on memory "${change.a}"`);
  }
  const add = change.add ?? [];
  if (add.includes('semantic_knn') && !Number.isFinite(change.similarity)) {
    throw new GraphmemixError(
      'INVALID_INPUT',
      `semantic_knn edge ${change.a}-${change.b} needs a similarity`,
    );
  }
  const removed = new Set(change.remove ?? []);
  const types = sortTypes([...(existing?.types ?? []).filter((type) => !removed.has(type)), ...add]);
  if (types.length === 0) return undefined;
  const similarity = !types.includes('semantic_knn')
    ? undefined
    : add.includes('semantic_knn')
      ? change.similarity
      : existing?.similarity;
  const [a, b] = change.a < change.b ? [change.a, change.b] : [change.b, change.a];
  const strength = edgeStrength(types, similarity);
  return withOptionalSimilarity({ contextId, a, b, types, strength }, similarity);
}

/**
 * The changeEdges semantics as a diff, shared by every backend: applies the changes in order (a pair named
 * twice sees its first change), checking every endpoint with `isMemory`, and returns only the pairs whose
 * stored form changes. `stored` reads a pair's current edge (a < b). Throws before anything is written.
 */
export function diffEdgeChanges(
  contextId: string,
  changes: readonly EdgeChange[],
  isMemory: (id: string) => boolean,
  stored: (a: string, b: string) => MemoryEdge | undefined,
): { upserts: MemoryEdge[]; deletes: MemoryEdge[] } {
  const after = new Map<string, { before: MemoryEdge | undefined; edge: MemoryEdge | undefined }>();
  for (const change of changes) {
    for (const id of [change.a, change.b]) {
      if (!isMemory(id)) {
        throw new GraphmemixError('INVALID_INPUT', `edge endpoint "${id}" is not a memory of "${contextId}"`);
      }
    }
    const [a, b] = change.a < change.b ? [change.a, change.b] : [change.b, change.a];
    const key = pairKey(a, b);
    const known = after.get(key);
    const before = known ? known.before : stored(a, b);
    after.set(key, { before, edge: applyEdgeChange(contextId, known ? known.edge : before, change) });
  }
  const upserts: MemoryEdge[] = [];
  const deletes: MemoryEdge[] = [];
  for (const { before, edge } of after.values()) {
    if (!edge) {
      if (before) deletes.push(before);
    } else if (!before || !sameEdge(before, edge)) {
      upserts.push(edge);
    }
  }
  return { upserts, deletes };
}

/** True when two stored forms of one pair are the same (no write needed). */
export function sameEdge(x: MemoryEdge, y: MemoryEdge): boolean {
  return (
    x.strength === y.strength &&
    x.similarity === y.similarity &&
    x.types.length === y.types.length &&
    x.types.every((type, index) => y.types[index] === type)
  );
}

/** Per-type counts (a pair with two types counts once for each). */
export function countEdgeTypes(
  edges: Iterable<{ types: readonly RelationType[] }>,
): Record<RelationType, number> {
  const counts = emptyEdgeCounts();
  for (const edge of edges) for (const type of edge.types) counts[type] += 1;
  return counts;
}

export function emptyEdgeCounts(): Record<RelationType, number> {
  return Object.fromEntries(RELATION_TYPES.map((type) => [type, 0])) as Record<RelationType, number>;
}

const DELETED: MemoryEdge = { contextId: '', a: '', b: '', types: [], strength: 0 };
const TYPE_ORDER = new Map(RELATION_TYPES.map((type, index) => [type, index]));
const SCHEMA = new Set<RelationType>(SCHEMA_RELATION_TYPES);

function normalizeEdge(contextId: string, edge: MemoryEdge, replaced: Set<RelationType>): MemoryEdge {
  if (edge.contextId !== contextId) {
    throw new GraphmemixError(
      'INVALID_INPUT',
      `edge of context "${edge.contextId}" written to "${contextId}"`,
    );
  }
  if (edge.a === edge.b) throw new GraphmemixError('INVALID_INPUT', `self-loop edge on memory "${edge.a}"`);
  for (const type of edge.types) {
    if (!replaced.has(type)) {
      throw new GraphmemixError('INVALID_INPUT', `edge type "${type}" is not among the replaced types`);
    }
  }
  if (edge.types.length === 0) throw new GraphmemixError('INVALID_INPUT', 'edge without relation types');
  const [a, b] = edge.a < edge.b ? [edge.a, edge.b] : [edge.b, edge.a];
  return withOptionalSimilarity(
    { contextId, a, b, types: sortTypes(edge.types), strength: edge.strength },
    edge.similarity,
  );
}

function stripTypes(edge: MemoryEdge, replaced: Set<RelationType>): MemoryEdge | undefined {
  const types = edge.types.filter((type) => !replaced.has(type));
  if (types.length === 0) return undefined;
  const similarity = types.includes('semantic_knn') ? edge.similarity : undefined;
  const strength = hasSchemaType(types) ? edge.strength : (similarity ?? 0);
  return withOptionalSimilarity(
    { contextId: edge.contextId, a: edge.a, b: edge.b, types, strength },
    similarity,
  );
}

function mergeTwo(x: MemoryEdge, y: MemoryEdge): MemoryEdge {
  const types = sortTypes([...x.types, ...y.types]);
  const similarity = y.similarity ?? x.similarity;
  const schemaStrengths = [x, y]
    .filter((edge) => edge.types.some((type) => SCHEMA.has(type)))
    .map((e) => e.strength);
  const strength = schemaStrengths.length > 0 ? Math.max(...schemaStrengths) : (similarity ?? y.strength);
  return withOptionalSimilarity({ contextId: x.contextId, a: x.a, b: x.b, types, strength }, similarity);
}

function sortTypes(types: readonly RelationType[]): RelationType[] {
  return [...new Set(types)].sort((x, y) => (TYPE_ORDER.get(x) ?? 0) - (TYPE_ORDER.get(y) ?? 0));
}

function withOptionalSimilarity(edge: MemoryEdge, similarity: number | undefined): MemoryEdge {
  if (similarity !== undefined) edge.similarity = similarity;
  return edge;
}
