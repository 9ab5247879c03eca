/**
 * Incremental schema relations benchmark: the cost of updateSchemaRelations for single writes into contexts
 * of N records (default 10k and 100k), next to the schema part of a full rebuild (load + the 5 rules).
 *
 *   npx tsx bench/schema-relations-bench.ts [--sizes 10000,100000] [--backend sqlite|memory]
 *
 * The generated context: chat sessions of 20-60 messages in user/assistant rounds (80%), photo bursts with
 * capture times and coordinates (12%), emails in threads with subjects, reference codes and stated dates
 * (8%). Reads are store calls made by the update (findByKeys, adjacentByKey, findKeyRange, neighbors);
 * times are wall-clock milliseconds, median of the repeats.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { relationKeys } from '../src/digest/incremental/relation-keys.ts';
import {
  type SchemaDelta,
  updateSchemaRelations,
} from '../src/digest/incremental/update-schema-relations.ts';
import { consecutiveTurnPairs } from '../src/digest/relations/consecutive-turn.ts';
import { eventBridgePairs } from '../src/digest/relations/event-bridge.ts';
import { mergeRelationEdges } from '../src/digest/relations/merge-relation-edges.ts';
import { recordGroundingPairs } from '../src/digest/relations/record-grounding.ts';
import { sameRecordPairs } from '../src/digest/relations/same-record.ts';
import { sameRoundPairs } from '../src/digest/relations/same-round.ts';
import { mulberry32 } from '../src/digest/semantic/seeded-random.ts';
import type { ArchiveStore } from '../src/store/archive-store-spec.ts';
import { openStore } from '../src/store/open-store.ts';
import type { MemoryRecord } from '../src/types/memory-record.ts';
import { SCHEMA_RELATION_TYPES } from '../src/types/relation.ts';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const at = args.indexOf(`--${name}`);
  return at < 0 ? undefined : args[at + 1];
};
const sizes = (flag('sizes') ?? '10000,100000').split(',').map(Number);
const backend = flag('backend') ?? 'sqlite';
const CTX = 'bench';
const REPEATS = 5;
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-schema-bench-'));

for (const n of sizes) {
  const records = generate(n, 7);
  const store = await openStore(backend === 'memory' ? 'memory:' : join(dir, `bench-${n}.db`));
  for (let at = 0; at < records.length; at += 5000) {
    await store.writeMemories(CTX, records.slice(at, at + 5000).map(toWrite));
  }
  const fullStarted = performance.now();
  const loaded = await store.listMemories(CTX);
  const schema = {
    same_round: sameRoundPairs(loaded),
    consecutive_turn: consecutiveTurnPairs(loaded),
    event_bridge: eventBridgePairs(loaded),
    same_record: sameRecordPairs(loaded),
    record_grounding: recordGroundingPairs(loaded),
  };
  const fullMs = performance.now() - fullStarted;
  const edges = mergeRelationEdges(CTX, schema, []);
  await store.replaceEdges(CTX, SCHEMA_RELATION_TYPES, edges);
  console.log(
    `${backend} n=${n}: ${edges.length} schema edges; full schema rebuild (load + 5 rules, no write) ${fullMs.toFixed(0)} ms`,
  );

  const last = records[records.length - 1]!;
  const lastMessage = records.findLast((r) => r.kind === 'message')!;
  const messages = records.filter((r) => r.kind === 'message');
  const at = Math.floor(messages.length / 3);
  const middle = messages.findIndex(
    (r, i) =>
      i >= at && messages[i - 1]?.sessionId === r.sessionId && messages[i + 1]?.sessionId === r.sessionId,
  );
  const middleTurn = messages[middle]!;
  const movedTurn = messages[middle + 4]!;
  const photo = records.findLast((r) => r.kind === 'photo')!;
  const mail = records.findLast((r) => r.kind === 'email')!;
  let next = last.sequence + 1;
  const fresh = (record: MemoryRecord): MemoryRecord => ({ ...record, id: `new-${next}`, sequence: next++ });
  const cases: Array<[string, number, () => SchemaDelta]> = [
    [
      'add a message to a session',
      REPEATS,
      () => ({ upserted: [{ after: fresh(lastMessage) }], removed: [] }),
    ],
    [
      'add a photo into a burst',
      REPEATS,
      () => {
        // 2 to 10 minutes after the burst's last capture, at the same place.
        const takenAt = new Date(Date.parse(photo.timestamp!) + (next % 5) * 120_000 + 120_000).toISOString();
        const record = { ...fresh(photo), timestamp: takenAt };
        record.assets = [{ ...photo.assets[0]!, exif: { takenAt } }];
        return { upserted: [{ after: record }], removed: [] };
      },
    ],
    [
      'add an email to a thread',
      REPEATS,
      () => {
        const record = fresh(mail);
        const headers = record.metadata!.email as Record<string, unknown>;
        record.metadata = { email: { ...headers, messageId: `<${record.id}@x>` } };
        return { upserted: [{ after: record }], removed: [] };
      },
    ],
    ['delete a middle turn', 1, () => ({ upserted: [], removed: [middleTurn] })],
    [
      'move a turn to another session',
      1,
      () => ({ upserted: [{ before: movedTurn, after: { ...movedTurn, sessionId: 's1' } }], removed: [] }),
    ],
  ];
  for (const [name, repeats, makeDelta] of cases) {
    const times: number[] = [];
    let reads = 0;
    let changed = 0;
    for (let i = 0; i < repeats; i++) {
      const delta = makeDelta();
      const counted = countingStore(store);
      const started = performance.now();
      if (delta.upserted.length > 0)
        await store.writeMemories(
          CTX,
          delta.upserted.map((u) => toWrite(u.after)),
        );
      for (const record of delta.removed) await store.deleteMemory(CTX, record.id);
      const result = await updateSchemaRelations(counted.store, CTX, delta);
      times.push(performance.now() - started);
      reads = counted.reads();
      changed = [...Object.values(result.added), ...Object.values(result.removed)].reduce((x, y) => x + y, 0);
    }
    times.sort((x, y) => x - y);
    console.log(
      `  ${name}: ${times[Math.floor(times.length / 2)]!.toFixed(2)} ms (write + update), ` +
        `${reads} store reads, ${changed} pair changes`,
    );
  }
  await store.close();
}
rmSync(dir, { recursive: true, force: true });

/** Wraps the store so the update's read calls are counted (its write is one changeEdges call). */
function countingStore(store: ArchiveStore): { store: ArchiveStore; reads: () => number } {
  let reads = 0;
  const counted = new Set(['findByKeys', 'adjacentByKey', 'findKeyRange', 'neighbors', 'getMemories']);
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...callArgs: unknown[]) => {
        if (counted.has(String(property))) reads += 1;
        return value.apply(target, callArgs);
      };
    },
  });
  return { store: proxy, reads: () => reads };
}

