import { OBJECTIVE_TOLERANCE } from './structural-gain.ts';
import { combineChoices, isBetterChoice, type SubsetChoice } from './subset-choice.ts';
import { UnionFind } from './union-find.ts';

/**
 * One connected component of the positive-gain edge graph inside the proposal. The objective is additive
 * over components, so each is searched alone. Local node i is proposal position `positions[i]` (ascending);
 * edges are deduplicated per pair (only the first in Kruskal order can ever be used) and kept in Kruskal order.
 */
export interface SearchComponent {
  positions: number[];
  /** p_i - kappa per local node. */
  weight: Float64Array;
  eu: Int32Array;
  ev: Int32Array;
  gain: Float64Array;
}

const UNDECIDED = 0;
const IN = 1;
const OUT = 2;

/**
 * Best subset of a tree component (empty allowed) by dynamic programming: for every subtree, the best choice
 * with and without its root. With a tree every induced edge is in the forest, so values add up exactly, and
 * the preference order composes over disjoint subtrees (see isBetterChoice).
 */
export function bestTreeSubset(component: SearchComponent): SubsetChoice {
  const n = component.positions.length;
  const adjacency: { other: number; gain: number }[][] = Array.from({ length: n }, () => []);
  for (let e = 0; e < component.eu.length; e++) {
    adjacency[component.eu[e]!]!.push({ other: component.ev[e]!, gain: component.gain[e]! });
    adjacency[component.ev[e]!]!.push({ other: component.eu[e]!, gain: component.gain[e]! });
  }
  const order: number[] = [];
  const parent = new Int32Array(n).fill(-1);
  const parentGain = new Float64Array(n);
  const seen = new Uint8Array(n);
  seen[0] = 1;
  const stack = [0];
  while (stack.length > 0) {
    const v = stack.pop()!;
    order.push(v);
    for (const { other, gain } of adjacency[v]!) {
      if (seen[other] === 1) continue;
      seen[other] = 1;
      parent[other] = v;
      parentGain[other] = gain;
      stack.push(other);
    }
  }
  const withRoot: SubsetChoice[] = component.positions.map((position, i) => ({
    value: component.weight[i]!,
    members: [position],
  }));
  const withoutRoot: SubsetChoice[] = component.positions.map(() => ({ value: 0, members: [] }));
  for (let k = order.length - 1; k > 0; k--) {
    const child = order[k]!;
    const up = parent[child]!;
    const joined = { value: withRoot[child]!.value + parentGain[child]!, members: withRoot[child]!.members };
    const underIn = isBetterChoice(joined, withoutRoot[child]!) ? joined : withoutRoot[child]!;
    const underOut = isBetterChoice(withRoot[child]!, withoutRoot[child]!)
      ? withRoot[child]!
      : withoutRoot[child]!;
    withRoot[up] = combineChoices(withRoot[up]!, underIn);
    withoutRoot[up] = combineChoices(withoutRoot[up]!, underOut);
  }
  return isBetterChoice(withRoot[0]!, withoutRoot[0]!) ? withRoot[0]! : withoutRoot[0]!;
}

/**
 * Exact branch and bound over the nodes of a component (any shape). `nonEmpty` asks for the best non-empty
 * subset (used only when every component prefers to be empty); otherwise the empty set competes with value 0.
 *
 * Exactness rests on three dominance rules, each replacing a set by one that is strictly preferred:
 * - a node with p - kappa > 1e-12, or joined to an included node by an edge with p - kappa + B > 1e-12,
 *   is included (adding it raises the objective by at least that much);
 * - a node whose p - kappa plus all its edge gains to still-possible nodes is <= 0 is excluded (adding it
 *   never raises the objective and costs a memory); not applied when it could empty a non-empty search;
 * - bounds on every T with I <= T <= I + U (I included, U undecided), the smaller of
 *   (a) f(I) + sum over u in U of max(0, p_u - kappa + all its edge gains to possible nodes), because the
 *       forest of T minus the edges touching T \ I is a forest on I, and
 *   (b) sum over T of (p - kappa + its best edge gain to a possible node) minus the smallest such gain,
 *       because rooting each tree, every non-root pays for one edge to its parent.
 *   A branch is cut when its bound is below best - 1e-12, or at most best + 1e-12 while I already has as
 *   many members as the best (every further set would then lose the tie on size).
 */
