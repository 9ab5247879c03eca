import { OBJECTIVE_TOLERANCE } from './structural-gain.ts';

/** A candidate answer of the refinement: its objective and its members as ascending proposal positions. */
export interface SubsetChoice {
  value: number;
  members: number[];
}

/**
 * The refinement's preference order (paper eq. 13 and its tie rule): higher objective; within 1e-12,
 * fewer memories; then earlier proposal positions, i.e. the lexicographically smaller sorted position list.
 * For sets of equal size that is the set holding the smallest element of the symmetric difference, so the
 * order composes over disjoint parts, which is what lets the component decomposition reproduce it exactly.
 */
export function isBetterChoice(a: SubsetChoice, b: SubsetChoice): boolean {
  if (a.value > b.value + OBJECTIVE_TOLERANCE) return true;
  if (b.value > a.value + OBJECTIVE_TOLERANCE) return false;
  if (a.members.length !== b.members.length) return a.members.length < b.members.length;
  for (let i = 0; i < a.members.length; i++) {
    const x = a.members[i]!;
    const y = b.members[i]!;
    if (x !== y) return x < y;
  }
  return false;
}

/** Union of two choices over disjoint parts. */
export function combineChoices(a: SubsetChoice, b: SubsetChoice): SubsetChoice {
  return { value: a.value + b.value, members: mergeSorted(a.members, b.members) };
}

function mergeSorted(a: number[], b: number[]): number[] {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]! < b[j]!)) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}
