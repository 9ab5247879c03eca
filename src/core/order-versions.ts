/** One supersedes link between two memories of a reading order: `newer` replaces `older`. */
export interface VersionLink {
  older: string;
  newer: string;
}

/**
 * The reading order with versions of one fact read oldest to newest: each group of memories joined by
 * version links (a connected component among `order`) takes the place of its first member, and inside it
 * an older version comes before every version that supersedes it (ties and cycles, which only explicit
 * input can make, keep the given order). Everything else keeps its place. A reader then meets the history
 * first and the current value last, right where the fact first appears. Links touching ids outside `order`
 * are ignored.
 */
export function orderVersions(order: readonly string[], links: readonly VersionLink[]): string[] {
  const position = new Map(order.map((id, index) => [id, index]));
  const parent = new Map<string, string>();
  const root = (id: string): string => {
    let current = id;
    while (parent.has(current)) current = parent.get(current)!;
    return current;
  };
  const inOrder = links.filter(
    (link) => link.older !== link.newer && position.has(link.older) && position.has(link.newer),
  );
  if (inOrder.length === 0) return [...order];
  for (const { older, newer } of inOrder) {
    const [x, y] = [root(older), root(newer)];
    if (x === y) continue;
    // The earlier placed root stays the root, so a group's root is its first member.
    if (position.get(x)! < position.get(y)!) parent.set(y, x);
    else parent.set(x, y);
  }
  const groups = new Map<string, string[]>();
  for (const id of order) {
    const group = groups.get(root(id));
    if (group) group.push(id);
    else groups.set(root(id), [id]);
  }
  const out: string[] = [];
  const placed = new Set<string>();
  for (const id of order) {
    if (placed.has(id)) continue;
    const members = groups.get(root(id))!;
    for (const member of oldestFirst(members, inOrder, position)) {
      placed.add(member);
      out.push(member);
    }
  }
  return out;
}

/** Topological order (older before newer), ties by the given position; a cycle's rest in given order. */
function oldestFirst(
  members: readonly string[],
  links: readonly VersionLink[],
  position: ReadonlyMap<string, number>,
): string[] {
  if (members.length === 1) return [...members];
  const inGroup = new Set(members);
  const olderCount = new Map(members.map((id) => [id, 0]));
  const newerOf = new Map<string, string[]>();
  for (const { older, newer } of links) {
    if (!inGroup.has(older) || !inGroup.has(newer)) continue;
    olderCount.set(newer, olderCount.get(newer)! + 1);
    const list = newerOf.get(older);
    if (list) list.push(newer);
    else newerOf.set(older, [newer]);
  }
  const out: string[] = [];
  const done = new Set<string>();
  while (out.length < members.length) {
    // The earliest placed member with no older version left, or (in a cycle) the earliest left at all.
    let next: string | undefined;
    for (const id of members) {
      if (done.has(id) || olderCount.get(id)! > 0) continue;
      if (next === undefined || position.get(id)! < position.get(next)!) next = id;
    }
    if (next === undefined) next = members.find((id) => !done.has(id))!;
    done.add(next);
    out.push(next);
    for (const newer of newerOf.get(next) ?? []) olderCount.set(newer, olderCount.get(newer)! - 1);
  }
  return out;
}
