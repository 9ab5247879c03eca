import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../../src/store/open-store.ts';
import type { MemoryRecord } from '../../../src/types/memory-record.ts';
import { CTX, expectMatchesRebuild, remove, storedPairs, upsert } from './schema-harness.ts';

/**
 * Differential test of the supersedes relation: random adds, PATCH-like updates (text, thread, sequence,
 * explicit list change) and deletes in a few threads, with texts drawn so that corrections, restatements
 * and unrelated notes all occur; after EVERY step the incremental edges equal the full rebuild. Threads
 * longer than the detection window (8) make window shifts happen too.
 */
const IDS = Array.from({ length: 24 }, (_, i) => `n${i.toString().padStart(2, '0')}`);
const TEXTS = [
  'Dentist appointment on Monday June 3',
  'Update: dentist appointment moved to Tuesday June 4',
  'Actually the dentist appointment is on Thursday June 6',
  'Dentist appointment on Monday June 3, confirmed',
  'Was the dentist appointment moved to Friday?',
  'Groceries: oat milk and coffee',
  'Team dinner at 7pm at Rosa',
  'Update: team dinner moved to 8pm',
  'Now the team dinner starts at 9pm at Rosa',
];
const noteArb = fc.record({
  id: fc.constantFrom(...IDS),
  sequence: fc.integer({ min: 0, max: 30 }),
  text: fc.constantFrom(...TEXTS),
  thread: fc.constantFrom('s1', 's1', 's1', 's2', undefined),
  explicit: fc.option(fc.uniqueArray(fc.constantFrom(...IDS), { maxLength: 2 }), { nil: undefined, freq: 5 }),
  day: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
});
type Note = typeof noteArb extends fc.Arbitrary<infer T> ? T : never;
type Op = { op: 'upsert'; notes: Note[] } | { op: 'delete'; ids: string[] };
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: noteArb.map((note) => ({ op: 'upsert' as const, notes: [note] })) },
  {
    weight: 1,
    arbitrary: fc
      .uniqueArray(noteArb, { minLength: 2, maxLength: 5, selector: (n) => n.id })
      .map((notes) => ({ op: 'upsert' as const, notes })),
  },
  {
    weight: 2,
    arbitrary: fc
      .uniqueArray(fc.constantFrom(...IDS), { minLength: 1, maxLength: 2 })
      .map((ids) => ({ op: 'delete' as const, ids })),
  },
);

function toRecord(note: Note): MemoryRecord {
  return {
    id: note.id,
    contextId: CTX,
    kind: 'note',
    sequence: note.sequence,
    text: note.text,
    assets: [],
    ...(note.thread === undefined ? {} : { sessionId: note.thread }),
    ...(note.explicit === undefined ? {} : { supersedes: note.explicit }),
    ...(note.day === undefined ? {} : { timestamp: `2024-05-0${note.day + 1}T10:00:00Z` }),
  };
}

for (const backend of ['memory:', ':memory:']) {
  describe(`supersedes: incremental equals the full rebuild after every step (${backend})`, () => {
    it('random adds, updates and deletes', async () => {
      let linked = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 40 }), async (ops) => {
          const store = await openStore(backend);
          try {
            for (const [step, op] of ops.entries()) {
              if (op.op === 'upsert') await upsert(store, op.notes.map(toRecord));
              else await remove(store, op.ids);
              await expectMatchesRebuild(store, `step ${step}: ${JSON.stringify(op)}`);
              linked += (await storedPairs(store)).supersedes.length;
            }
          } finally {
            await store.close();
          }
        }),
        { numRuns: 60, seed: 20261130 },
      );
      // The property is only worth something if many supersedes edges came and went.
      expect(linked).toBeGreaterThan(200);
    }, 120_000);
  });
}
