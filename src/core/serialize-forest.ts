import type { CandidateEdge, CandidateNode, ForestTree } from './candidate-graph.ts';
import { compareNodeRank } from './indexed-graph.ts';

export interface SerializedForest {
  /** All memory ids in reading order. */
  order: string[];
  trees: ForestTree[];
}

/**
 * Breadth-first reading order of a forest (paper A.5): each tree's root is its highest-prize node, trees
 * are ordered by root prize, and each tree is read breadth-first with a node's neighbours by prize. Every
 * tie is broken by pool position, then id. Edges outside the node set are ignored; an edge that would
 * revisit a node (not a forest) is skipped.
 */
export function serializeForest(
  nodes: readonly CandidateNode[],
  forestEdges: readonly CandidateEdge[],
): SerializedForest {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const adjacency = new Map<string, { node: CandidateNode; edge: CandidateEdge }[]>();
  for (const node of nodes) adjacency.set(node.id, []);
  for (const edge of forestEdges) {
    const a = byId.get(edge.a);
    const b = byId.get(edge.b);
    if (a === undefined || b === undefined || a === b) continue;
    adjacency.get(a.id)!.push({ node: b, edge });
    adjacency.get(b.id)!.push({ node: a, edge });
  }
  for (const list of adjacency.values()) list.sort((x, y) => compareNodeRank(x.node, y.node));

  // Visiting nodes in rank order makes the first unvisited node of each tree its root, and roots come out
  // in root order.
  const visited = new Set<string>();
  const trees: ForestTree[] = [];
  for (const root of [...nodes].sort(compareNodeRank)) {
    if (visited.has(root.id)) continue;
    visited.add(root.id);
    const order = [root.id];
    const parents: ForestTree['parents'] = Object.create(null);
    for (let head = 0; head < order.length; head++) {
      const current = order[head]!;
      for (const { node, edge } of adjacency.get(current)!) {
        if (visited.has(node.id)) continue;
        visited.add(node.id);
        parents[node.id] = { parentId: current, edge };
        order.push(node.id);
      }
    }
    trees.push({ rootId: root.id, order, parents });
  }
  return { order: trees.flatMap((tree) => tree.order), trees };
}
