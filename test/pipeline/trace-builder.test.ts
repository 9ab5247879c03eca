import { describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { retrieveEvidence } from '../../src/pipeline/retrieve-evidence.ts';
import { TraceBuilder } from '../../src/pipeline/trace-builder.ts';

/** A clock that advances by the given steps, one per reading. */
function steppingClock(steps: number[]): () => number {
  let now = 0;
  let index = 0;
  return () => {
    now += steps[index++] ?? 0;
    return now;
  };
}

describe('TraceBuilder', () => {
  it('charges each lap the time since the previous one, and totals from the start', () => {
    // readings: start 0, lap 5, lap 7 (+2), lap 17 (+10), build 18
    const trace = new TraceBuilder(steppingClock([0, 5, 2, 10, 1]));
    trace.lap('retrieve');
    trace.lap('verify');
    trace.lap('retrieve');
    trace.flag('no_verifier');
    trace.flag('empty_context', false);
    trace.call({
      stage: 'node_verifier',
      model: 'm',
      attempts: 1,
      ok: true,
      cached: false,
      latencyMs: 3,
      usage: { promptTokens: 4, completionTokens: 2, totalTokens: 6 },
    });
    const built = trace.build({ components: { x: 'y' }, calibration: { a: 1, b: 2, c: 3, key: 'k' } });
    expect(built.timings).toEqual({ retrieve: 15, verify: 2 });
    expect(built.totalMs).toBe(18);
    expect(built.flags).toEqual(['no_verifier']);
    expect(built.usage).toEqual({ promptTokens: 4, completionTokens: 2, totalTokens: 6 });
  });

  it('retrieveEvidence reports every stage through the injected clock', async () => {
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      await gm.addMemories('alice', [
        { id: 'm1', text: 'The design review moved to Monday', timestamp: '2024-04-03' },
        { id: 'm2', text: 'Lunch with Bob on Friday', timestamp: '2024-04-04' },
      ]);
      const result = await retrieveEvidence(
        { store: gm.store, models: {}, clock: steppingClock([100, 1, 1, 1, 1, 1, 1]) },
        'alice',
        { prompt: 'When is the design review?' },
      );
      expect(result.trace.timings).toEqual({ retrieve: 1, expand: 1, verify: 1, solve: 1, packet: 1 });
      expect(result.trace.totalMs).toBe(6);
      expect(result.evidence[0]?.memoryId).toBe('m1');
    } finally {
      await gm.close();
    }
  });
});
