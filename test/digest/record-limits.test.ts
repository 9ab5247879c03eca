import { describe, expect, it } from 'vitest';
import { buildViews } from '../../src/digest/build-views.ts';
import { canonicalJson, contentHash } from '../../src/digest/content-hash.ts';
import { semanticText } from '../../src/digest/semantic/semantic-text.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { RECORD_LIMITS } from '../../src/schemas/record-limits.ts';
import { MAX_MEMORY_ID_CHARS, MAX_SEQUENCE, toMemoryRecord } from '../../src/schemas/record-schema.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import { recordCaptions } from '../../src/verify/candidate-snippet.ts';

const defaults = { contextId: 'ctx', sequence: 0 };

/** {"a":{"a":...}} nested `depth` levels, built without recursion. */
function deepObject(depth: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let current = root;
  for (let i = 1; i < depth; i++) {
    const next: Record<string, unknown> = {};
    current.a = next;
    current = next;
  }
  return root;
}

function manyCaptions(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `caption ${i}`);
}

describe('record limits in toMemoryRecord', () => {
  const rejects = (input: unknown) => {
    const result = toMemoryRecord(input, defaults);
    if (result.ok) throw new Error('expected a rejection');
    return { code: result.code, field: result.field };
  };

  it('rejects each oversized part naming the field, TOO_LARGE', () => {
    const image = { kind: 'image', uri: '/a.jpg' };
    expect(rejects({ id: 'm', assets: [{ ...image, derived: { captions: manyCaptions(5_000) } }] })).toEqual({
      code: 'TOO_LARGE',
      field: 'assets.0.derived.captions',
    });
    // Past maxRecordValues the walk before the schema refuses it, naming the top-level field it was in.
    expect(
      rejects({ id: 'm', assets: [{ ...image, derived: { captions: manyCaptions(150_000) } }] }),
    ).toEqual({ code: 'TOO_LARGE', field: 'assets' });
    // Bad values are refused before the schema would report each one (1M issues: seconds and ~0.7 GB), and
    // 200k in one nested array no longer overflow its stack.
    expect(rejects({ id: 'm', text: 'x', assets: new Array(1_000_000).fill(0) })).toEqual({
      code: 'TOO_LARGE',
      field: 'assets',
    });
    expect(rejects({ id: 'm', text: 'x', supersedes: new Array(200_000).fill(0) })).toEqual({
      code: 'TOO_LARGE',
      field: 'supersedes',
    });
    expect(
      rejects({ id: 'm', text: 'x', derived: { captions: manyCaptions(RECORD_LIMITS.maxCaptions + 1) } }),
    ).toEqual({ code: 'TOO_LARGE', field: 'derived.captions' });
    expect(
      rejects({ id: 'm', text: 'x', derived: { tags: manyCaptions(RECORD_LIMITS.maxTags + 1) } }),
    ).toEqual({ code: 'TOO_LARGE', field: 'derived.tags' });
    const assets = Array.from({ length: RECORD_LIMITS.maxAssets + 1 }, (_, i) => ({ ...image, id: `a${i}` }));
    expect(rejects({ id: 'm', assets })).toEqual({ code: 'TOO_LARGE', field: 'assets' });
    const frames = manyCaptions(RECORD_LIMITS.maxFrames + 1);
    expect(rejects({ id: 'm', assets: [{ kind: 'video', uri: '/v.mp4', frames }] })).toEqual({
      code: 'TOO_LARGE',
      field: 'assets.0.frames',
    });
    expect(rejects({ id: 'm', text: 'é'.repeat(RECORD_LIMITS.maxTextBytes) })).toEqual({
      code: 'TOO_LARGE',
      field: 'text',
    });
    const keys = Object.fromEntries(manyCaptions(RECORD_LIMITS.maxMetadataKeys + 1).map((k) => [k, 1]));
    expect(rejects({ id: 'm', text: 'x', metadata: keys })).toEqual({ code: 'TOO_LARGE', field: 'metadata' });
    const big = 'x'.repeat(RECORD_LIMITS.maxTextBytes - 10);
    const captions = Array.from({ length: 10 }, () => big);
    expect(rejects({ id: 'm', text: 'x', derived: { captions } })).toEqual({
      code: 'TOO_LARGE',
      field: 'derived',
    });
  });

  it('checks metadata depth without recursion, for any depth', () => {
    expect(
      toMemoryRecord({ id: 'm', text: 'x', metadata: deepObject(RECORD_LIMITS.maxMetadataDepth) }, defaults)
        .ok,
    ).toBe(true);
    for (const depth of [RECORD_LIMITS.maxMetadataDepth + 1, 10_000, 200_000]) {
      expect(rejects({ id: 'm', text: 'x', metadata: deepObject(depth) })).toEqual({
        code: 'TOO_LARGE',
        field: 'metadata',
      });
    }
    // Deep nesting under a field the schema types strictly fails as TOO_LARGE too, never as a crash.
    expect(rejects({ id: 'm', text: 'x', location: deepObject(50_000) })).toEqual({
      code: 'TOO_LARGE',
      field: 'location',
    });
  });

  it('keeps INVALID_INPUT for shape errors', () => {
    expect(rejects({ id: 'm', text: 7 })).toEqual({ code: 'INVALID_INPUT', field: 'text' });
  });

  it('bounds the id to what the verbs address and the sequence to leave room for the next ones', () => {
    expect(rejects({ id: 'x'.repeat(MAX_MEMORY_ID_CHARS + 1), text: 'a' }).field).toBe('id');
    expect(toMemoryRecord({ id: 'x'.repeat(MAX_MEMORY_ID_CHARS), text: 'a' }, defaults).ok).toBe(true);
    expect(rejects({ id: 'm', text: 'a', sequence: MAX_SEQUENCE + 1 }).field).toBe('sequence');
  });
});

