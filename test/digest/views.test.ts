import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildViews, dateForms } from '../../src/digest/build-views.ts';
import { canonicalJson, contentHash } from '../../src/digest/content-hash.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';

const photo: MemoryRecord = {
  id: 'p1',
  contextId: 'ctx',
  kind: 'photo',
  sequence: 4,
  speaker: 'Ann',
  timestamp: '2024-06-03T23:30:00-05:00',
  location: { name: 'Lisbon, Alfama', lat: 38.7, lon: -9.1 },
  text: '  ',
  derived: { tags: ['holiday'] },
  assets: [
    {
      id: 'a1',
      kind: 'image',
      uri: '/photos/a1.jpg',
      derived: { captions: ['a tram on a hill', ''], ocr: 'LINHA 28', summary: 'tram photo' },
      exif: { takenAt: '2024-06-02T10:00:00Z' },
    },
    { id: 'v1', kind: 'video', frames: ['/f/0.jpg', '/f/1.jpg'] },
    { id: 'c1', kind: 'image', derived: { captions: ['only a caption'] } },
  ],
};

describe('buildViews', () => {
  it('builds one view per route and skips empty ones', () => {
    const views = buildViews(photo);
    expect(views.map((v) => `${v.kind}/${v.key}`)).toEqual([
      'caption/a1',
      'caption/a1:summary',
      'caption/c1',
      'ocr/a1',
      'metadata/main',
      'image/a1',
      'frame/v1:0',
      'frame/v1:1',
    ]);
    expect(views.every((v) => v.memoryId === 'p1')).toBe(true);
    expect(views.find((v) => v.kind === 'image')).toEqual({
      memoryId: 'p1',
      kind: 'image',
      key: 'a1',
      text: '',
      uri: '/photos/a1.jpg',
    });
  });

  it('puts who, when and where into the metadata view (date read without time-zone shift)', () => {
    const metadata = buildViews(photo).find((v) => v.kind === 'metadata')!.text;
    expect(metadata).toBe(
      'photo Ann 2024-06-03 3 June 2024 June 2024 2024 Monday 2024-06-02 2 June 2024 Sunday Lisbon, Alfama holiday',
    );
  });

  it('reads a message as "[day] speaker: text" in its text view (a document a person would search)', () => {
    const message = {
      id: 'm',
      contextId: 'c',
      kind: 'message' as const,
      sequence: 0,
      speaker: 'Bo',
      timestamp: '2023-05-08T10:00:00Z',
      text: ' hi there ',
      assets: [],
    };
    expect(buildViews(message)[0]).toEqual({
      memoryId: 'm',
      kind: 'text',
      key: 'main',
      text: '[8 May 2023] Bo: hi there',
    });
    const { timestamp: _t, ...undated } = message;
    expect(buildViews(undated)[0]?.text).toBe('Bo: hi there');
    expect(buildViews({ ...message, kind: 'note' })[0]?.text).toBe('hi there');
    expect(buildViews({ ...message, text: '  ' }).some((v) => v.kind === 'text')).toBe(false);
  });

  it('gives date forms', () => {
    expect(dateForms('2023-05-08')).toEqual(['2023-05-08', '8 May 2023', 'May 2023', '2023', 'Monday']);
    expect(dateForms('garbage')).toEqual([]);
  });
});

describe('contentHash', () => {
  it('ignores key order and changes with content', () => {
    const a: MemoryRecord = { id: 'm', contextId: 'c', kind: 'note', sequence: 0, text: 'x', assets: [] };
    const b = JSON.parse(
      '{"text":"x","assets":[],"sequence":0,"kind":"note","contextId":"c","id":"m"}',
    ) as MemoryRecord;
    expect(contentHash(a)).toBe(contentHash(b));
    expect(contentHash({ ...a, text: 'y' })).not.toBe(contentHash(a));
    expect(contentHash(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(canonicalJson({ b: 1, a: { d: 2, c: [3, { f: 1, e: 0 }] } })).toBe(
      '{"a":{"c":[3,{"e":0,"f":1}],"d":2},"b":1}',
    );
  });

  it('canonicalJson round-trips any JSON value and matches JSON.stringify on sorted input', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
    );
  });

  it('canonicalJson writes the same text by recursion and, past 64 levels, by its iterative writer', () => {
    const nest = (value: unknown, levels: number): unknown =>
      levels === 0 ? value : { a: nest(value, levels - 1) };
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const deep = canonicalJson(nest(value, 70));
        expect(deep).toBe(`${'{"a":'.repeat(70)}${canonicalJson(value)}${'}'.repeat(70)}`);
      }),
    );
    // undefined members, functions and toJSON on both paths
    const odd = { z: undefined, y: () => 1, x: [undefined, () => 2, new Date(0)], w: { v: 1, u: undefined } };
    expect(canonicalJson(nest(odd, 70))).toBe(`${'{"a":'.repeat(70)}${canonicalJson(odd)}${'}'.repeat(70)}`);
    expect(canonicalJson(odd)).toBe('{"w":{"v":1},"x":[null,null,"1970-01-01T00:00:00.000Z"]}');
  });
});
