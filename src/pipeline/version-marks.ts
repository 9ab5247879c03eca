import { orderVersions, type VersionLink } from '../core/order-versions.ts';
import type { ArchiveStore, MemoryFilter } from '../store/archive-store-spec.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import { supersessionOrder } from '../types/supersession.ts';
import { mayHaveSupersedes } from './may-have-supersedes.ts';
import { edgesTouchingIds, type SeedEdges } from './pool-edges.ts';
import { poolRecords } from './pool-records.ts';
import type { EvidenceItem } from './retrieval-result.ts';

/**
 * The supersedes links of the packet's memories: every stored `supersedes` edge touching an evidence item,
 * oriented by supersessionOrder, the far end read when it is not in `records`. With a filter, only links
 * whose far end passes it (a memory outside the question's scope is never named). Cost: one neighbors read
 * for at most K ids (those that were not seeds: `seedEdges` has theirs), one getMemories for the far ends, one matchMemories by id when filtered;
 * none of these when the context has no supersedes edge (mayHaveSupersedes, one small read per generation).
 */
export async function packetVersionLinks(
  store: ArchiveStore,
  contextId: string,
  evidence: readonly EvidenceItem[],
  records: ReadonlyMap<string, MemoryRecord>,
  filter?: MemoryFilter,
  seedEdges: SeedEdges = { edges: [], seedIds: new Set() },
): Promise<{ links: VersionLink[]; records: Map<string, MemoryRecord> }> {
  const known = new Map(records);
  if (evidence.length === 0) return { links: [], records: known };
  // Without any supersedes edge in the context, the edge read below could only find none.
  if (!(await mayHaveSupersedes(store, contextId))) return { links: [], records: known };
  const ids = evidence.map((item) => item.memoryId);
  // Edges of seeds in the packet were read by expansion (with a filter, those inside it: the links
  // dropped by that are dropped below anyway).
  const edges = (await edgesTouchingIds(store, contextId, ids, seedEdges)).filter((edge) =>
    edge.types.includes('supersedes'),
  );
  if (edges.length === 0) return { links: [], records: known };
  let allowed: Set<string> | undefined;
  if (filter) {
    const ends = new Set(edges.flatMap((edge) => [edge.a, edge.b]));
    allowed = new Set(await store.matchMemories(contextId, filter, { ids: [...ends] }));
  }
  const missing = [...new Set(edges.flatMap((edge) => [edge.a, edge.b]).filter((id) => !known.has(id)))];
  for (const record of await poolRecords(store, contextId, missing)) known.set(record.id, record);
  const links: VersionLink[] = [];
  for (const edge of edges) {
    const [x, y] = [known.get(edge.a), known.get(edge.b)];
    if (!x || !y || (allowed && (!allowed.has(x.id) || !allowed.has(y.id)))) continue;
    const { newer, older } = supersessionOrder(x, y);
    links.push({ older: older.id, newer: newer.id });
  }
  return { links, records: known };
}

/**
 * Marks and orders the versions in a packet: each item with a supersedes link gets `recordedAt` (the second
 * clock, next to its event `date`) and `version` (current or superseded, with the ids on both sides), and
 * versions of one fact are read oldest to newest (orderVersions); ranks follow the new order.
 */
export function applyVersionMarks(
  evidence: readonly EvidenceItem[],
  links: readonly VersionLink[],
  records: ReadonlyMap<string, MemoryRecord>,
): EvidenceItem[] {
  if (links.length === 0) return [...evidence];
  const byId = new Map(evidence.map((item) => [item.memoryId, item]));
  const order = orderVersions(
    evidence.map((item) => item.memoryId),
    links,
  );
  return order.map((id, index) => {
    const item = byId.get(id)!;
    const supersedes = links.filter((link) => link.newer === id).map((link) => link.older);
    const supersededBy = links.filter((link) => link.older === id).map((link) => link.newer);
    if (supersedes.length === 0 && supersededBy.length === 0) return { ...item, rank: index + 1 };
    const recordedAt = records.get(id)?.recordedAt;
    return {
      ...item,
      rank: index + 1,
      ...(recordedAt === undefined ? {} : { recordedAt }),
      version: {
        status: supersededBy.length > 0 ? 'superseded' : 'current',
        supersedes: [...new Set(supersedes)].sort(),
        supersededBy: [...new Set(supersededBy)].sort(),
      },
    };
  });
}
