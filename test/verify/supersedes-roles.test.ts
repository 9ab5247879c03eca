import { describe, expect, it } from 'vitest';
import type { ChatModel, ChatRequest } from '../../src/providers/model-spec.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import type { SchemaRelationType } from '../../src/types/relation.ts';
import { createAnchorNoveltyEdgeVerifier } from '../../src/verify/anchor-novelty-edge-verifier.ts';
import { ecvMessages } from '../../src/verify/ecv-protocol.ts';
import type { EdgeVerifierInput } from '../../src/verify/edge-verifier-spec.ts';
import { createModelEdgeVerifier } from '../../src/verify/model-edge-verifier.ts';

const record = (id: string, sequence: number, text: string, extra: Partial<MemoryRecord> = {}) => ({
  id,
  contextId: 'c',
  kind: 'note' as const,
  sequence,
  text,
  assets: [],
  ...extra,
});
// Versions of one fact differ in one value and share every other word (a near-duplicate by tokens).
const older = record('old', 1, 'Dentist appointment with Dr. Ruiz on Monday June 3 at 9:00');
const newer = record('new', 2, 'Dentist appointment with Dr. Ruiz on Tuesday June 4 at 9:00', {
  supersedes: ['old'],
});

function input(types: SchemaRelationType[], anchor = older, candidate = newer): EdgeVerifierInput {
  return {
    question: { prompt: 'When is the dentist appointment with Dr. Ruiz now?', imageCaptions: [] },
    anchors: [{ memoryId: anchor.id, alias: 'C00', record: anchor, retrievalScore: 0.9, isAnchor: true }],
    candidates: [
      {
        candidate: {
          memoryId: candidate.id,
          alias: 'C01',
          record: candidate,
          retrievalScore: 0.8,
          isAnchor: false,
        },
        relations: [{ anchorId: anchor.id, relationTypes: types }],
      },
    ],
  };
}

describe('supersedes in the offline edge verifier (anchor-novelty)', () => {
  it('judges two versions as an update (clarification, kept), in both directions', async () => {
    const verifier = createAnchorNoveltyEdgeVerifier();
    for (const [anchor, candidate] of [
      [older, newer],
      [newer, older],
    ] as const) {
      const result = await verifier.verify(input(['supersedes'], anchor, candidate));
      expect(result.ok && result.judgements[0]).toMatchObject({
        role: 'clarification',
        incrementalSupport: 5,
        kept: true,
      });
    }
  });

  it('the same pair without the relation is a conflict (differing values, no cue), dropped', async () => {
    const result = await createAnchorNoveltyEdgeVerifier().verify(input(['same_record']));
    expect(result.ok && result.judgements[0]).toMatchObject({ role: 'conflict', kept: false });
  });

  it('a version unrelated to the question stays irrelevant', async () => {
    const unrelated = {
      ...input(['supersedes']),
      question: { prompt: 'Which kayak did I buy in Lisbon?', imageCaptions: [] },
    };
    const result = await createAnchorNoveltyEdgeVerifier().verify(unrelated);
    expect(result.ok && result.judgements[0]).toMatchObject({ role: 'irrelevant', kept: false });
  });
});

function scriptedModel(reply: object, seen: ChatRequest[]): ChatModel {
  return {
    specificationVersion: 'v1',
    provider: 'test',
    modelId: 'scripted',
    async chat(request) {
      seen.push(request);
      return {
        text: JSON.stringify(reply),
        usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
        model: 'scripted',
        cached: false,
        latencyMs: 1,
      };
    },
  };
}

describe('supersedes in the model edge verifier (ECV)', () => {
  it('tells the model which candidate is the newer version and that versions are updates', () => {
    const [system, user] = ecvMessages(input(['supersedes']));
    expect(String(system!.content)).toContain('"supersedes"');
    const payload = JSON.parse(String(user!.content));
    expect(payload.candidates[0].eligible_anchor_relations[0]).toEqual({
      anchor_id: 'C00',
      relation_types: ['supersedes'],
      candidate_version: 'newer',
    });
    const [, reversed] = ecvMessages(input(['supersedes'], newer, older));
    expect(JSON.parse(String(reversed!.content)).candidates[0].eligible_anchor_relations[0]).toMatchObject({
      candidate_version: 'older',
    });
  });

  it('a "redundant" verdict on versions becomes clarification with the model score; other pairs keep it', async () => {
    const reply = {
      candidates: [
        { id: 'C01', direct_support: 0, best_anchor_id: 'C00', incremental_support: 3, role: 'redundant' },
      ],
    };
    const seen: ChatRequest[] = [];
    const versions = await createModelEdgeVerifier(scriptedModel(reply, seen)).verify(input(['supersedes']));
    expect(versions.ok && versions.judgements[0]).toMatchObject({
      role: 'clarification',
      incrementalSupport: 3,
      kept: true,
    });
    const thread = await createModelEdgeVerifier(scriptedModel(reply, seen)).verify(input(['same_record']));
    expect(thread.ok && thread.judgements[0]).toMatchObject({ role: 'redundant', kept: false });
    expect(seen).toHaveLength(2);
  });
});
