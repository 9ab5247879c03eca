import { describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { calibrationKey, calibrationMetaKey } from '../../src/pipeline/prize-calibration.ts';
import type { EmbeddingModel } from '../../src/providers/model-spec.ts';
import { retrieverName } from '../../src/retrieval/multi-view-retriever.ts';

/** A local embedding model (letter counts): a configuration no calibration is shipped for. */
const letters: EmbeddingModel = {
  specificationVersion: 'v1',
  provider: 'test',
  modelId: 'letter-counts',
  supportsImages: false,
  async embed(inputs) {
    const vectors = inputs.map((input) => {
      const vector = new Float32Array(26);
      const text = input.type === 'text' ? input.text.toLowerCase() : '';
      for (const char of text) {
        const at = char.charCodeAt(0) - 97;
        if (at >= 0 && at < 26) vector[at]! += 1;
      }
      return vector;
    });
    return { vectors, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, cached: false };
  },
};

const records = [
  { id: 'm1', text: 'The design review moved to Monday', timestamp: '2024-04-03' },
  { id: 'm2', text: 'Lunch with Bob at noon', timestamp: '2024-04-04' },
];

describe('calibration honesty', () => {
  it('the offline configuration uses its shipped fit and is not flagged', async () => {
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      await gm.addMemories('alice', records);
      const result = await gm.retrieve('alice', 'When is the design review?');
      expect(result.trace.calibration.source).toBe('default');
      expect(result.trace.calibration.fitted).toBe(true);
      expect(result.trace.flags).not.toContain('calibration_unfitted');
    } finally {
      await gm.close();
    }
  });

  it("a configuration nothing was fitted for uses the paper's values, flagged; a stored fit clears it", async () => {
    const gm = await openGraphmemix({ db: ':memory:', models: { embedding: letters } });
    try {
      await gm.addMemories('alice', records);
      const unfitted = await gm.retrieve('alice', 'When is the design review?');
      expect(unfitted.trace.calibration.source).toBe('paper');
      expect(unfitted.trace.calibration.fitted).toBe(false);
      expect(unfitted.trace.flags).toContain('calibration_unfitted');

      const key = calibrationKey({
        retriever: retrieverName(letters),
        nodeVerifier: unfitted.trace.components.nodeVerifier!,
        edgeVerifier: unfitted.trace.components.edgeVerifier!,
      });
      await gm.store.setMeta(calibrationMetaKey(key), { a: 4, b: 0.2, c: -5 });
      const fitted = await gm.retrieve('alice', 'When is the design review?');
      expect(fitted.trace.calibration).toMatchObject({ a: 4, b: 0.2, c: -5, source: 'store', fitted: true });
      expect(fitted.trace.flags).not.toContain('calibration_unfitted');
    } finally {
      await gm.close();
    }
  });
});
