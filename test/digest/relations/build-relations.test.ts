import { describe, expect, it } from 'vitest';
import { buildRelations } from '../../../src/digest/build-relations.ts';
import {
  mergeRelationEdges,
  RelationEdgeMerger,
} from '../../../src/digest/relations/merge-relation-edges.ts';
import { mulberry32 } from '../../../src/digest/semantic/seeded-random.ts';
import type { EmbeddingInput, EmbeddingModel } from '../../../src/providers/model-spec.ts';
import type { ArchiveStore } from '../../../src/store/archive-store-spec.ts';
import { openStore } from '../../../src/store/open-store.ts';
import type { MemoryRecord } from '../../../src/types/memory-record.ts';
import {
  edgeStrength,
  RELATION_TYPES,
  type RelationType,
  SCHEMA_RELATION_TYPES,
} from '../../../src/types/relation.ts';
import type { MemoryView } from '../../../src/types/view.ts';
import { makeEmail, makePhoto, makeRecord } from './make-record.ts';

describe('mergeRelationEdges', () => {
  it('makes one edge per pair with all its types; schema strength 0.99, else the similarity', () => {
    const edges = mergeRelationEdges(
      'ctx',
      {
        same_round: [['a', 'b']],
        consecutive_turn: [
          ['a', 'b'],
          ['b', 'c'],
        ],
      },
      [
        { a: 'b', b: 'a', similarity: 0.4 },
        { a: 'c', b: 'd', similarity: 0.3 },
      ],
    );
    expect(edges).toEqual([
      {
        contextId: 'ctx',
        a: 'a',
        b: 'b',
        types: ['same_round', 'consecutive_turn', 'semantic_knn'],
        strength: 0.99,
        similarity: 0.4,
      },
      { contextId: 'ctx', a: 'b', b: 'c', types: ['consecutive_turn'], strength: 0.99 },
      { contextId: 'ctx', a: 'c', b: 'd', types: ['semantic_knn'], strength: 0.3, similarity: 0.3 },
    ]);
  });
});

describe('RelationEdgeMerger', () => {
  it('merges random pairs (repeats, both orientations, self-pairs) as a per-pair string map does', () => {
    const random = mulberry32(3);
    const id = () => `m${Math.floor(random() * 60)}${random() < 0.3 ? 'x' : ''}`;
    const types = ['same_round', 'consecutive_turn', 'supersedes'] as const;
    const expected = new Map<string, { types: Set<RelationType>; similarity?: number }>();
    const merger = new RelationEdgeMerger();
    for (const type of types) {
      const pairs = Array.from({ length: 400 }, () => [id(), id()] as const);
      merger.addSchema(type, pairs);
      for (const [x, y] of pairs) {
        if (x === y) continue;
        const key = x < y ? `${x}|${y}` : `${y}|${x}`;
        const entry = expected.get(key) ?? { types: new Set() };
        entry.types.add(type);
        expected.set(key, entry);
      }
    }
    const semantic = Array.from({ length: 300 }, () => ({ a: id(), b: id(), similarity: random() }));
    merger.addSemantic(semantic);
    for (const { a, b, similarity } of semantic) {
      if (a === b) continue;
      const key = a < b ? `${a}|${b}` : `${b}|${a}`;
      const entry = expected.get(key) ?? { types: new Set() };
      entry.types.add('semantic_knn');
      entry.similarity = similarity;
      expected.set(key, entry);
    }
    const edges = merger.edges('ctx');
    expect(edges.map((e) => `${e.a}|${e.b}`)).toEqual(
      [...expected.keys()].sort((x, y) => {
        const [xa, xb] = x.split('|') as [string, string];
        const [ya, yb] = y.split('|') as [string, string];
        return xa < ya ? -1 : xa > ya ? 1 : xb < yb ? -1 : xb > yb ? 1 : 0;
      }),
    );
    for (const edge of edges) {
      const entry = expected.get(`${edge.a}|${edge.b}`)!;
      expect(edge.types).toEqual(RELATION_TYPES.filter((type) => entry.types.has(type)));
      expect(edge.similarity).toBe(entry.similarity);
      expect(edge.strength).toBe(edgeStrength(edge.types, entry.similarity));
    }
    expect(merger.edges('ctx')).toEqual([]);
  });
});

/** Counts calls to replaceEdges while delegating everything to the real store. */
function countingStore(store: ArchiveStore): {
  store: ArchiveStore;
  replaceCalls: Array<readonly RelationType[]>;
} {
  const replaceCalls: Array<readonly RelationType[]> = [];
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'replaceEdges') {
        return (contextId: string, types: readonly RelationType[], edges: never) => {
          replaceCalls.push(types);
          return target.replaceEdges(contextId, types, edges);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: proxy, replaceCalls };
}

function viewsOf(record: MemoryRecord): MemoryView[] {
  const views: MemoryView[] = [];
  if (record.text) views.push({ memoryId: record.id, kind: 'text', key: 'main', text: record.text });
  for (const asset of record.assets) {
    for (const [i, caption] of (asset.derived?.captions ?? []).entries()) {
      views.push({ memoryId: record.id, kind: 'caption', key: `${asset.id}:${i}`, text: caption });
    }
  }
  return views;
}

async function storeWith(contextId: string, records: MemoryRecord[]): Promise<ArchiveStore> {
  const store = await openStore('memory:');
  await store.writeMemories(
    contextId,
    records.map((record) => ({
      record: { ...record, contextId },
      views: viewsOf(record),
      contentHash: `${record.id}:${record.text}`,
    })),
  );
  return store;
}

