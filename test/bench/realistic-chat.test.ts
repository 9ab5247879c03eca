import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { chatRecords } from '../../bench/support/realistic-chat.ts';
import { ingestItems } from '../../src/digest/ingest.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { toMemoryRecord } from '../../src/schemas/record-schema.ts';

/** One sha256 over the records' JSON: the archive bench:scale has measured since round 10 must not move. */
function digest(records: Iterable<unknown>): string {
  const hash = createHash('sha256');
  for (const record of records) hash.update(`${JSON.stringify(record)}\n`);
  return hash.digest('hex');
}

describe('realistic chat generator (bench:scale, bench:digest)', () => {
  it('keeps the rounds shape byte for byte: the default and an explicit shape give the same archive', () => {
    const byDefault = [...chatRecords({ contextId: 'c', count: 600, seed: 11 })];
    expect(digest([...chatRecords({ contextId: 'c', count: 600, seed: 11, shape: 'rounds' })])).toBe(
      digest(byDefault),
    );
    // Pinned from the generator before the two-person shape was added (round 42): a change here changes every bench:scale row.
    expect(digest(byDefault)).toBe('b96b83cdbff8aa179998a0ee13e94afd01b0007c222de915c7c71daf5788acec');
    expect(byDefault.every((r) => r.roundId !== undefined)).toBe(true);
  });

  it('writes two named people without rounds, one date a session, runs of one speaker', () => {
    const records = [...chatRecords({ contextId: 'c', count: 2400, seed: 11, shape: 'two-person' })];
    for (const record of records) {
      expect(toMemoryRecord(record, { contextId: 'c', sequence: record.sequence! }).ok).toBe(true);
    }
    expect(records.some((r) => r.roundId !== undefined)).toBe(false);
    expect(new Set(records.map((r) => r.speaker))).toEqual(new Set(['Maya', 'Theo']));
    expect(records.every((r) => r.role === r.speaker)).toBe(true);
    const datesBySession = new Map<string, Set<string>>();
    for (const r of records) {
      const dates = datesBySession.get(r.sessionId!) ?? new Set<string>();
      dates.add(r.timestamp!);
      datesBySession.set(r.sessionId!, dates);
    }
    expect([...datesBySession.values()].every((dates) => dates.size === 1)).toBe(true);
    expect(datesBySession.size).toBe(100);
    let switches = 0;
    let pairs = 0;
    for (let i = 1; i < records.length; i++) {
      if (records[i]!.sessionId !== records[i - 1]!.sessionId) continue;
      pairs++;
      if (records[i]!.speaker !== records[i - 1]!.speaker) switches++;
    }
    // A turn changes speaker with probability 0.6: 2,300 pairs put the share within 0.55-0.65.
    expect(switches / pairs).toBeGreaterThan(0.55);
    expect(switches / pairs).toBeLessThan(0.65);
    expect(records.filter((r) => r.assets.length > 0).length).toBeGreaterThan(20);
  });

  it('extends an archive with `start` as if it had been generated whole', () => {
    const whole = [...chatRecords({ contextId: 'c', count: 60, seed: 7, shape: 'two-person' })];
    const tail = [...chatRecords({ contextId: 'c', count: 20, seed: 7, shape: 'two-person', start: 40 })];
    expect(tail.map((r) => [r.id, r.sessionId, r.speaker, r.timestamp])).toEqual(
      whole.slice(40).map((r) => [r.id, r.sessionId, r.speaker, r.timestamp]),
    );
  });

  it('digests a two-person chat into turn relations, with no round relations', async () => {
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      const items = [...chatRecords({ contextId: 'chat', count: 480, seed: 3, shape: 'two-person' })].map(
        (record) => ({ type: 'record' as const, record, source: { file: 'generated' } }),
      );
      await ingestItems(gm.store, items);
      const counts = await gm.store.countEdges('chat');
      expect(counts.same_round).toBe(0);
      // 20 sessions of 24 turns: 23 adjacent pairs each.
      expect(counts.consecutive_turn).toBe(20 * 23);
      expect(counts.semantic_knn).toBeGreaterThan(0);
    } finally {
      await gm.close();
    }
  });
});