export function searchComponent(component: SearchComponent, nonEmpty: boolean): SubsetChoice | null {
  const n = component.positions.length;
  const { weight, eu, ev, gain } = component;
  const edgeCount = eu.length;
  const uf = new UnionFind(n);
  let best: SubsetChoice | null = null;

  const consider = (status: Uint8Array): number => {
    uf.reset();
    let value = 0;
    const members: number[] = [];
    for (let i = 0; i < n; i++) {
      if (status[i] !== IN) continue;
      value += weight[i]!;
      members.push(component.positions[i]!);
    }
    for (let e = 0; e < edgeCount; e++) {
      if (status[eu[e]!] === IN && status[ev[e]!] === IN && uf.union(eu[e]!, ev[e]!)) value += gain[e]!;
    }
    if (members.length > 0 || !nonEmpty) {
      const choice = { value, members };
      if (best === null || isBetterChoice(choice, best)) best = choice;
    }
    return value;
  };

  const propagateIn = (status: Uint8Array): void => {
    let changed = true;
    while (changed) {
      changed = false;
      for (let e = 0; e < edgeCount; e++) {
        const a = eu[e]!;
        const b = ev[e]!;
        if (status[a] === IN && status[b] === UNDECIDED && weight[b]! + gain[e]! > OBJECTIVE_TOLERANCE) {
          status[b] = IN;
          changed = true;
        } else if (
          status[b] === IN &&
          status[a] === UNDECIDED &&
          weight[a]! + gain[e]! > OBJECTIVE_TOLERANCE
        ) {
          status[a] = IN;
          changed = true;
        }
      }
    }
  };

  // Optimistic marginal value of each node: p - kappa + gains of its edges to non-excluded nodes; and its
  // best single such gain (what it can pay for as a non-root).
  const optimism = new Float64Array(n);
  const bestEdge = new Float64Array(n);
  const computeOptimism = (status: Uint8Array): void => {
    for (let i = 0; i < n; i++) {
      optimism[i] = weight[i]!;
      bestEdge[i] = 0;
    }
    for (let e = 0; e < edgeCount; e++) {
      const a = eu[e]!;
      const b = ev[e]!;
      if (status[a] === OUT || status[b] === OUT) continue;
      const g = gain[e]!;
      optimism[a] = optimism[a]! + g;
      optimism[b] = optimism[b]! + g;
      if (g > bestEdge[a]!) bestEdge[a] = g;
      if (g > bestEdge[b]!) bestEdge[b] = g;
    }
  };

  const peelOut = (status: Uint8Array): void => {
    if (nonEmpty && !status.includes(IN)) return;
    let changed = true;
    while (changed) {
      changed = false;
      computeOptimism(status);
      for (let i = 0; i < n; i++) {
        if (status[i] === UNDECIDED && optimism[i]! <= 0) {
          status[i] = OUT;
          changed = true;
        }
      }
    }
  };

  const visit = (status: Uint8Array): void => {
    const value = consider(status);
    computeOptimism(status);
    let boundA = value;
    let boundB = 0;
    let smallestEdge = Number.POSITIVE_INFINITY;
    let included = 0;
    let pick = -1;
    for (let i = 0; i < n; i++) {
      if (status[i] === OUT) continue;
      if (bestEdge[i]! < smallestEdge) smallestEdge = bestEdge[i]!;
      if (status[i] === IN) {
        included += 1;
        boundB += weight[i]! + bestEdge[i]!;
        continue;
      }
      const gainHere = optimism[i]!;
      if (gainHere > 0) boundA += gainHere;
      const paidHere = weight[i]! + bestEdge[i]!;
      if (paidHere > 0) boundB += paidHere;
      if (pick === -1 || gainHere > optimism[pick]!) pick = i;
    }
    if (pick === -1 || best === null) {
      if (pick !== -1) branch(status, pick);
      return;
    }
    const incumbent: SubsetChoice = best;
    // Supersets of I are non-empty, so one of their nodes is a root that pays for no edge.
    const bound = Math.min(boundA, boundB - smallestEdge);
    if (bound < incumbent.value - OBJECTIVE_TOLERANCE) return;
    if (bound <= incumbent.value + OBJECTIVE_TOLERANCE && included >= incumbent.members.length) return;
    branch(status, pick);
  };

  const branch = (status: Uint8Array, pick: number): void => {
    const include = status.slice();
    include[pick] = IN;
    propagateIn(include);
    peelOut(include);
    visit(include);
    const exclude = status.slice();
    exclude[pick] = OUT;
    peelOut(exclude);
    visit(exclude);
  };

  const start = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (weight[i]! > OBJECTIVE_TOLERANCE) start[i] = IN;
  propagateIn(start);
  peelOut(start);
  visit(start);
  return best;
}
