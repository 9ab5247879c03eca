import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestItems } from '../../src/digest/ingest.ts';
import { createBundleImporter } from '../../src/importers/bundle-importer.ts';
import type { ImportItem } from '../../src/importers/importer-spec.ts';
import { openStore } from '../../src/store/open-store.ts';
import { collect, recordsOf, rejectsOf, warningsOf } from '../fixtures/import-items.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gmx-bundle-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function jsonl(rows: (object | string)[]): string {
  return `${rows.map((row) => (typeof row === 'string' ? row : JSON.stringify(row))).join('\n')}\n`;
}

function questionsOf(items: ImportItem[]) {
  return items.flatMap((item) => (item.type === 'question' ? [item.question] : []));
}

async function writeBundle(root: string): Promise<void> {
  await mkdir(join(root, 'assets'), { recursive: true });
  await writeFile(join(root, 'assets', 'cake.jpg'), 'jpeg bytes');
  await writeFile(join(root, 'manifest.json'), JSON.stringify({ name: 'demo', version: 1 }));
  await writeFile(join(root, 'contexts.jsonl'), jsonl([{ context_id: 'ctx-a' }]));
  await writeFile(
    join(root, 'assets.jsonl'),
    jsonl([
      {
        asset_id: 'a1',
        context_id: 'ctx-a',
        kind: 'image',
        path: 'assets/cake.jpg',
        metadata: { derived: { caption: 'a strawberry cake' } },
      },
      {
        asset_id: 'a2',
        context_id: 'ctx-a',
        memory_id: 'm3',
        kind: 'image',
        path: 'assets/missing.png',
        caption: 'a receipt',
      },
    ]),
  );
  await writeFile(
    join(root, 'memories.jsonl'),
    jsonl([
      {
        memory_id: 'm1',
        context_id: 'ctx-a',
        sequence: 0,
        kind: 'dialogue',
        content: [
          { type: 'text', text: 'I baked a cake today.' },
          { type: 'image', asset_id: 'a1' },
        ],
        session_id: 'S1',
        source_id: 'chat.json',
        timestamp: '2024-05-01T10:00:00',
        role: 'user',
        speaker: 'Kim',
        metadata: { native_round_id: 'D1:1', derived: { summary: 'baking' }, mood: 'happy' },
      },
      {
        memory_id: 'm2',
        context_id: 'ctx-a',
        sequence: 1,
        kind: 'message',
        content: 'Looks delicious!',
        session_id: 'S1',
        role: 'assistant',
        metadata: { native_round_id: 'D1:1' },
      },
      {
        memory_id: 'm3',
        context_id: 'ctx-a',
        sequence: 2,
        kind: 'photo',
        content: [],
        timestamp: '3 May, 2024',
      },
      {
        memory_id: 'm4',
        context_id: 'ctx-a',
        kind: 'weird-kind',
        content: [{ text: 'untyped block is text' }],
        timestamp: 'last week',
      },
      '{"memory_id": "m5", ',
      { context_id: 'ctx-a', content: 'no id' },
    ]),
  );
  await writeFile(
    join(root, 'questions.jsonl'),
    jsonl([
      {
        question_id: 'q1',
        context_id: 'ctx-a',
        prompt: 'What did Kim bake?',
        answer: { text: 'A cake', choice_ids: ['B'], unanswerable: false },
        choices: [
          { id: 'A', text: 'Bread' },
          { id: 'B', text: 'A cake' },
        ],
        evidence: [{ memory_id: 'm1' }, { memory_id: 'm2' }],
      },
      {
        question_id: 'q2',
        context_id: 'ctx-a',
        prompt: 'Which pet?',
        answer: 'none',
        choices: ['cat', 'dog'],
        evidence: ['m4'],
      },
      { question_id: 'q3', context_id: 'ctx-a', answer: { text: 'x' } },
    ]),
  );
}

