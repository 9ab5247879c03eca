import { describe, expect, it } from 'vitest';
import { relationKeys } from '../../../src/digest/incremental/relation-keys.ts';
import {
  KEYS_VERSION_META_PREFIX,
  RELATION_KEYS_VERSION,
  updateRelations,
} from '../../../src/digest/update-relations.ts';
import { openStore } from '../../../src/store/open-store.ts';
import type { MemoryRecord } from '../../../src/types/memory-record.ts';

const note = (id: string, sequence: number, text: string): MemoryRecord => ({
  id,
  contextId: 'ctx',
  kind: 'note',
  sequence,
  text,
  assets: [],
});

describe.each(['memory:', ':memory:'])(
  'relation keys version 2 (supersedes keys) on an older archive (%s)',
  (db) => {
    it('backfills keys and rebuilds once, then stays incremental', async () => {
      const store = await openStore(db);
      try {
        // An archive written before the supersedes keys: its records carry no sup:/sre: keys.
        const old = note('appt', 1, 'Dentist appointment on Monday June 3');
        await store.writeMemories('ctx', [{ record: old, views: [], contentHash: 'h1', keys: [] }]);
        const status = await store.relationWorkStatus('ctx');
        await store.clearRelationWork('ctx', { through: status.lastSeq! });
        expect(await store.findByKeys('ctx', ['sup:u:'])).toEqual([]);

        const moved = note('moved', 2, 'Update: dentist appointment moved to Tuesday June 4');
        await store.writeMemories('ctx', [
          { record: moved, views: [], contentHash: 'h2', keys: relationKeys(moved) },
        ]);
        expect((await updateRelations(store, 'ctx')).mode).toBe('rebuild');
        expect((await store.findByKeys('ctx', ['sup:u:'])).map((r) => r.id)).toEqual(['appt', 'moved']);
        expect(await store.getMeta(`${KEYS_VERSION_META_PREFIX}ctx`)).toBe(RELATION_KEYS_VERSION);
        const edges = (await store.neighbors('ctx', ['moved'])).filter((e) => e.types.includes('supersedes'));
        expect(edges.map((e) => `${e.a}|${e.b}`)).toEqual(['appt|moved']);

        const again = note('again', 3, 'Update: dentist appointment moved to Friday June 7');
        await store.writeMemories('ctx', [
          { record: again, views: [], contentHash: 'h3', keys: relationKeys(again) },
        ]);
        expect((await updateRelations(store, 'ctx')).mode).toBe('incremental');
        const latest = (await store.neighbors('ctx', ['again'])).filter((e) =>
          e.types.includes('supersedes'),
        );
        expect(latest.map((e) => `${e.a}|${e.b}`)).toEqual(['again|moved']);
      } finally {
        await store.close();
      }
    });

    it('a new context is keyed by its writes and goes incremental from the first update', async () => {
      const store = await openStore(db);
      try {
        const first = note('a', 1, 'Dentist appointment on Monday June 3');
        await store.writeMemories('ctx', [
          { record: first, views: [], contentHash: 'h1', keys: relationKeys(first) },
        ]);
        expect((await updateRelations(store, 'ctx')).mode).toBe('incremental');
        expect(await store.getMeta(`${KEYS_VERSION_META_PREFIX}ctx`)).toBe(RELATION_KEYS_VERSION);
      } finally {
        await store.close();
      }
    });
  },
);
