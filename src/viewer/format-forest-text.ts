import type { RetrievalResult } from '../pipeline/retrieval-result.ts';
import { fmt, truncate } from './html-escape.ts';

/**
 * The evidence forest as indented plain text for terminals: one block per tree in reading order, each
 * child under its parent with the relation and ECV role of the edge that joined them.
 *
 *   tree 1
 *   [1] m12  2024-05-02  email  "Subject: offsite moved..."  p 0.91
 *       └─ record_grounding · new_fact (w 0.85)
 *          [2] p3  2024-05-12  photo  "..."  p 0.72
 */
export function formatForestText(result: RetrievalResult, options: { width?: number } = {}): string {
  const width = options.width ?? 72;
  const byId = new Map(result.evidence.map((item) => [item.memoryId, item]));
  const lines: string[] = [];
  result.forest.trees.forEach((tree, index) => {
    lines.push(`tree ${index + 1}`);
    const children = new Map<string, string[]>();
    for (const id of tree.order) {
      const parent = tree.parents[id];
      if (parent) children.set(parent.parentId, [...(children.get(parent.parentId) ?? []), id]);
    }
    const visit = (id: string, indent: string) => {
      const item = byId.get(id);
      const head = item
        ? `[${item.rank}] ${id}  ${item.date ?? '(no date)'}  ${item.kind}  "${truncate(item.text, width)}"  p ${fmt(item.prize, 2)}`
        : id;
      lines.push(`${indent}${head}`);
      for (const child of children.get(id) ?? []) {
        const edge = tree.parents[child]?.edge;
        if (edge)
          lines.push(
            `${indent}    └─ ${edge.relationTypes.join('+')} · ${edge.role} (w ${fmt(edge.weight, 2)})`,
          );
        visit(child, `${indent}       `);
      }
    };
    visit(tree.rootId, '');
  });
  if (result.trace.flags.length > 0) lines.push(`flags: ${result.trace.flags.join(', ')}`);
  return lines.join('\n');
}