describe('bundle importer', () => {
  it('maps harness rows onto unified records, joining assets by id and by memory_id', async () => {
    await writeBundle(join(dir, 'bundle'));
    const items = await collect(createBundleImporter().read(dir, {}));
    const records = recordsOf(items);
    expect(records.map((record) => record.id)).toEqual(['m1', 'm2', 'm3', 'm4']);
    const [m1, m2, m3, m4] = records;
    expect(m1).toMatchObject({
      contextId: 'ctx-a',
      kind: 'message',
      sequence: 0,
      sessionId: 'S1',
      roundId: 'D1:1',
      sourceId: 'chat.json',
      timestamp: '2024-05-01T10:00:00',
      role: 'user',
      speaker: 'Kim',
      text: 'I baked a cake today.',
      derived: { summary: 'baking' },
      metadata: { mood: 'happy' },
    });
    expect(m1?.assets).toEqual([
      {
        id: 'a1',
        kind: 'image',
        uri: join(dir, 'bundle', 'assets', 'cake.jpg'),
        mime: 'image/jpeg',
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        derived: { captions: ['a strawberry cake'] },
      },
    ]);
    expect(m2).toMatchObject({ roundId: 'D1:1', text: 'Looks delicious!', role: 'assistant' });
    // Linked through assets.jsonl memory_id; file missing, caption kept without uri.
    expect(m3).toMatchObject({ kind: 'photo', timestamp: '2024-05-03', text: '' });
    expect(m3?.assets).toEqual([
      { id: 'a2', kind: 'image', mime: 'image/png', derived: { captions: ['a receipt'] } },
    ]);
    expect(m4).toMatchObject({
      kind: 'other',
      text: 'untyped block is text',
      metadata: { sourceKind: 'weird-kind', rawTimestamp: 'last week' },
    });
    expect(m4?.timestamp).toBeUndefined();
    expect(warningsOf(items).map((item) => item.message)).toEqual([
      expect.stringContaining('media file not found'),
      expect.stringContaining('unreadable timestamp'),
    ]);
    const memoriesFile = join(dir, 'bundle', 'memories.jsonl');
    expect(
      rejectsOf(items).map((item) => [
        item.error.code,
        item.error.location.file,
        item.error.location.line,
        item.error.location.field,
      ]),
    ).toEqual([
      ['INVALID_INPUT', memoriesFile, 5, undefined],
      ['INVALID_INPUT', memoriesFile, 6, 'memory_id'],
      ['INVALID_INPUT', join(dir, 'bundle', 'questions.jsonl'), 3, 'prompt'],
    ]);
  });

  it('maps questions: answer object or string, choices as objects or strings, evidence objects', async () => {
    await writeBundle(join(dir, 'bundle'));
    const questions = questionsOf(
      await collect(createBundleImporter().read(join(dir, 'bundle', 'manifest.json'), {})),
    );
    expect(questions).toEqual([
      {
        id: 'q1',
        contextId: 'ctx-a',
        prompt: 'What did Kim bake?',
        choices: [
          { id: 'A', text: 'Bread' },
          { id: 'B', text: 'A cake' },
        ],
        answer: { text: 'A cake', choiceIds: ['B'], unanswerable: false },
        evidence: ['m1', 'm2'],
      },
      {
        id: 'q2',
        contextId: 'ctx-a',
        prompt: 'Which pet?',
        choices: [
          { id: 'A', text: 'cat' },
          { id: 'B', text: 'dog' },
        ],
        answer: { text: 'none' },
        evidence: ['m4'],
      },
    ]);
  });

  it('goes through ingest into a store; a second bundle dir is found recursively', async () => {
    await writeBundle(join(dir, 'one'));
    await mkdir(join(dir, 'nested', 'two'), { recursive: true });
    await writeFile(
      join(dir, 'nested', 'two', 'memories.jsonl'),
      jsonl([{ memory_id: 'x1', content: 'context from the folder name' }]),
    );
    const store = await openStore(':memory:');
    const report = await ingestItems(store, createBundleImporter().read(dir, {}), { relations: false });
    expect(report).toMatchObject({ imported: 5, questions: 2, assets: 2, contexts: ['ctx-a', 'two'] });
    expect(report.rejected).toHaveLength(3);
    expect(await store.countMemories('two')).toBe(1);
    await store.close();
  });
});
