import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ArchiveStore } from '../../../src/store/archive-store-spec.ts';
import { openStore } from '../../../src/store/open-store.ts';
import type { MemoryRecord } from '../../../src/types/memory-record.ts';
import { CTX, expectMatchesRebuild, remove, storedPairs, upsert } from './schema-harness.ts';

/**
 * Differential test: random adds, updates (session, round, time, place, subject, headers change) and
 * deletes, singly and in batches; after EVERY step the schema edges the incremental path left in the store
 * equal the full rebuild over the stored records, type by type, and semantic_knn edges are untouched.
 */
const IDS = Array.from({ length: 14 }, (_, i) => `r${i.toString().padStart(2, '0')}`);
const BASE_MS = Date.parse('2024-05-07T10:00:00Z');
const POINTS = [
  { lat: 38.7139, lon: -9.1394 },
  { lat: 38.72, lon: -9.15 },
  { lat: 38.74, lon: -9.12 },
  { lat: 38.8, lon: -9.3 },
];

const word = fc.constantFrom('dinner', 'lisbon', 'tram', 'castle', 'museum', 'booking', 'sunset', 'alfama');
const text = fc.array(word, { maxLength: 4 }).map((words) => words.join(' '));
const capturedAt = fc.integer({ min: 0, max: 240 }).map((k) => new Date(BASE_MS + k * 30_000).toISOString());

/** A photo attached to a message or mail: its EXIF makes the record a capture too (mediaCapture). */
const attachment = fc.option(
  fc.record({ takenAt: capturedAt, point: fc.option(fc.constantFrom(...POINTS), { nil: undefined }) }),
  { nil: undefined, freq: 4 },
);

const message = fc.record({
  kind: fc.constant('message' as const),
  attachment,
  sessionId: fc.option(fc.constantFrom('s1', 's2', 's1', ''), { nil: undefined, freq: 6 }),
  roundId: fc.option(fc.constantFrom('R1', 'R2', 'R3'), { nil: undefined }),
  text,
});

const media = fc.record({
  kind: fc.constantFrom('photo' as const, 'video' as const),
  takenAt: capturedAt,
  day: fc.constantFrom('', '', '', '2024-05-08T09:00:00Z'),
  point: fc.option(fc.constantFrom(...POINTS), { nil: undefined, freq: 5 }),
  place: fc.option(fc.constantFrom('Alfama, Lisbon', 'Porto'), { nil: undefined }),
  caption: text,
  roundId: fc.option(fc.constantFrom('R1', 'R2'), { nil: undefined }),
});

const email = fc.record({
  kind: fc.constant('email' as const),
  sentDay: fc.integer({ min: 0, max: 30 }),
  subject: fc.constantFrom(
    'Team dinner plans',
    'Re: Team dinner plans',
    'Booking update',
    'Hello',
    'Lisbon trip',
  ),
  messageId: fc.option(fc.constantFrom('<m1@x>', '<m2@x>', '<m3@x>', '<m4@x>'), { nil: undefined }),
  inReplyTo: fc.option(fc.constantFrom('<m1@x>', '<m2@x>', '<m3@x>'), { nil: undefined }),
  references: fc.array(fc.constantFrom('<m1@x>', '<m2@x>', '<m4@x>'), { maxLength: 2 }),
  code: fc.option(fc.constantFrom('Booking ref ABC123', 'Order #ZX-9981'), { nil: undefined }),
  stated: fc.option(fc.constantFrom('on 2024-05-07', 'on 2024-05-08', 'on May 7, 2024 and May 8, 2024'), {
    nil: undefined,
  }),
  body: text,
  place: fc.option(fc.constantFrom('Lisbon', 'Porto'), { nil: undefined }),
  attachment,
});

const shape = fc.oneof({ weight: 2, arbitrary: message }, { weight: 2, arbitrary: media }, email);
const recordArb = fc.record({
  id: fc.constantFrom(...IDS),
  sequence: fc.integer({ min: 0, max: 12 }),
  shape,
});

type Generated = typeof recordArb extends fc.Arbitrary<infer T> ? T : never;
type Op = { op: 'upsert'; records: Generated[] } | { op: 'delete'; ids: string[] };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: recordArb.map((record) => ({ op: 'upsert' as const, records: [record] })) },
  {
    weight: 1,
    arbitrary: fc
      .uniqueArray(recordArb, { minLength: 2, maxLength: 4, selector: (r) => r.id })
      .map((records) => ({ op: 'upsert' as const, records })),
  },
  {
    weight: 2,
    arbitrary: fc
      .uniqueArray(fc.constantFrom(...IDS), { minLength: 1, maxLength: 3 })
      .map((ids) => ({ op: 'delete' as const, ids })),
  },
);