function toWrite(record: MemoryRecord) {
  return { record, views: [], contentHash: JSON.stringify(record), keys: relationKeys(record) };
}

/** A context shaped like a personal archive: sessions with rounds, photo bursts, email threads. */
function generate(n: number, seed: number): MemoryRecord[] {
  const rand = mulberry32(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const words = [
    'dinner',
    'lisbon',
    'trip',
    'museum',
    'booking',
    'hotel',
    'train',
    'beach',
    'concert',
    'party',
  ];
  const text = (k: number) => Array.from({ length: k }, () => pick(words)).join(' ');
  const out: MemoryRecord[] = [];
  let clock = Date.parse('2022-01-01T08:00:00Z');
  let session = 0;
  let thread = 0;
  while (out.length < n) {
    const roll = rand();
    clock += Math.floor(rand() * 6 * 3_600_000);
    if (roll < 0.8) {
      session += 1;
      const length = 20 + Math.floor(rand() * 41);
      for (let i = 0; i < length && out.length < n; i++) {
        out.push({
          id: `msg-${out.length}`,
          contextId: CTX,
          kind: 'message',
          sequence: out.length,
          sessionId: `s${session}`,
          roundId: `s${session}:r${Math.floor(i / 2)}`,
          role: i % 2 === 0 ? 'user' : 'assistant',
          timestamp: new Date(clock + i * 30_000).toISOString(),
          text: text(8),
          assets: [],
        });
      }
    } else if (roll < 0.92) {
      const burst = 3 + Math.floor(rand() * 15);
      const lat = 38.7 + rand() * 0.05;
      const lon = -9.14 + rand() * 0.05;
      for (let i = 0; i < burst && out.length < n; i++) {
        const takenAt = new Date(clock + i * (60_000 + Math.floor(rand() * 900_000))).toISOString();
        out.push({
          id: `photo-${out.length}`,
          contextId: CTX,
          kind: 'photo',
          sequence: out.length,
          timestamp: takenAt,
          location: { lat, lon, name: 'Alfama, Lisbon' },
          text: '',
          assets: [{ id: 'a', kind: 'image', exif: { takenAt }, derived: { captions: [text(5)] } }],
        });
      }
    } else {
      thread += 1;
      const length = 1 + Math.floor(rand() * 5);
      const day = new Date(clock + 5 * 86_400_000).toISOString().slice(0, 10);
      for (let i = 0; i < length && out.length < n; i++) {
        const subject = `${i === 0 ? '' : 'Re: '}Trip plan ${thread % 500} ${pick(words)}`;
        out.push({
          id: `mail-${out.length}`,
          contextId: CTX,
          kind: 'email',
          sequence: out.length,
          timestamp: new Date(clock + i * 3_600_000).toISOString(),
          text: `${subject}\n\n${text(12)} booking ref BK${thread}X on ${day}`,
          assets: [],
          metadata: {
            email: {
              subject,
              messageId: `<t${thread}.${i}@x>`,
              ...(i === 0 ? {} : { inReplyTo: `<t${thread}.${i - 1}@x>`, references: [`<t${thread}.0@x>`] }),
            },
          },
        });
      }
    }
  }
  return out;
}
