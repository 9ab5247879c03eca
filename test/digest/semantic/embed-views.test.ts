import { describe, expect, it } from 'vitest';
import { embedViews } from '../../../src/digest/embed-views.ts';
import type { EmbeddingInput, EmbeddingModel } from '../../../src/providers/model-spec.ts';
import { openStore } from '../../../src/store/open-store.ts';
import type { MemoryRecord } from '../../../src/types/memory-record.ts';

const record = (id: string, text: string, sequence: number): MemoryRecord => ({
  id,
  contextId: 'ctx',
  kind: 'message',
  sequence,
  text,
  assets: [],
});

function axisModel(): EmbeddingModel & { inputs: EmbeddingInput[] } {
  const inputs: EmbeddingInput[] = [];
  return {
    specificationVersion: 'v1',
    provider: 'test',
    modelId: 'axis',
    supportsImages: false,
    inputs,
    async embed(batch) {
      inputs.push(...batch);
      // "a ..." -> x axis, anything else -> y axis, scaled by length so normalisation matters.
      const vectors = batch.map((input) => {
        const text = input.type === 'text' ? input.text : '';
        return Float32Array.from(text.startsWith('a') ? [text.length, 0] : [0, text.length]);
      });
      return { vectors, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, cached: false };
    },
  };
}

describe('embedViews', () => {
  it('embeds text and caption views in batches, stores them, and re-embeds only changed records', async () => {
    const store = await openStore('memory:');
    const records = [record('r1', 'alpha', 1), record('r2', 'beta', 2), record('r3', 'another', 3)];
    const write = (list: MemoryRecord[]) =>
      store.writeMemories(
        'ctx',
        list.map((r) => ({
          record: r,
          views: [
            { memoryId: r.id, kind: 'text' as const, key: 'main', text: r.text },
            { memoryId: r.id, kind: 'ocr' as const, key: 'main', text: 'ignored ocr' },
          ],
          contentHash: r.text,
        })),
      );
    await write(records);
    const model = axisModel();
    const first = await embedViews(store, 'ctx', records, model, { batchSize: 2 });
    expect(first.ok).toBe(true);
    if (!first.ok) return;
    expect(first.space).toBe('embedding:axis');
    expect(first.embedded).toBe(3);
    expect(model.inputs.map((input) => (input.type === 'text' ? input.text : ''))).toEqual([
      'alpha',
      'beta',
      'another',
    ]);
    expect([...first.recordVectors.get('r1')!]).toEqual([1, 0]);

    const changed = [records[0]!, record('r2', 'apple', 2), records[2]!];
    await write(changed);
    const second = await embedViews(store, 'ctx', changed, model);
    expect(second).toMatchObject({ ok: true, embedded: 1, reused: 2 });
    expect(model.inputs).toHaveLength(4);
    await store.close();
  });

  it('returns a warning result instead of throwing when the model fails', async () => {
    const store = await openStore('memory:');
    await store.writeMemories('ctx', [
      {
        record: record('r1', 'alpha', 1),
        views: [{ memoryId: 'r1', kind: 'text', key: 'main', text: 'alpha' }],
        contentHash: 'h',
      },
    ]);
    const broken: EmbeddingModel = {
      ...axisModel(),
      embed: async () => {
        throw new Error('503 from server');
      },
    };
    const result = await embedViews(store, 'ctx', [record('r1', 'alpha', 1)], broken);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.warning).toContain('503');
    await store.close();
  });

  it('refuses a reply it cannot store (NaN, empty, mixed lengths, not numbers, no list) with a warning, storing nothing', async () => {
    const replies: [unknown, string][] = [
      [{ vectors: [Float32Array.from([Number.NaN, 1])] }, 'not finite'],
      [{ vectors: [Float32Array.from([Number.POSITIVE_INFINITY, 1])] }, 'not finite'],
      [{ vectors: [new Float32Array(0)] }, 'values'],
      [{ vectors: ['abc'] }, 'not numbers'],
      [{}, 'no vector list'],
      [undefined, 'no vector list'],
    ];
    for (const [reply, why] of replies) {
      const store = await openStore('memory:');
      await store.writeMemories('ctx', [
        {
          record: record('r1', 'alpha', 1),
          views: [{ memoryId: 'r1', kind: 'text', key: 'main', text: 'alpha' }],
          contentHash: 'h',
        },
      ]);
      const odd = { ...axisModel(), embed: async () => reply } as unknown as EmbeddingModel;
      const result = await embedViews(store, 'ctx', [record('r1', 'alpha', 1)], odd);
      expect(result.ok, why).toBe(false);
      if (!result.ok) expect(result.warning).toContain(why);
      expect(await store.getVectors('ctx', result.space, ['r1'])).toEqual([]);
      await store.close();
    }
    // Lengths that differ from the vectors the space already holds.
    const store = await openStore('memory:');
    const two = [record('r1', 'alpha', 1), record('r2', 'beta', 2)];
    await store.writeMemories(
      'ctx',
      two.map((r) => ({
        record: r,
        views: [{ memoryId: r.id, kind: 'text', key: 'main', text: r.text }],
        contentHash: r.id,
      })),
    );
    expect((await embedViews(store, 'ctx', [two[0]!], axisModel())).ok).toBe(true);
    const wider = { ...axisModel(), embed: async () => ({ vectors: [Float32Array.from([1, 2, 3])] }) };
    const result = await embedViews(store, 'ctx', [two[1]!], wider as unknown as EmbeddingModel);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.warning).toContain('3 dimensions');
    await store.close();
  });
});

describe('embedViews with a vision embedding model', () => {
  it('embeds image views by their pixels when the model supports images, and skips them otherwise', async () => {
    const store = await openStore('memory:');
    const photo: MemoryRecord = {
      id: 'p1',
      contextId: 'ctx',
      kind: 'photo',
      sequence: 1,
      text: '',
      assets: [
        { id: 'a1', kind: 'image', uri: '/photos/tram.jpg', derived: { captions: ['a yellow tram'] } },
      ],
    };
    await store.writeMemories('ctx', [
      {
        record: photo,
        views: [
          { memoryId: 'p1', kind: 'caption', key: 'a1', text: 'a yellow tram' },
          { memoryId: 'p1', kind: 'image', key: 'a1', text: '', uri: '/photos/tram.jpg' },
        ],
        contentHash: 'h',
      },
    ]);
    const textOnly = axisModel();
    await embedViews(store, 'ctx', [photo], textOnly);
    expect(textOnly.inputs).toEqual([{ type: 'text', text: 'a yellow tram' }]);

    const vision = { ...axisModel(), modelId: 'vision', supportsImages: true };
    const inputs: EmbeddingInput[] = [];
    vision.embed = async (batch) => {
      inputs.push(...batch);
      return {
        vectors: batch.map(() => Float32Array.from([1, 0])),
        usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
        cached: false,
      };
    };
    const result = await embedViews(store, 'ctx', [photo], vision);
    expect(result.ok).toBe(true);
    expect(inputs).toEqual([
      { type: 'text', text: 'a yellow tram' },
      { type: 'image', uri: '/photos/tram.jpg' },
    ]);
    expect((await store.getVectors('ctx', 'embedding:vision')).map((row) => row.kind).sort()).toEqual([
      'caption',
      'image',
    ]);
  });
});