describe('the largest id and sequence stay addressable', () => {
  it('an add after the largest sequence, and a listing pages past both', async () => {
    const gm = await openGraphmemix({ db: 'memory:' });
    const long = 'x'.repeat(MAX_MEMORY_ID_CHARS);
    await gm.addMemories('u', [{ id: long, text: 'the last one set by hand', sequence: MAX_SEQUENCE }]);
    await gm.addMemories('u', [{ id: 'next', text: 'one more without a sequence' }]);
    await gm.addMemories('u', [{ id: 'after', text: 'and another' }]);
    const sequences = await Promise.all(
      ['next', 'after'].map(async (id) => (await gm.getMemory('u', id))?.sequence),
    );
    expect(sequences).toEqual([MAX_SEQUENCE + 1, MAX_SEQUENCE + 2]);
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await gm.listMemories('u', { limit: 1, ...(cursor === undefined ? {} : { cursor }) });
      ids.push(...page.memories.map((m) => m.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(ids).toEqual([long, 'next', 'after']);
    expect((await gm.updateMemory('u', long, { text: 'still addressable' })).changed).toBe(true);
    expect(await gm.deleteMemory('u', long)).toBe(true);
    await gm.close();
  });
});

describe('builders walk any record without overflowing the stack', () => {
  it('views, semantic text, captions and the content hash of a 150k-caption record', () => {
    const record: MemoryRecord = {
      id: 'm',
      contextId: 'ctx',
      kind: 'photo',
      sequence: 0,
      text: '',
      assets: [
        {
          id: 'a',
          kind: 'image',
          uri: '/a.jpg',
          derived: { captions: manyCaptions(150_000), tags: manyCaptions(150_000) },
        },
      ],
      derived: { tags: manyCaptions(150_000) },
    };
    expect(buildViews(record).length).toBeGreaterThan(150_000);
    expect(semanticText(record).length).toBeGreaterThan(150_000);
    expect(recordCaptions(record).length).toBe(150_000);
    expect(contentHash(record)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('canonicalJson of 100k-deep metadata (iterative), same text as JSON with sorted keys', () => {
    expect(canonicalJson(deepObject(100_000)).length).toBe(100_000 * 6 - 4);
    expect(canonicalJson({ b: [1, undefined, { d: 1, c: 'x' }], a: null, u: undefined })).toBe(
      '{"a":null,"b":[1,null,{"c":"x","d":1}]}',
    );
  });
});

describe('one oversized record never poisons a user', () => {
  it('is rejected before commit; the user keeps writing and searching', async () => {
    const gm = await openGraphmemix({ db: ':memory:' });
    await gm.addMemories('alice', [{ id: 'ok0', text: 'the first harmless note about apples' }]);
    const poisoned = await gm.addMemories('alice', [
      {
        id: 'huge',
        assets: [{ id: 'a', kind: 'image', uri: '/a.jpg', derived: { captions: manyCaptions(150_000) } }],
      },
      { id: 'deep', text: 'deep', metadata: deepObject(10_000) },
    ]);
    expect(poisoned.rejected.map((r) => [r.recordId, r.code, r.field])).toEqual([
      ['huge', 'TOO_LARGE', 'assets'],
      ['deep', 'TOO_LARGE', 'metadata'],
    ]);
    expect(poisoned.imported).toBe(0);
    expect(await gm.store.countMemories('alice')).toBe(1);
    const later = await gm.addMemories('alice', [{ id: 'ok1', text: 'a later note about pears' }]);
    expect(later.imported).toBe(1);
    expect((await gm.search('alice', 'pears')).map((hit) => hit.memoryId)).toEqual(['ok1']);
    await gm.close();
  });
});
