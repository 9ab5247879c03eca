import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestItems } from '../../src/digest/ingest.ts';
import type { ImportItem } from '../../src/importers/importer-spec.ts';
import { createM3examImporter } from '../../src/importers/m3exam-importer.ts';
import { openStore } from '../../src/store/open-store.ts';
import { collect, recordsOf, rejectsOf, warningsOf } from '../fixtures/import-items.ts';
import { writeM3examPersona } from './dataset-fixtures.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gmx-m3exam-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function questionsOf(items: ImportItem[]) {
  return items.flatMap((item) => (item.type === 'question' ? [item.question] : []));
}

describe('M3Exam importer', () => {
  it('makes paired round memories with real images as assets and descriptions as captions', async () => {
    const root = await writeM3examPersona(dir, 'Alex_Vet');
    const items = await collect(createM3examImporter().read(dir, {}));
    expect(rejectsOf(items)).toEqual([]);
    const records = recordsOf(items);
    expect(records.map((record) => record.id)).toEqual([
      'Alex_Vet:D1:1:user',
      'Alex_Vet:D1:1:assistant',
      'Alex_Vet:D1:2:user',
      'Alex_Vet:D1:2:assistant',
      'Alex_Vet:D2:1:user',
      'Alex_Vet:D2:1:assistant',
      'Alex_Vet:D2:2:user',
      'Alex_Vet:D2:2:assistant',
    ]);
    const [d11user, d11assistant, , , d21user] = records;
    expect(d11user).toMatchObject({
      roundId: 'D1:1',
      sessionId: 'D1',
      timestamp: '2023-03-01',
      role: 'user',
    });
    expect(d11assistant).toMatchObject({ roundId: 'D1:1', role: 'assistant', assets: [] });
    expect(d11user?.assets).toEqual([
      {
        id: 'img_1',
        kind: 'image',
        mime: 'image/jpeg',
        uri: join(root, 'images', 'img_1.jpg'),
        sha256: createHash('sha256').update('bytes of img_1.jpg').digest('hex'),
        derived: { captions: ['An examination ward.'] },
      },
      expect.objectContaining({ id: 'img_2', derived: { captions: ['A puppy on an IV drip.'] } }),
    ]);
    // One description for three images describes the round, not one image; img_5.jpg is missing.
    expect(d21user?.assets.map((asset) => [asset.id, asset.mime, asset.derived])).toEqual([
      ['img_3', 'image/png', undefined],
      ['img_4', 'image/jpeg', undefined],
    ]);
    expect(d21user?.derived).toEqual({ captions: ['A rabbit under veterinary care.'] });
    expect(d21user?.metadata).toEqual({ isFollowup: true, followupOf: 'D1:1' });
    expect(warningsOf(items).map((item) => item.message)).toEqual([
      expect.stringContaining('1 media file(s) not found'),
      expect.stringContaining('unresolved evidence D9:1'),
    ]);
  });

  it('reads questions: gold rounds expanded, fj choices, fm image answers', async () => {
    await writeM3examPersona(dir, 'Alex_Vet');
    const questions = questionsOf(await collect(createM3examImporter().read(dir, {})));
    expect(questions[0]).toMatchObject({
      id: 'Alex_Vet:q0',
      type: 'ss',
      answer: { text: 'Fluids', alternatives: ['Fluids', 'IV fluids'] },
      evidence: ['Alex_Vet:D1:1:user', 'Alex_Vet:D1:1:assistant'],
    });
    expect(questions[1]).toMatchObject({
      prompt: 'Which probiotic?',
      instruction: 'Output only the letter.',
      choices: [
        { id: 'A', text: 'Salmonella' },
        { id: 'B', text: 'Lactobacillus and Bifidobacterium' },
        { id: 'C', text: 'None' },
        { id: 'D', text: 'Garlic' },
      ],
      answer: { text: 'B', choiceIds: ['B'] },
    });
    expect(questions[2]).toMatchObject({
      type: 'fm',
      answer: { text: 'img_2' },
      evidence: [
        'Alex_Vet:D1:1:user',
        'Alex_Vet:D1:1:assistant',
        'Alex_Vet:D1:2:user',
        'Alex_Vet:D1:2:assistant',
      ],
      metadata: { answerAssetIds: ['img_2'] },
    });
    expect(questions[3]).toMatchObject({
      evidence: [
        'Alex_Vet:D1:2:user',
        'Alex_Vet:D1:2:assistant',
        'Alex_Vet:D2:1:user',
        'Alex_Vet:D2:1:assistant',
      ],
      unresolvedEvidence: ['D9:1'],
    });
  });

  it('goes through ingest into a store', async () => {
    await writeM3examPersona(dir, 'Alex_Vet');
    const store = await openStore(':memory:');
    const report = await ingestItems(store, createM3examImporter().read(dir, {}));
    expect(report).toMatchObject({
      imported: 8,
      questions: 4,
      assets: 4,
      rejected: [],
      contexts: ['Alex_Vet'],
    });
    expect(report.edges).toMatchObject({ same_round: 4, consecutive_turn: 6 });
    const stored = await store.getMemory('Alex_Vet', 'Alex_Vet:D1:1:user');
    expect(stored?.assets.map((asset) => asset.id)).toEqual(['img_1', 'img_2']);
    await store.close();
  });
});