function archive(): MemoryRecord[] {
  return [
    makeRecord('u1', {
      sessionId: 's1',
      roundId: 'r1',
      sequence: 1,
      text: 'We hiked the volcano crater trail',
    }),
    makeRecord('a1', {
      sessionId: 's1',
      roundId: 'r1',
      sequence: 2,
      text: 'The volcano crater trail sounds steep',
    }),
    makeRecord('u2', {
      sessionId: 's1',
      roundId: 'r2',
      sequence: 3,
      text: 'Then we ate grilled octopus downtown',
    }),
    makeRecord('a2', {
      sessionId: 's1',
      roundId: 'r2',
      sequence: 4,
      text: 'Grilled octopus is a local favourite',
    }),
    makeRecord('x1', { sessionId: 's2', sequence: 5, text: 'Unrelated chat about tax forms' }),
    {
      ...makePhoto('p1', '2024-05-07T10:00:00', 38.7, -9.1, { caption: 'volcano crater at sunrise' }),
      sequence: 6,
    },
    {
      ...makePhoto('p2', '2024-05-07T10:20:00', 38.7, -9.1, { caption: 'volcano crater rim trail' }),
      sequence: 7,
    },
    {
      ...makeEmail(
        'e1',
        '2024-04-01T09:00:00Z',
        'Volcano tour booking',
        'Ref: VT-4471. Your crater tour is on May 7, 2024.',
      ),
      sequence: 8,
    },
    { ...makeEmail('e2', '2024-04-03T09:00:00Z', 'Re: Volcano tour booking', 'Thanks!'), sequence: 9 },
  ];
}

describe('buildRelations', () => {
  it('computes every relation, writes the schema types with one replaceEdges call and the semantic type by compaction, and counts pairs per type', async () => {
    const { store, replaceCalls } = countingStore(await storeWith('ctx', archive()));
    const result = await buildRelations(store, 'ctx');
    expect(replaceCalls).toEqual([SCHEMA_RELATION_TYPES, ['semantic_knn']]);
    expect(result.semanticSpace).toBe('tfidf');
    expect(result.counts).toMatchObject({
      same_round: 2,
      consecutive_turn: 3,
      event_bridge: 1,
      same_record: 1,
      record_grounding: 2,
    });
    expect(result.counts.semantic_knn).toBeGreaterThan(0);
    expect(await store.countEdges('ctx')).toEqual(result.counts);
    for (const step of ['load', 'same_round', 'semantic_knn', 'write', 'total']) {
      expect(result.seconds[step]).toBeGreaterThanOrEqual(0);
    }
    const [edge] = await store
      .neighbors('ctx', ['u1'])
      .then((edges) => edges.filter((e) => e.b === 'u1' || e.a === 'u1'));
    expect(edge?.strength).toBe(0.99);
    await store.close();
  });

  it('is idempotent and keeps contexts apart', async () => {
    const store = await storeWith('ctx', archive());
    await store.writeMemories('other', [
      {
        record: makeRecord('o1', { contextId: 'other', sessionId: 's', text: 'volcano' }),
        views: [],
        contentHash: 'o1',
      },
      {
        record: makeRecord('o2', { contextId: 'other', sessionId: 's', text: 'volcano' }),
        views: [],
        contentHash: 'o2',
      },
    ]);
    const first = await buildRelations(store, 'ctx');
    const second = await buildRelations(store, 'ctx');
    expect(second.counts).toEqual(first.counts);
    const other = await buildRelations(store, 'other');
    expect(other.counts.consecutive_turn).toBe(1);
    expect(await store.countEdges('ctx')).toEqual(first.counts);
    await store.close();
  });

  it('rejects a bad k with INVALID_INPUT', async () => {
    const store = await storeWith('ctx', archive());
    await expect(buildRelations(store, 'ctx', { k: 0 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await store.close();
  });

  it('uses and reuses dense embeddings when a model is configured', async () => {
    const store = await storeWith('ctx', archive());
    const model = fakeEmbeddingModel();
    const first = await buildRelations(store, 'ctx', { embedding: model });
    expect(first.semanticSpace).toBe('embedding:fake-embed');
    expect(first.warnings).toEqual([]);
    expect(first.counts.semantic_knn).toBeGreaterThan(0);
    const embeddedOnce = model.inputs.length;
    expect(embeddedOnce).toBe(9); // 7 text views + 2 captions (the photos have no text)
    expect(await store.getVectors('ctx', 'embedding:fake-embed')).toHaveLength(9);
    await buildRelations(store, 'ctx', { embedding: model });
    expect(model.inputs.length).toBe(embeddedOnce);
    await store.close();
  });

  it('degrades to tfidf with a warning when the model fails', async () => {
    const store = await storeWith('ctx', archive());
    const failing = fakeEmbeddingModel(true);
    const offline = await buildRelations(store, 'ctx');
    const result = await buildRelations(store, 'ctx', { embedding: failing });
    expect(result.semanticSpace).toBe('tfidf');
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toContain('fake-embed');
    expect(result.counts).toEqual(offline.counts);
    await store.close();
  });
});

/** Hashes words into 16 dimensions: similar texts get similar vectors; records every input it embeds. */
function fakeEmbeddingModel(fail = false): EmbeddingModel & { inputs: EmbeddingInput[] } {
  const inputs: EmbeddingInput[] = [];
  return {
    specificationVersion: 'v1',
    provider: 'test',
    modelId: 'fake-embed',
    supportsImages: false,
    inputs,
    async embed(batch) {
      if (fail) throw new Error('connection refused');
      inputs.push(...batch);
      const vectors = batch.map((input) => {
        const vector = new Float32Array(16);
        const text = input.type === 'text' ? input.text : input.uri;
        for (const word of text.toLowerCase().split(/\W+/).filter(Boolean)) {
          let hash = 0;
          for (const char of word) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
          vector[hash % 16]! += 1;
        }
        return vector;
      });
      return { vectors, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, cached: false };
    },
  };
}
