import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildRelations } from '../../../src/digest/build-relations.ts';
import { backfillRelationKeys } from '../../../src/digest/incremental/backfill-relation-keys.ts';
import { updateSchemaRelations } from '../../../src/digest/incremental/update-schema-relations.ts';
import type { ArchiveStore } from '../../../src/store/archive-store-spec.ts';
import { openStore } from '../../../src/store/open-store.ts';
import type { MemoryRecord } from '../../../src/types/memory-record.ts';
import { makeEmail, makePhoto, makeRecord } from '../relations/make-record.ts';
import { CTX, expectMatchesRebuild, remove, storedPairs, upsert } from './schema-harness.ts';

const turn = (id: string, sequence: number, session = 's1', round?: string): MemoryRecord =>
  makeRecord(id, { sequence, sessionId: session, ...(round === undefined ? {} : { roundId: round }) });

for (const backend of ['memory:', ':memory:']) {
  describe(`updateSchemaRelations, hand-made cases (${backend})`, () => {
    let store: ArchiveStore;
    beforeEach(async () => {
      store = await openStore(backend);
    });
    afterEach(async () => {
      await store.close();
    });

    it('deleting the middle turn re-links the turns around it; semantic_knn stays', async () => {
      await upsert(store, [turn('t1', 1), turn('t2', 2), turn('t3', 3)]);
      await store.changeEdges(CTX, [{ a: 't1', b: 't2', add: ['semantic_knn'], similarity: 0.4 }]);
      expect((await storedPairs(store)).consecutive_turn).toEqual(['t1|t2', 't2|t3']);
      const result = await remove(store, ['t2']);
      expect((await storedPairs(store)).consecutive_turn).toEqual(['t1|t3']);
      expect(result.added.consecutive_turn).toBe(1);
      expect(result.removed.consecutive_turn).toBe(0); // the store dropped t2's edges with t2
      // An insert between two turns replaces their link; moving a turn to another session re-links both.
      await upsert(store, [turn('t2b', 2)]);
      expect((await storedPairs(store)).consecutive_turn).toEqual(['t1|t2b', 't2b|t3']);
      await upsert(store, [turn('t2b', 2, 's2')]);
      expect((await storedPairs(store)).consecutive_turn).toEqual(['t1|t3']);
      await upsert(store, [turn('t1', 1), turn('t3', 3)]); // unchanged: nothing to do
      await expectMatchesRebuild(store);
      await store.changeEdges(CTX, [{ a: 't1', b: 't3', add: ['semantic_knn'], similarity: 0.7 }]);
      await remove(store, ['t3']);
      await upsert(store, [turn('t4', 4)]);
      expect((await storedPairs(store)).consecutive_turn).toEqual(['t1|t4']);
      expect((await store.neighbors(CTX, ['t1'])).find((e) => e.b === 't4')?.types).toEqual([
        'consecutive_turn',
      ]);
    });

    it('a round crossing 32 members turns from a clique into a chain and back', async () => {
      const members = Array.from({ length: 32 }, (_, i) =>
        turn(`m${String(i).padStart(2, '0')}`, i, 's', 'R'),
      );
      await upsert(store, members);
      expect((await storedPairs(store)).same_round).toHaveLength((32 * 31) / 2);
      await upsert(store, [turn('m99', 99, 's', 'R')]);
      expect((await storedPairs(store)).same_round).toHaveLength(32);
      await upsert(store, [turn('m50', 15.5, 's', 'R')]); // chain mode before and after: local change
      await expectMatchesRebuild(store);
      await remove(store, ['m05']);
      await expectMatchesRebuild(store);
      await remove(store, ['m50']);
      expect((await storedPairs(store)).same_round).toHaveLength((32 * 31) / 2);
      await expectMatchesRebuild(store);
    });

    it('a reference-code group crossing 50 emails drops its pairs, and gets them back', async () => {
      const mail = (i: number) =>
        makeEmail(
          `e${String(i).padStart(2, '0')}`,
          `2024-03-${String((i % 27) + 1).padStart(2, '0')}T09:00:00Z`,
          `Note ${i}`,
          `Booking ref ABC123 item ${i}`,
        );
      for (let i = 0; i < 50; i++) await upsert(store, [{ ...mail(i), sequence: i }]);
      expect((await storedPairs(store)).same_record).toHaveLength((50 * 49) / 2);
      const result = await upsert(store, [{ ...mail(50), sequence: 50 }]);
      expect(result.removed.same_record).toBe((50 * 49) / 2);
      expect((await storedPairs(store)).same_record).toEqual([]);
      await remove(store, ['e07']);
      expect((await storedPairs(store)).same_record).toHaveLength((50 * 49) / 2);
      await expectMatchesRebuild(store);
    });

    it('Message-ID, In-Reply-To and subject groups crossing 50 emails drop their pairs, and get them back', async () => {
      // Round 55: each of these rules linked every pair of its group (1,000 replies to one parent in one add:
      // 499,500 edges). Over 50 they link none; each reply keeps its link to the parent.
      const day = (i: number) => `2024-03-${String((i % 9) + 1).padStart(2, '0')}T09:00:00Z`;
      const shapes = {
        copies: (i: number) => makeEmail(`c${i}`, day(i), `Copy ${i}`, '', { messageId: '<same@x>' }),
        siblings: (i: number) =>
          makeEmail(`r${i}`, day(i), `Reply ${i}`, '', { messageId: `<r${i}@x>`, inReplyTo: '<parent@x>' }),
        subject: (i: number) => makeEmail(`s${i}`, day(i), 'Quarterly planning meeting'),
      };
      for (const [name, mail] of Object.entries(shapes)) {
        const id = (i: number) => mail(i).id;
        const group = Array.from({ length: 50 }, (_, i) => ({ ...mail(i), sequence: i }));
        await upsert(store, group);
        const parent = {
          ...makeEmail('parent', day(0), 'Kickoff', '', { messageId: '<parent@x>' }),
          sequence: 99,
        };
        if (name === 'siblings') await upsert(store, [parent]);
        const stars = name === 'siblings' ? 50 : 0;
        expect((await storedPairs(store)).same_record, name).toHaveLength((50 * 49) / 2 + stars);
        await upsert(store, [{ ...mail(50), sequence: 50 }]);
        expect((await storedPairs(store)).same_record, name).toHaveLength(name === 'siblings' ? 51 : 0);
        await expectMatchesRebuild(store, `${name}: 51`);
        await remove(store, [id(7)]);
        expect((await storedPairs(store)).same_record, name).toHaveLength((50 * 49) / 2 + stars);
        await expectMatchesRebuild(store, `${name}: 50 again`);
        await remove(store, [...group.map((m) => m.id), id(50), 'parent']);
        expect((await storedPairs(store)).same_record, name).toEqual([]);
      }
    });

    it('a stated-date group crossing 50 emails drops its date pairs only', async () => {
      for (let i = 0; i < 51; i++) {
        await upsert(store, [
          {
            ...makeEmail(
              `d${String(i).padStart(2, '0')}`,
              '2024-03-01T09:00:00Z',
              `Dinner party ${i}`,
              'See you on 2024-03-09',
            ),
            sequence: i,
          },
        ]);
        await expectMatchesRebuild(store, `mail ${i}`);
      }
      expect((await storedPairs(store)).same_record).toEqual([]);
    });

    it('event_bridge: one capture re-decides the degree cap along the whole chain', async () => {
      // Captures 10 min apart at one place: each pair within 1 h is a candidate, the cap keeps the nearest.
      const at = (minute: number) =>
        new Date(Date.parse('2024-05-07T10:00:00Z') + minute * 60_000).toISOString();
      for (const [i, minute] of [0, 10, 20, 30, 40, 50, 60, 70].entries()) {
        await upsert(store, [{ ...makePhoto(`p${i}`, at(minute), 38.71, -9.14), sequence: i }]);
      }
      const chainBefore = (await storedPairs(store)).event_bridge;
      // A capture at 15 min takes the nearest slots and shifts the greedy choice down the chain.
      await upsert(store, [{ ...makePhoto('px', at(15), 38.71, -9.14), sequence: 20 }]);
      await expectMatchesRebuild(store);
      expect((await storedPairs(store)).event_bridge).not.toEqual(chainBefore);
      // A far capture (2 h later) is its own chain; moving px there restores the first chain exactly.
      await upsert(store, [{ ...makePhoto('px', at(200), 38.71, -9.14), sequence: 20 }]);
      expect((await storedPairs(store)).event_bridge).toEqual(chainBefore);
      await remove(store, ['p3']); // splits the chain 30 min .. : both halves recomputed
      await expectMatchesRebuild(store);
    });

    it('record_grounding re-ranks every mail stating a day when media of that day changes', async () => {
      await upsert(store, [
        {
          ...makeEmail(
            'mail',
            '2024-05-01T09:00:00Z',
            'Lisbon trip',
            'Dinner in Alfama, Lisbon on 2024-05-07',
          ),
          sequence: 0,
        },
      ]);
      const photos = Array.from({ length: 22 }, (_, i) => ({
        ...makePhoto(`ph${String(i).padStart(2, '0')}`, '2024-05-07T20:00:00Z', undefined, undefined, {
          caption: i < 3 ? 'dinner alfama lisbon' : 'lisbon street',
          place: 'Alfama, Lisbon',
        }),
        sequence: i + 1,
      }));
      await upsert(store, photos);
      expect((await storedPairs(store)).record_grounding).toHaveLength(20);
      await upsert(store, [
        {
          ...photos[21]!,
          assets: [
            {
              id: 'a1',
              kind: 'image',
              exif: { takenAt: '2024-05-07T20:00:00Z' },
              derived: { captions: ['dinner alfama lisbon trip'] },
            },
          ],
        },
      ]);
      await expectMatchesRebuild(store);
      expect((await storedPairs(store)).record_grounding).toContain('mail|ph21');
    });

    it('rejects records of another context and ids named twice (INVALID_INPUT)', async () => {
      const foreign = { ...turn('x', 1), contextId: 'other' };
      await expect(
        updateSchemaRelations(store, CTX, { upserted: [{ after: foreign }], removed: [] }),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      await expect(
        updateSchemaRelations(store, CTX, { upserted: [{ after: turn('x', 1) }], removed: [turn('x', 1)] }),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    });
  });
}

describe('backfillRelationKeys', () => {
  it('keys a store written without keys, leaving views alone, so the incremental path works on it', async () => {
    const store = await openStore(':memory:');
    const records = [turn('t1', 1), turn('t2', 2), turn('t3', 3)];
    await store.writeMemories(
      CTX,
      records.map((record) => ({
        record,
        views: [{ memoryId: record.id, kind: 'text' as const, key: 'main', text: 'hello' }],
        contentHash: JSON.stringify(record),
      })),
    );
    expect(await store.findByKeys(CTX, ['turn:s1'])).toEqual([]);
    expect(await backfillRelationKeys(store, CTX)).toBe(3);
    expect((await store.findByKeys(CTX, ['turn:s1'])).map((r) => r.id)).toEqual(['t1', 't2', 't3']);
    expect(await store.getViews(CTX, ['t2'])).toHaveLength(1);
    await buildRelations(store, CTX);
    await upsert(store, [turn('t4', 4)]);
    expect((await storedPairs(store)).consecutive_turn).toEqual(['t1|t2', 't2|t3', 't3|t4']);
    await expectMatchesRebuild(store);
    await store.close();
  });
});
