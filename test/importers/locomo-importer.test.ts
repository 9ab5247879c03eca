import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestItems } from '../../src/digest/ingest.ts';
import { normaliseDiaIdString, parseEvidenceRefs } from '../../src/importers/evidence-refs.ts';
import type { ImportItem } from '../../src/importers/importer-spec.ts';
import { createLocomoImporter } from '../../src/importers/locomo-importer.ts';
import { openStore } from '../../src/store/open-store.ts';
import { collect, recordsOf, rejectsOf, warningsOf } from '../fixtures/import-items.ts';
import { flattenedLocomo, locomoSamples, writeRealtalk } from './dataset-fixtures.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gmx-locomo-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function questionsOf(items: ImportItem[]) {
  return items.flatMap((item) => (item.type === 'question' ? [item.question] : []));
}

/** Every evidence reference of the source that names an existing dia_id must come out resolved. */
function expectEveryResolvableEvidenceResolved(items: ImportItem[], qa: { evidence?: unknown }[]): void {
  const records = recordsOf(items);
  const byDiaId = new Map(
    records.map((record) => [normaliseDiaIdString(String(record.metadata?.diaId)), record.id] as const),
  );
  const questions = questionsOf(items);
  expect(questions).toHaveLength(qa.length);
  for (const [index, question] of questions.entries()) {
    const expected = parseEvidenceRefs(qa[index]?.evidence)
      .ids.map((id) => byDiaId.get(id))
      .filter((id): id is string => id !== undefined);
    expect(question.evidence).toEqual(expected);
    for (const id of question.evidence) expect(records.some((record) => record.id === id)).toBe(true);
  }
}

describe('LoCoMo importer', () => {
  it('reads the release shape (array of samples): messages, sessions, timestamps, images', async () => {
    const file = join(dir, 'locomo10.json');
    await writeFile(file, JSON.stringify(locomoSamples));
    const items = await collect(createLocomoImporter().read(file, {}));
    expect(rejectsOf(items)).toEqual([]);
    const records = recordsOf(items);
    expect(records.map((record) => record.id)).toEqual([
      'conv-1:D1:1',
      'conv-1:D1:2',
      'conv-1:D1:3',
      'conv-1:D2:1',
      'conv-1:D2:2',
      'conv-1:D2:3',
      'conv-1:D10:1',
    ]);
    expect(records.every((record) => record.contextId === 'conv-1' && record.roundId === undefined)).toBe(
      true,
    );
    expect(records[1]).toMatchObject({
      kind: 'message',
      sessionId: 'session_1',
      speaker: 'Ivo',
      role: 'Ivo',
      timestamp: '2024-03-03T09:10:00',
      assets: [
        {
          id: 'image-0',
          kind: 'image',
          uri: 'https://example.invalid/notice.jpg',
          mime: 'image/jpeg',
          derived: { captions: ['a photo of a printed notice pinned to a cork board'] },
        },
      ],
      metadata: { diaId: 'D1:2', imageQuery: 'course notice pinned board' },
    });
    expect(records[6]).toMatchObject({
      sessionId: 'session_10',
      timestamp: '2024-05-01T08:00:00',
      sequence: 6,
    });
  });

  it('parses messy evidence, reports dangling ids without failing, marks category 5 unanswerable', async () => {
    const file = join(dir, 'locomo10.json');
    await writeFile(file, JSON.stringify(locomoSamples));
    const items = await collect(createLocomoImporter().read(file, {}));
    expectEveryResolvableEvidenceResolved(items, locomoSamples[0]!.qa);
    const questions = questionsOf(items);
    expect(questions[1]?.evidence).toEqual(['conv-1:D2:1', 'conv-1:D2:3']);
    expect(questions[2]?.evidence).toEqual(['conv-1:D1:1', 'conv-1:D1:2', 'conv-1:D1:3']);
    expect(questions[3]).toMatchObject({
      evidence: ['conv-1:D10:1'],
      unresolvedEvidence: ['see', 'above', 'D7:4'],
    });
    expect(questions[4]).toMatchObject({
      type: '5',
      answer: { unanswerable: true },
      metadata: { adversarialAnswer: 'A cake' },
    });
    expect(questions[4]?.answer.text).toBeUndefined();
    expect(questions[5]?.answer.text).toBe('5');
    expect(warningsOf(items)).toHaveLength(1);
    expect(warningsOf(items)[0]?.message).toContain('qa.3.evidence');
  });

  it('reads one conversation per file with the keys flattened (context = file stem)', async () => {
    await writeFile(join(dir, 'nora-ivo.json'), JSON.stringify(flattenedLocomo()));
    const items = await collect(createLocomoImporter().read(dir, {}));
    expect(rejectsOf(items)).toEqual([]);
    expect(recordsOf(items).map((record) => record.id)[0]).toBe('nora-ivo:D1:1');
    expect(new Set(recordsOf(items).map((record) => record.contextId))).toEqual(new Set(['nora-ivo']));
    expectEveryResolvableEvidenceResolved(items, locomoSamples[0]!.qa);
  });

  it('reads the REALTALK variant: clean_text, per-message date_time, local img_file', async () => {
    await writeRealtalk(dir);
    const items = await collect(createLocomoImporter().read(dir, {}));
    expect(rejectsOf(items)).toEqual([]);
    const [first, second, third] = recordsOf(items);
    expect(first).toMatchObject({
      id: 'Chat_1_Emi_Elise:D1:1',
      text: 'Look at this sunset!',
      timestamp: '2023-12-29T22:42:04',
      metadata: { originalText: 'Look at this sunset!! :)' },
      assets: [
        {
          kind: 'image',
          uri: join(dir, 'sunset.jpg'),
          mime: 'image/jpeg',
          derived: { captions: ['a sunset over the sea'] },
        },
      ],
    });
    expect(second?.timestamp).toBe('2023-12-29T22:43:10');
    // Unreadable message date falls back to the session date; the missing image without caption is dropped.
    expect(third).toMatchObject({ timestamp: '2023-12-29T22:40:00', assets: [] });
    expect(warningsOf(items).map((item) => item.message)).toEqual([
      expect.stringContaining('unreadable date "sometime"'),
      expect.stringContaining('1 media file(s) not found'),
    ]);
    expect(questionsOf(items)[0]?.evidence).toEqual(['Chat_1_Emi_Elise:D1:1', 'Chat_1_Emi_Elise:D1:3']);
  });

  it('rejects non-LoCoMo JSON and keeps going; goes through ingest into a store', async () => {
    await writeFile(join(dir, 'a-other.json'), JSON.stringify({ hello: 'world' }));
    await writeFile(join(dir, 'b-locomo.json'), JSON.stringify(locomoSamples));
    const store = await openStore(':memory:');
    const report = await ingestItems(store, createLocomoImporter().read(dir, {}));
    expect(report.rejected.map((rejection) => [rejection.code, rejection.file])).toEqual([
      ['INVALID_INPUT', join(dir, 'a-other.json')],
    ]);
    expect(report).toMatchObject({ imported: 7, questions: 6, assets: 1, contexts: ['conv-1'] });
    // No invented rounds; consecutive turns within each session only (2 + 2 + 0).
    expect(report.edges).toMatchObject({ same_round: 0, consecutive_turn: 4 });
    const stored = await store.listQuestions('conv-1');
    expect(stored.find((question) => question.id === 'conv-1:q3')?.unresolvedEvidence).toEqual([
      'see',
      'above',
      'D7:4',
    ]);
    await store.close();
  });
});
