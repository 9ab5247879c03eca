import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GraphmemixError } from '../../src/errors/graphmemix-error.ts';
import { parseEvidenceRefs } from '../../src/importers/evidence-refs.ts';
import { findFiles, hasExtension } from '../../src/importers/find-files.ts';
import { parseDatasetDate } from '../../src/importers/parse-dataset-date.ts';
import { type LineItem, readLines } from '../../src/importers/read-lines.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gmx-helpers-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function lines(file: string, maxLineBytes?: number): Promise<LineItem[]> {
  const out: LineItem[] = [];
  for await (const item of readLines(file, maxLineBytes === undefined ? {} : { maxLineBytes }))
    out.push(item);
  return out;
}

describe('findFiles', () => {
  it('searches a directory recursively, sorted by code point, skipping .git', async () => {
    await mkdir(join(dir, 'b', 'deep'), { recursive: true });
    await mkdir(join(dir, '.git'));
    await writeFile(join(dir, 'b', 'deep', 'z.jsonl'), '');
    await writeFile(join(dir, 'B.jsonl'), '');
    await writeFile(join(dir, 'a.JSONL'), '');
    await writeFile(join(dir, 'notes.txt'), '');
    await writeFile(join(dir, '.git', 'x.jsonl'), '');
    const found = await findFiles(dir, (name) => hasExtension(name, ['.jsonl']));
    expect(found).toEqual([join(dir, 'B.jsonl'), join(dir, 'a.JSONL'), join(dir, 'b', 'deep', 'z.jsonl')]);
  });

  it('takes a named file as given and throws NOT_FOUND_PATH for a missing path', async () => {
    await writeFile(join(dir, 'data.txt'), '');
    expect(await findFiles(join(dir, 'data.txt'), () => false)).toEqual([join(dir, 'data.txt')]);
    const error = await findFiles(join(dir, 'nope'), () => true).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GraphmemixError);
    expect((error as GraphmemixError).code).toBe('NOT_FOUND_PATH');
  });
});

describe('readLines', () => {
  it('numbers lines, strips BOM and CRLF, decodes multi-byte characters split across chunks', async () => {
    const long = 'é'.repeat(70_000); // 140 kB: crosses the 64 kB stream chunk boundary mid-character
    await writeFile(join(dir, 'x.jsonl'), `\uFEFFfirst\r\n${long}\n\nlast`);
    const items = await lines(join(dir, 'x.jsonl'));
    expect(items).toEqual([
      { line: 1, text: 'first' },
      { line: 2, text: long },
      { line: 3, text: '' },
      { line: 4, text: 'last' },
    ]);
  });

  it('reports an over-long line without buffering it and keeps reading', async () => {
    await writeFile(join(dir, 'x.jsonl'), `ok\n${'x'.repeat(5000)}\nafter\n`);
    const items = await lines(join(dir, 'x.jsonl'), 1000);
    expect(items).toEqual([
      { line: 1, text: 'ok' },
      { line: 2, tooLong: true, bytes: 5000 },
      { line: 3, text: 'after' },
    ]);
  });
});

describe('parseEvidenceRefs', () => {
  it('reads lists, ;-separated strings, ranges and leading zeros', () => {
    expect(parseEvidenceRefs(['D1:3; D1:5', 'D12:3-D12:5', 'D2:7,D2:9', 'D03:04', 'D1:3']).ids).toEqual([
      'D1:3',
      'D1:5',
      'D12:3',
      'D12:4',
      'D12:5',
      'D2:7',
      'D2:9',
      'D3:4',
    ]);
    expect(parseEvidenceRefs('D4:1-3').ids).toEqual(['D4:1', 'D4:2', 'D4:3']);
  });

  it('returns what it cannot read instead of throwing', () => {
    const refs = parseEvidenceRefs(['D1:2-D2:4', 'session 3', 'D5:9-D5:1', 42, { x: 1 }]);
    expect(refs.ids).toEqual([]);
    expect(refs.invalid).toEqual(['D1:2-D2:4', 'session', '3', 'D5:9-D5:1', '42']);
  });
});

describe('parseDatasetDate', () => {
  it.each([
    ['9:10 am on 3 March, 2024', '2024-03-03T09:10:00'],
    ['12:05 am on 1 Jan, 2023', '2023-01-01T00:05:00'],
    ['1:56 pm on 8 May, 2023', '2023-05-08T13:56:00'],
    ['29.12.2023, 22:42:04', '2023-12-29T22:42:04'],
    ['2024-06-17', '2024-06-17'],
    ['March 3, 2024', '2024-03-03'],
  ])('%s -> %s', (raw, iso) => {
    expect(parseDatasetDate(raw)).toBe(iso);
  });

  it.each(['yesterday', '31.02.2024, 10:00:00', '13:10 pm on 3 March, 2024', '3 Smarch, 2024'])(
    'refuses %s',
    (raw) => {
      expect(parseDatasetDate(raw)).toBeUndefined();
    },
  );
});
