import type { MemoryRecord } from '../../types/memory-record.ts';
import {
  detectedTarget,
  explicitSupersedes,
  SUPERSEDES_RULE,
  type SupersessionFacts,
  supersessionFacts,
  supersessionThread,
} from '../relations/supersedes.ts';
import type { ChainPosition, KeyLookup } from './key-lookup.ts';
import { KEY } from './relation-keys.ts';
import type { RecordChange, TypeDelta } from './type-delta.ts';

const WINDOW = SUPERSEDES_RULE.window;

/**
 * supersedes (src/digest/relations/supersedes.ts): a memory's detected target is decided by the WINDOW
 * memories right before it in its thread, so a change at place P (old or new, in the old or new thread)
 * can only change the decisions of the memory itself and of the WINDOW memories after P (the ones whose
 * window holds P). Those are dirty. Their pairs after the change: each one's own target, and every memory
 * within WINDOW after it that now targets it; so the thread is read from WINDOW before P to 2 x WINDOW after
 * P (adjacency reads on the thread key), and every decision in that slice is made by the same
 * `detectedTarget` as the full rebuild. Explicit pairs of each dirty memory: the ids it lists (one
 * getMemories for existence) and the memories listing it (the `sre:` key).
 * Cost per changed place: at most 3 x WINDOW adjacency reads, plus two key reads per dirty memory.
 */
export async function supersedesDelta(
  lookup: KeyLookup,
  changes: readonly RecordChange[],
  delta: TypeDelta,
): Promise<void> {
  const facts = new Map<string, SupersessionFacts>();
  const factsOf = (record: MemoryRecord): SupersessionFacts => {
    let found = facts.get(record.id);
    if (!found) {
      found = supersessionFacts(record);
      facts.set(record.id, found);
    }
    return found;
  };
  const dirty = new Map<string, MemoryRecord>();
  /** Detected target of each memory whose window was read whole (null: none). */
  const targets = new Map<string, string | null>();

  const places = new Map<string, { thread: string; position: ChainPosition; record?: MemoryRecord }>();
  for (const { before, after } of changes) {
    if (after) dirty.set(after.id, after);
    for (const [record, stored] of [
      [before, false],
      [after, true],
    ] as const) {
      const thread = record === undefined ? undefined : supersessionThread(record);
      if (record === undefined || thread === undefined) continue;
      const id = `${thread}\u0000${record.sequence}\u0000${record.id}`;
      const place = { thread, position: { sequence: record.sequence, id: record.id } };
      places.set(id, stored ? { ...place, record } : (places.get(id) ?? place));
    }
  }

  // Every place's walks are read together (a networked store answers them in one round trip; a bulk
  // import of a thousand memories made two round trips per memory here).
  const slices = await Promise.all(
    [...places.values()].map(({ thread, position }) =>
      Promise.all([
        lookup.walk(KEY.supersedesThread + thread, position, 'before', WINDOW),
        lookup.walk(KEY.supersedesThread + thread, position, 'after', 2 * WINDOW),
      ]),
    ),
  );
  for (const [at, { record }] of [...places.values()].entries()) {
    const [back, forward] = slices[at]!;
    for (const memory of forward.slice(0, WINDOW)) dirty.set(memory.id, memory);
    const ordered = [...back.reverse(), ...(record ? [record] : []), ...forward];
    const startComplete = back.length < WINDOW;
    for (let i = 0; i < ordered.length; i++) {
      if (i < WINDOW && !startComplete) continue;
      const newer = ordered[i]!;
      if (targets.has(newer.id)) continue;
      const window = ordered
        .slice(Math.max(0, i - WINDOW), i)
        .reverse()
        .map(factsOf);
      targets.set(newer.id, detectedTarget(factsOf(newer), window) ?? null);
    }
  }

  for (const [newer, target] of targets) {
    if (target !== null && (dirty.has(newer) || dirty.has(target))) delta.pairs.add(newer, target);
  }
  const listed = new Set<string>();
  for (const memory of dirty.values()) for (const id of explicitSupersedes(memory)) listed.add(id);
  const present = new Set(
    (await lookup.store.getMemories(lookup.contextId, [...listed])).map((memory) => memory.id),
  );
  // The listers of every dirty memory, read together (KeyLookup caches them for the loop below).
  await Promise.all([...dirty.values()].map((memory) => lookup.all(KEY.supersedesTarget + memory.id)));
  for (const memory of dirty.values()) {
    delta.dirty.add(memory.id);
    for (const id of explicitSupersedes(memory)) if (present.has(id)) delta.pairs.add(memory.id, id);
    for (const lister of await lookup.all(KEY.supersedesTarget + memory.id)) {
      if (explicitSupersedes(lister).includes(memory.id)) delta.pairs.add(lister.id, memory.id);
    }
  }
}