function toRecord(generated: Generated): MemoryRecord {
  const { id, sequence, shape } = generated;
  const assets: MemoryRecord['assets'] =
    shape.kind !== 'message' && shape.kind !== 'email'
      ? []
      : shape.attachment === undefined
        ? []
        : [
            {
              id: 'att',
              kind: 'image',
              exif: { takenAt: shape.attachment.takenAt, ...(shape.attachment.point ?? {}) },
            },
          ];
  const base = { id, contextId: CTX, sequence, assets };
  if (shape.kind === 'message') {
    return {
      ...base,
      kind: 'message',
      text: shape.text,
      ...(shape.sessionId === undefined ? {} : { sessionId: shape.sessionId }),
      ...(shape.roundId === undefined ? {} : { roundId: shape.roundId }),
    };
  }
  if (shape.kind === 'email') {
    const sent = new Date(Date.parse('2024-05-01T08:00:00Z') + shape.sentDay * 86_400_000).toISOString();
    const body = [shape.body, shape.code ?? '', shape.stated ?? '', shape.place ?? ''].join('\n');
    const headers = {
      ...(shape.messageId === undefined ? {} : { messageId: shape.messageId }),
      ...(shape.inReplyTo === undefined ? {} : { inReplyTo: shape.inReplyTo }),
      ...(shape.references.length === 0 ? {} : { references: shape.references }),
    };
    return {
      ...base,
      kind: 'email',
      timestamp: sent,
      text: `${shape.subject}\n\n${body}`,
      metadata: { email: { subject: shape.subject, ...headers } },
    };
  }
  const takenAt = shape.day === '' ? shape.takenAt : shape.day;
  return {
    ...base,
    kind: shape.kind,
    timestamp: takenAt,
    text: shape.caption,
    ...(shape.roundId === undefined ? {} : { roundId: shape.roundId }),
    ...(shape.point === undefined && shape.place === undefined
      ? {}
      : {
          location: { ...(shape.point ?? {}), ...(shape.place === undefined ? {} : { name: shape.place }) },
        }),
    assets: [{ id: 'a1', kind: 'image', exif: { takenAt }, derived: { captions: [shape.caption] } }],
  };
}

/** Pairs seen per type over all runs: the property is only worth something if every type shows up. */
const seen: Record<string, number> = {};

async function run(store: ArchiveStore, ops: Op[]): Promise<void> {
  const knn = new Set<string>();
  let step = 0;
  for (const op of ops) {
    step += 1;
    if (op.op === 'upsert') {
      const records = op.records.map(toRecord);
      await upsert(store, records);
      // A semantic_knn edge from each written record to the first other stored one: must survive.
      const others = (await store.listMemories(CTX, { limit: 3 })).filter(
        (r) => !records.some((w) => w.id === r.id),
      );
      if (others[0]) {
        const [a, b] = [records[0]!.id, others[0].id].sort() as [string, string];
        await store.changeEdges(CTX, [{ a, b, add: ['semantic_knn'], similarity: 0.5 }]);
        knn.add(`${a}|${b}`);
      }
    } else {
      await remove(store, op.ids);
      for (const pair of [...knn]) if (op.ids.some((id) => pair.split('|').includes(id))) knn.delete(pair);
    }
    await expectMatchesRebuild(store, `after step ${step}: ${JSON.stringify(op)}`);
    const stored = await storedPairs(store);
    expect(stored.semantic_knn).toEqual([...knn].sort());
    for (const [type, pairs] of Object.entries(stored)) seen[type] = (seen[type] ?? 0) + pairs.length;
  }
}

for (const backend of ['memory:', ':memory:']) {
  describe(`updateSchemaRelations equals the full rebuild after every step (${backend})`, () => {
    it('random adds, updates and deletes', async () => {
      for (const type of Object.keys(seen)) delete seen[type];
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 30 }), async (ops) => {
          const store = await openStore(backend);
          try {
            await run(store, ops);
          } finally {
            await store.close();
          }
        }),
        { numRuns: 60, seed: 20261130 },
      );
      for (const type of [
        'same_round',
        'consecutive_turn',
        'event_bridge',
        'same_record',
        'record_grounding',
      ]) {
        expect(seen[type], JSON.stringify(seen)).toBeGreaterThan(100);
      }
    }, 120_000);
  });
}

/** Rounds around the clique limit (32): random joins, moves and deletes cross it both ways. */
describe('same_round around the clique limit equals the full rebuild after every step', () => {
  const roundOp = fc.oneof(
    fc.record({
      op: fc.constant('upsert' as const),
      id: fc.integer({ min: 0, max: 40 }),
      sequence: fc.integer({ min: 0, max: 50 }),
      round: fc.constantFrom('R', 'R', 'R', 'Q', undefined),
    }),
    fc.record({ op: fc.constant('delete' as const), id: fc.integer({ min: 0, max: 40 }) }),
  );
  for (const backend of ['memory:', ':memory:']) {
    it(`random round changes (${backend})`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(roundOp, { minLength: 5, maxLength: 25 }), async (ops) => {
          const store = await openStore(backend);
          try {
            const seed = Array.from({ length: 32 }, (_, i) => roundMember(i, i, 'R'));
            await upsert(store, seed);
            for (const op of ops) {
              if (op.op === 'upsert') await upsert(store, [roundMember(op.id, op.sequence, op.round)]);
              else await remove(store, [`q${op.id}`]);
              await expectMatchesRebuild(store, JSON.stringify(op));
            }
          } finally {
            await store.close();
          }
        }),
        { numRuns: 20, seed: 32 },
      );
    }, 120_000);
  }
});

function roundMember(i: number, sequence: number, round: string | undefined): MemoryRecord {
  return {
    id: `q${i}`,
    contextId: CTX,
    kind: 'message',
    sequence,
    text: '',
    assets: [],
    ...(round === undefined ? {} : { roundId: round }),
  };
}
