import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestItems } from '../../src/digest/ingest.ts';
import type { ImportItem } from '../../src/importers/importer-spec.ts';
import { createMemGalleryImporter } from '../../src/importers/mem-gallery-importer.ts';
import { openStore } from '../../src/store/open-store.ts';
import { collect, recordsOf, rejectsOf, warningsOf } from '../fixtures/import-items.ts';
import { writeMemGalleryContext } from './dataset-fixtures.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gmx-memgallery-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function questionsOf(items: ImportItem[]) {
  return items.flatMap((item) => (item.type === 'question' ? [item.question] : []));
}

describe('Mem-Gallery importer', () => {
  it('makes one profile plus one memory per speaker turn, images on the user memory', async () => {
    await writeMemGalleryContext(dir, 'Home');
    const items = await collect(createMemGalleryImporter().read(dir, {}));
    expect(rejectsOf(items)).toEqual([]);
    const records = recordsOf(items);
    expect(records.map((record) => record.id)).toEqual([
      'Home:profile',
      'Home:D1:1:user',
      'Home:D1:1:assistant',
      'Home:D1:2:user',
      'Home:D1:2:assistant',
      'Home:D1:3:user',
      'Home:D1:3:assistant',
      'Home:D2:1:user',
      'Home:D2:1:assistant',
      'Home:D2:2:user',
      'Home:D2:2:assistant',
    ]);
    expect(records.map((record) => record.sequence)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const [profile, , , user, assistant] = records;
    expect(profile).toMatchObject({ kind: 'profile', contextId: 'Home' });
    expect(profile?.text).toContain('Name: Marcus');
    expect(profile?.sessionId).toBeUndefined();
    expect(user).toMatchObject({
      contextId: 'Home',
      kind: 'message',
      sessionId: 'D1',
      roundId: 'D1:2',
      timestamp: '2024-06-06',
      role: 'user',
      speaker: 'Marcus',
    });
    expect(assistant).toMatchObject({ roundId: 'D1:2', role: 'assistant', assets: [] });
    expect(user?.assets).toEqual([
      {
        id: 'D1:IMG_001',
        kind: 'image',
        mime: 'image/png',
        uri: join(dir, 'image', 'Home', 'D1_IMG_001.png'),
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        derived: { captions: ['A handwritten cleaning list.'] },
      },
      {
        id: 'D1:IMG_002',
        kind: 'image',
        mime: 'image/png',
        derived: { captions: ['A full shopping cart.'] },
      },
    ]);
    // One warning for the dangling clue, one summary for the file's missing images (D1:IMG_002, QA_IMG_001).
    expect(warningsOf(items).map((item) => item.message)).toEqual([
      expect.stringContaining('unresolved evidence D9:9'),
      expect.stringContaining('2 media file(s) not found'),
    ]);
  });

  it('expands gold rounds to both memories; AR has no gold and is unanswerable', async () => {
    await writeMemGalleryContext(dir, 'Home');
    const questions = questionsOf(await collect(createMemGalleryImporter().read(dir, {})));
    expect(questions.map((question) => question.id)).toEqual(['Home:q0', 'Home:q1', 'Home:q2', 'Home:q3']);
    expect(questions[0]).toMatchObject({
      type: 'FR',
      answer: { text: 'Charcoal bags and vinegar' },
      evidence: ['Home:D2:1:user', 'Home:D2:1:assistant', 'Home:D2:2:user', 'Home:D2:2:assistant'],
    });
    expect(questions[2]).toMatchObject({ type: 'AR', evidence: [], answer: { unanswerable: true } });
    expect(questions[3]).toMatchObject({
      evidence: ['Home:D1:2:user', 'Home:D1:2:assistant'],
      unresolvedEvidence: ['D9:9'],
      // The question image file is absent: caption kept, no uri pointing at nothing.
      images: [{ caption: 'A list on paper.' }],
    });
    expect(questions.filter((question) => question.evidence.length > 0)).toHaveLength(3);
  });

  it('keeps ids distinct when several files go into one --context', async () => {
    await writeMemGalleryContext(dir, 'A');
    await writeMemGalleryContext(dir, 'B');
    const records = recordsOf(await collect(createMemGalleryImporter().read(dir, { contextId: 'all' })));
    expect(new Set(records.map((record) => record.id)).size).toBe(22);
    expect(new Set(records.map((record) => record.sequence)).size).toBe(22);
    expect(new Set(records.map((record) => record.contextId))).toEqual(new Set(['all']));
  });

  it('rejects a file that is not a dialog file and a round without id, reading the rest', async () => {
    await writeMemGalleryContext(dir, 'Good');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(dir, 'dialog', 'broken.json'), '{"multi_session_dialogues": [');
    await writeFile(
      join(dir, 'dialog', 'partial.json'),
      JSON.stringify({
        multi_session_dialogues: [
          {
            session_id: 'D1',
            date: '2024-01-01',
            dialogues: [{ user: 'x' }, { round: 'D1:2', user: 'y', assistant: 'z' }],
          },
        ],
      }),
    );
    const items = await collect(createMemGalleryImporter().read(dir, {}));
    expect(rejectsOf(items).map((item) => [item.error.code, item.error.location.field])).toEqual([
      ['INVALID_INPUT', undefined],
      ['INVALID_INPUT', 'multi_session_dialogues.0.dialogues.0.round'],
    ]);
    expect(
      recordsOf(items)
        .filter((record) => record.contextId === 'partial')
        .map((record) => record.id),
    ).toEqual(['partial:D1:2:user', 'partial:D1:2:assistant']);
    expect(recordsOf(items).filter((record) => record.contextId === 'Good')).toHaveLength(11);
  });

  it('goes through ingest into a store', async () => {
    await writeMemGalleryContext(dir, 'Home');
    const store = await openStore(':memory:');
    const report = await ingestItems(store, createMemGalleryImporter().read(dir, {}));
    expect(report).toMatchObject({ imported: 11, questions: 4, assets: 2, rejected: [], contexts: ['Home'] });
    // One same_round pair per round (5); consecutive turns per session: 6 - 1 + 4 - 1; the profile has none.
    expect(report.edges).toMatchObject({ same_round: 5, consecutive_turn: 8 });
    expect(await store.countMemories('Home')).toBe(11);
    const again = await ingestItems(store, createMemGalleryImporter().read(dir, {}), { relations: false });
    expect(again).toMatchObject({ imported: 0, updated: 0, unchanged: 11 });
    await store.close();
  });
});

