import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestItems } from '../../src/digest/ingest.ts';
import { createM3examImporter } from '../../src/importers/m3exam-importer.ts';
import { createMemGalleryImporter } from '../../src/importers/mem-gallery-importer.ts';
import { openStore } from '../../src/store/open-store.ts';
import { collect, recordsOf } from '../fixtures/import-items.ts';
import { writeM3examPersona, writeMemGalleryContext } from './dataset-fixtures.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gmx-shape-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('dialogue shape option (turns: no round links, the two-person-chat shape)', () => {
  it('Mem-Gallery: same records and gold, no round ids, so no same_round edge; rounds stay the default', async () => {
    await writeMemGalleryContext(dir, 'Home');
    const rounds = await collect(createMemGalleryImporter().read(dir, {}));
    const turns = await collect(createMemGalleryImporter().read(dir, { shape: 'turns' }));
    const roundRecords = recordsOf(rounds);
    const turnRecords = recordsOf(turns);
    expect(turnRecords.map((r) => r.id)).toEqual(roundRecords.map((r) => r.id));
    expect(roundRecords.filter((r) => r.roundId !== undefined).length).toBe(10);
    expect(turnRecords.every((r) => r.roundId === undefined)).toBe(true);
    const gold = (items: typeof rounds) =>
      items.flatMap((i) => (i.type === 'question' ? [i.question.evidence] : []));
    expect(gold(turns)).toEqual(gold(rounds));

    const store = await openStore(':memory:');
    try {
      await ingestItems(store, turns);
      const edges = await store.neighbors(
        'Home',
        turnRecords.map((r) => r.id),
      );
      expect(edges.some((e) => e.types.includes('same_round'))).toBe(false);
      expect(edges.some((e) => e.types.includes('consecutive_turn'))).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('M3Exam: turns drop the round ids too', async () => {
    await writeM3examPersona(dir, 'Alex_Vet');
    const turns = recordsOf(await collect(createM3examImporter().read(dir, { shape: 'turns' })));
    expect(turns.length).toBeGreaterThan(0);
    expect(turns.every((r) => r.roundId === undefined)).toBe(true);
    const rounds = recordsOf(await collect(createM3examImporter().read(dir, {})));
    expect(rounds.every((r) => r.roundId !== undefined)).toBe(true);
  });
});
