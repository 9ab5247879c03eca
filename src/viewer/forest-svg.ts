import type { ForestTree } from '../core/candidate-graph.ts';
import { escapeHtml, fmt, truncate } from './html-escape.ts';

/** What a node of the drawing shows, beyond its id. */
export interface ForestNodeInfo {
  rank?: number;
  prize?: number;
  label?: string;
  gold?: boolean;
}

const NODE_W = 168;
const NODE_H = 48;
const GAP_X = 20;
const LEVEL_H = 96;
const MARGIN = 16;

interface Placed {
  id: string;
  x: number;
  y: number;
}

/**
 * Draws the final forest as inline SVG: trees left to right in reading order, each laid out top-down
 * (root on top, children in breadth-first order, parents centred over their children). Edges carry their
 * relation types and ECV role; stroke width follows the edge weight.
 */
export function renderForestSvg(trees: readonly ForestTree[], info: (id: string) => ForestNodeInfo): string {
  const placed: Placed[] = [];
  let nextLeaf = 0;
  let maxDepth = 0;
  trees.forEach((tree, treeIndex) => {
    const children = childrenOf(tree);
    const place = (id: string, depth: number): number => {
      maxDepth = Math.max(maxDepth, depth);
      const kids = children.get(id) ?? [];
      let x: number;
      if (kids.length === 0) x = nextLeaf++;
      else {
        const xs = kids.map((kid) => place(kid, depth + 1));
        x = ((xs[0] ?? 0) + (xs[xs.length - 1] ?? 0)) / 2;
      }
      placed.push({ id, x, y: depth });
      return x;
    };
    place(tree.rootId, 0);
    if (treeIndex < trees.length - 1) nextLeaf += 0.35; // a little air between trees
  });
  const width = Math.max(1, nextLeaf) * (NODE_W + GAP_X) + 2 * MARGIN;
  const height = maxDepth * LEVEL_H + NODE_H + 2 * MARGIN;
  const pos = new Map(placed.map((p) => [p.id, p]));
  const cx = (p: Placed) => MARGIN + p.x * (NODE_W + GAP_X) + NODE_W / 2;
  const cy = (p: Placed) => MARGIN + p.y * LEVEL_H + NODE_H / 2;

  const edgeParts: string[] = [];
  for (const tree of trees) {
    for (const [childId, { parentId, edge }] of Object.entries(tree.parents)) {
      const child = pos.get(childId);
      const parent = pos.get(parentId);
      if (!child || !parent) continue;
      const x1 = cx(parent);
      const y1 = cy(parent) + NODE_H / 2;
      const x2 = cx(child);
      const y2 = cy(child) - NODE_H / 2;
      edgeParts.push(
        `<g class="f-edge" data-edge="${escapeHtml(parentId)}|${escapeHtml(childId)}">` +
          `<line x1="${fmt(x1, 1)}" y1="${fmt(y1, 1)}" x2="${fmt(x2, 1)}" y2="${fmt(y2, 1)}" ` +
          `stroke-width="${fmt(1 + 3 * edge.weight, 2)}"/>` +
          // Labels sit just above the child, two short lines, so sibling labels do not collide.
          `<text x="${fmt(x2, 1)}" y="${fmt(y2 - 18, 1)}" text-anchor="middle">` +
          `${escapeHtml(truncate(edge.relationTypes.join('+'), 28))}</text>` +
          `<text x="${fmt(x2, 1)}" y="${fmt(y2 - 6, 1)}" text-anchor="middle">` +
          `${escapeHtml(edge.role)} · w ${fmt(edge.weight, 2)}</text></g>`,
      );
    }
  }
  const nodeParts = placed.map((p) => {
    const node = info(p.id);
    const x = MARGIN + p.x * (NODE_W + GAP_X);
    const y = MARGIN + p.y * LEVEL_H;
    const head = `${node.rank === undefined ? '' : `#${node.rank} `}${truncate(p.id, 20)}`;
    return (
      `<g class="f-node${node.gold ? ' gold' : ''}" data-memory-id="${escapeHtml(p.id)}">` +
      `<title>${escapeHtml(p.id)}${node.label ? `: ${escapeHtml(node.label)}` : ''}</title>` +
      `<rect x="${fmt(x, 1)}" y="${fmt(y, 1)}" width="${NODE_W}" height="${NODE_H}" rx="6"/>` +
      `<text x="${fmt(x + 8, 1)}" y="${fmt(y + 18, 1)}" class="f-id">${escapeHtml(head)}</text>` +
      `<text x="${fmt(x + 8, 1)}" y="${fmt(y + 36, 1)}" class="f-sub">` +
      `${node.prize === undefined ? '' : `p ${fmt(node.prize, 2)} `}${escapeHtml(truncate(node.label ?? '', 18))}</text></g>`
    );
  });
  return (
    `<svg class="forest" data-testid="forest-svg" xmlns="http://www.w3.org/2000/svg" role="img" ` +
    `aria-label="evidence forest" width="${fmt(width, 0)}" height="${fmt(height, 0)}" ` +
    `viewBox="0 0 ${fmt(width, 0)} ${fmt(height, 0)}">${edgeParts.join('')}${nodeParts.join('')}</svg>`
  );
}

function childrenOf(tree: ForestTree): Map<string, string[]> {
  const children = new Map<string, string[]>();
  // Breadth-first `order` gives the reading order of siblings.
  for (const id of tree.order) {
    const parent = tree.parents[id];
    if (!parent) continue;
    const list = children.get(parent.parentId) ?? [];
    list.push(id);
    children.set(parent.parentId, list);
  }
  return children;
}