describe('Mem-Gallery counts follow the release arithmetic', () => {
  it('memories = 2R + C, same_round = R, consecutive_turn = 2R - S, images and gold as written', async () => {
    const { mkdir, writeFile } = await import('node:fs/promises');
    await mkdir(join(dir, 'dialog'));
    // Deterministic, uneven structure: contexts with 1..4 sessions of 1..5 rounds.
    let rounds = 0;
    let sessions = 0;
    let images = 0;
    let gold = 0;
    let questions = 0;
    for (let context = 0; context < 3; context += 1) {
      const multi = [];
      for (let session = 1; session <= context + 2; session += 1) {
        const dialogues = [];
        for (let round = 1; round <= ((context + session) % 5) + 1; round += 1) {
          const withImage = (round + session) % 3 === 0;
          images += withImage ? 1 : 0;
          dialogues.push({
            round: `D${session}:${round}`,
            user: `user ${context}/${session}/${round}`,
            assistant: `assistant ${context}/${session}/${round}`,
            ...(withImage
              ? {
                  image_id: [`D${session}:IMG_${round}`],
                  input_image: [`x/${round}.jpg`],
                  image_caption: ['c'],
                }
              : {}),
          });
        }
        rounds += dialogues.length;
        sessions += 1;
        multi.push({ session_id: `D${session}`, date: '2024-01-0' + session, dialogues });
      }
      const qas = [
        { point: 'FR', question: 'q', answer: 'a', clue: ['D1:1'] },
        { point: 'AR', question: 'q', answer: 'Not mentioned.', clue: [] },
      ];
      questions += qas.length;
      gold += 1;
      await writeFile(
        join(dir, 'dialog', `ctx${context}.json`),
        JSON.stringify({
          character_profile: { name: `P${context}` },
          multi_session_dialogues: multi,
          'human-annotated QAs': qas,
        }),
      );
    }
    const store = await openStore(':memory:');
    const report = await ingestItems(store, createMemGalleryImporter().read(dir, {}));
    const stored = await store.listQuestions();
    expect({
      memories: report.imported,
      sameRound: report.edges.same_round,
      consecutive: report.edges.consecutive_turn,
      images: report.assets,
      questions: report.questions,
      gold: stored.filter((question) => question.evidence.length > 0).length,
    }).toEqual({
      memories: 2 * rounds + 3,
      sameRound: rounds,
      consecutive: 2 * rounds - sessions,
      images,
      questions,
      gold,
    });
    await store.close();
  });
});
