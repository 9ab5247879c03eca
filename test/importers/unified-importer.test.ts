import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ImportItem } from '../../src/importers/importer-spec.ts';
import { createUnifiedImporter } from '../../src/importers/unified-importer.ts';
import { collect, recordsOf, rejectsOf, warningsOf } from '../fixtures/import-items.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gmx-unified-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeJsonl(name: string, lines: (object | string)[]): Promise<string> {
  const file = join(dir, name);
  await writeFile(
    file,
    `${lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n')}\n`,
  );
  return file;
}

function questionsOf(items: ImportItem[]) {
  return items.flatMap((item) => (item.type === 'question' ? [item.question] : []));
}

describe('unified importer', () => {
  it('reads context headers, records with defaults, and questions', async () => {
    await writeJsonl('archive.jsonl', [
      { type: 'context', id: 'alice' },
      {
        type: 'memory',
        id: 'm1',
        role: 'user',
        text: 'We moved to Lisbon',
        timestamp: '2024-06-03T10:00:00Z',
      },
      { type: 'memory', id: 'm2', text: 'Note to self', sequence: 40 },
      { type: 'memory', id: 'm3', contextId: 'bob', text: 'Bob line' },
      { id: 'm4', text: 'line without type is a memory' },
      { type: 'context', id: 'carol' },
      {
        type: 'question',
        id: 'q1',
        prompt: 'Where did we move?',
        answer: { text: 'Lisbon' },
        evidence: ['m1'],
      },
    ]);
    const items = await collect(createUnifiedImporter().read(dir, {}));
    expect(rejectsOf(items)).toEqual([]);
    const records = recordsOf(items);
    expect(records.map((record) => [record.id, record.contextId, record.kind, record.sequence])).toEqual([
      ['m1', 'alice', 'message', 0],
      ['m2', 'alice', 'note', 40],
      ['m3', 'bob', 'note', 0],
      ['m4', 'alice', 'note', 2],
    ]);
    expect(items.find((item) => item.type === 'record')?.source).toEqual({
      file: join(dir, 'archive.jsonl'),
      line: 2,
      recordId: 'm1',
    });
    expect(questionsOf(items)).toEqual([
      {
        id: 'q1',
        contextId: 'carol',
        prompt: 'Where did we move?',
        answer: { text: 'Lisbon' },
        evidence: ['m1'],
      },
    ]);
  });

  it('puts everything in options.contextId and defaults to the file stem otherwise', async () => {
    await writeJsonl('dana.jsonl', [
      { id: 'a', text: 'x', contextId: 'other' },
      { id: 'b', text: 'y' },
    ]);
    const forced = recordsOf(await collect(createUnifiedImporter().read(dir, { contextId: 'forced' })));
    expect(forced.map((record) => record.contextId)).toEqual(['forced', 'forced']);
    const plain = recordsOf(await collect(createUnifiedImporter().read(join(dir, 'dana.jsonl'), {})));
    expect(plain.map((record) => record.contextId)).toEqual(['other', 'dana']);
  });

  it('rejects each bad line with file, line and field, and keeps the valid records flowing', async () => {
    const file = await writeJsonl('bad.jsonl', [
      { id: 'ok1', text: 'first' },
      '{"id": "broken", "text": ',
      { id: 'typo', text: 'x', timestmap: '2024-01-01' },
      { id: 'wrongtype', text: 'x', timestamp: 20240101 },
      { id: 'baddate', text: 'x', timestamp: '2024-02-30' },
      { type: 'banana', id: 'b' },
      '[1, 2]',
      { type: 'question', id: 'q', answer: { text: 'no prompt' } },
      { id: 'empty', text: '   ' },
      { id: 'ok2', text: 'last' },
    ]);
    const items = await collect(createUnifiedImporter().read(file, {}));
    expect(recordsOf(items).map((record) => record.id)).toEqual(['ok1', 'ok2']);
    const rejects = rejectsOf(items).map((item) => ({
      code: item.error.code,
      line: item.error.location.line,
      field: item.error.location.field,
      file: item.error.location.file,
    }));
    expect(rejects).toEqual([
      { code: 'INVALID_INPUT', line: 2, field: undefined, file },
      { code: 'INVALID_INPUT', line: 3, field: 'timestmap', file },
      { code: 'INVALID_INPUT', line: 4, field: 'timestamp', file },
      { code: 'INVALID_INPUT', line: 5, field: 'timestamp', file },
      { code: 'INVALID_INPUT', line: 6, field: 'type', file },
      { code: 'INVALID_INPUT', line: 7, field: undefined, file },
      { code: 'INVALID_INPUT', line: 8, field: 'prompt', file },
      { code: 'INVALID_INPUT', line: 9, field: 'text', file },
    ]);
    expect(rejectsOf(items)[0]?.error.message).toContain('bad.jsonl:2');
  });

  it('rejects a 50 MB text field with TOO_LARGE naming the field, and reads on', async () => {
    const huge = 'a'.repeat(50 * 1024 * 1024);
    const file = join(dir, 'big.jsonl');
    await writeFile(
      file,
      `${JSON.stringify({ id: 'big', text: huge })}\n${JSON.stringify({ id: 'small', text: 'fine' })}\n`,
    );
    const items = await collect(createUnifiedImporter().read(file, {}));
    expect(recordsOf(items).map((record) => record.id)).toEqual(['small']);
    const reject = rejectsOf(items)[0];
    expect(reject?.error.code).toBe('TOO_LARGE');
    expect(reject?.error.location).toEqual({ file, line: 1, recordId: 'big', field: 'text' });
  });

  it('names an oversized caption by its path under maxTextBytes', async () => {
    const file = await writeJsonl('cap.jsonl', [
      { id: 'c', text: 'ok', assets: [{ kind: 'image', derived: { captions: ['short', 'x'.repeat(200)] } }] },
    ]);
    const reject = rejectsOf(await collect(createUnifiedImporter().read(file, { maxTextBytes: 100 })))[0];
    expect(reject?.error.code).toBe('TOO_LARGE');
    expect(reject?.error.location.field).toBe('assets.0.derived.captions.1');
  });

  it('resolves media relative to the file; a missing file keeps a captioned asset without uri', async () => {
    const bytes = Buffer.from('not really a png');
    await writeFile(join(dir, 'pic.png'), bytes);
    const file = await writeJsonl('media.jsonl', [
      { id: 'found', assets: [{ id: 'p', kind: 'image', uri: 'pic.png' }] },
      {
        id: 'captioned',
        text: 'beach',
        assets: [{ id: 'p', kind: 'image', uri: 'gone.jpg', derived: { captions: ['a beach'] } }],
      },
      { id: 'bare', text: 'no caption', assets: [{ id: 'p', kind: 'image', uri: 'gone.jpg' }] },
      { id: 'only-media', assets: [{ id: 'p', kind: 'image', uri: 'gone.jpg' }] },
      {
        id: 'remote',
        text: 'web',
        assets: [{ id: 'p', kind: 'image', uri: 'https://example.invalid/x.jpg' }],
      },
    ]);
    const items = await collect(createUnifiedImporter().read(file, {}));
    const byId = new Map(recordsOf(items).map((record) => [record.id, record]));
    expect(byId.get('found')?.assets[0]).toEqual({
      id: 'p',
      kind: 'image',
      uri: join(dir, 'pic.png'),
      mime: 'image/png',
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    expect(byId.get('captioned')?.assets).toEqual([
      { id: 'p', kind: 'image', derived: { captions: ['a beach'] } },
    ]);
    expect(byId.get('bare')?.assets).toEqual([]);
    expect(byId.has('only-media')).toBe(false);
    expect(byId.get('remote')?.assets[0]?.uri).toBe('https://example.invalid/x.jpg');
    expect(warningsOf(items).map((item) => item.source.line)).toEqual([2, 3, 4]);
    expect(warningsOf(items)[0]?.message).toContain('field assets.0.uri');
    const reject = rejectsOf(items)[0];
    expect(reject?.error.code).toBe('NOT_FOUND_PATH');
    expect(reject?.error.location).toMatchObject({ line: 4, recordId: 'only-media' });
  });
});

describe('unified importer through ingest', () => {
  it('reports rejects with file/line/field, DUPLICATE_ID for a changed repeat, and keeps the rest', async () => {
    const file = await writeJsonl('ingest.jsonl', [
      { type: 'context', id: 'eve' },
      { type: 'memory', id: 'a', role: 'user', sessionId: 's1', text: 'first' },
      { type: 'memory', id: 'b', role: 'assistant', sessionId: 's1', text: 'second' },
      { type: 'memory', id: 'a', role: 'user', sessionId: 's1', text: 'first, edited' },
      { type: 'memory', id: 'b', role: 'assistant', sessionId: 's1', text: 'second' },
      '{not json',
      { type: 'memory', id: 'c', text: 'third', kind: 'diary' },
    ]);
    const { openStore } = await import('../../src/store/open-store.ts');
    const { ingestItems } = await import('../../src/digest/ingest.ts');
    const store = await openStore(':memory:');
    const report = await ingestItems(store, createUnifiedImporter().read(file, {}), { relations: false });
    expect(report).toMatchObject({ imported: 2, skipped: 1, contexts: ['eve'] });
    expect(report.rejected.map((rejection) => [rejection.code, rejection.line, rejection.field])).toEqual([
      ['DUPLICATE_ID', 4, 'id'],
      ['INVALID_INPUT', 6, undefined],
      ['INVALID_INPUT', 7, 'kind'],
    ]);
    expect(report.rejected.every((rejection) => rejection.file === file)).toBe(true);
    expect((await store.getMemory('eve', 'a'))?.text).toBe('first');
    await store.close();
  });
});
