import { describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { retrieveEvidence } from '../../src/pipeline/retrieve-evidence.ts';
import type { ChatModel, ModelSet } from '../../src/providers/model-spec.ts';
import type { ArchiveStore, UnitOfWorkOptions } from '../../src/store/archive-store-spec.ts';

/**
 * retrieveEvidence's choice of read units: offline, one read unit holds the whole question; with a verifier
 * model, no model call may wait inside a read unit that holds a transaction (PostgreSQL's REPEATABLE READ
 * unit would stay open across the call), so only `remote` units may span the verifiers.
 */
function recordingStore(store: ArchiveStore) {
  const units: UnitOfWorkOptions[] = [];
  const open = { local: 0 };
  const wrapped = new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'unitOfWork')
        return async <T>(_contextId: string, work: () => Promise<T>, options?: UnitOfWorkOptions) => {
          units.push({ ...options });
          const local = options?.read === true && options.remote !== true;
          if (local) open.local++;
          try {
            return await work();
          } finally {
            if (local) open.local--;
          }
        };
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: wrapped, units, open };
}

function verifierModel(openLocalUnits: () => number, seen: number[]): ChatModel {
  return {
    specificationVersion: 'v1',
    provider: 'test',
    modelId: 'verifier',
    async chat() {
      seen.push(openLocalUnits());
      return {
        text: '{"scores": []}',
        usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
        model: 'verifier',
        cached: false,
        latencyMs: 1,
      };
    },
  };
}

async function withArchive(run: (store: ArchiveStore) => Promise<void>): Promise<void> {
  const gm = await openGraphmemix({ db: ':memory:' });
  try {
    await gm.addMemories('alice', [
      { id: 'm1', text: 'The design review moved to Monday', timestamp: '2024-04-03' },
      { id: 'm2', text: 'Lunch with Bob on Friday', timestamp: '2024-04-04' },
      { id: 'm3', text: 'The review needs the slides from Bob', timestamp: '2024-04-05' },
    ]);
    await run(gm.store);
  } finally {
    await gm.close();
  }
}

describe('retrieveEvidence read units', () => {
  it('offline: the whole question runs in one local read unit', async () => {
    await withArchive(async (store) => {
      const recorded = recordingStore(store);
      const result = await retrieveEvidence({ store: recorded.store, models: {} }, 'alice', {
        prompt: 'When is the design review?',
      });
      expect(result.evidence.length).toBeGreaterThan(0);
      expect(recorded.units[0]).toMatchObject({ read: true, remote: false });
      expect(recorded.open.local).toBe(0);
    });
  });

  it('with a verifier model: the outer unit is remote and no model call waits inside a local read unit', async () => {
    await withArchive(async (store) => {
      const recorded = recordingStore(store);
      const seen: number[] = [];
      const models: ModelSet = { verifier: verifierModel(() => recorded.open.local, seen) };
      const result = await retrieveEvidence({ store: recorded.store, models }, 'alice', {
        prompt: 'When is the design review?',
      });
      expect(result.evidence.length).toBeGreaterThan(0);
      expect(recorded.units[0]).toMatchObject({ read: true, remote: true });
      // Retrieval + expansion, and the stages after the verifiers, still get local read units of their own.
      expect(
        recorded.units.filter((u) => u.read === true && u.remote !== true).length,
      ).toBeGreaterThanOrEqual(2);
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.every((depth) => depth === 0)).toBe(true);
    });
  });

  it('with verifiers forced offline, a configured verifier model does not make the unit remote', async () => {
    await withArchive(async (store) => {
      const recorded = recordingStore(store);
      const seen: number[] = [];
      const models: ModelSet = { verifier: verifierModel(() => recorded.open.local, seen) };
      await retrieveEvidence(
        { store: recorded.store, models },
        'alice',
        { prompt: 'When is the design review?' },
        { verifiers: 'offline' },
      );
      expect(seen).toEqual([]);
      expect(recorded.units[0]).toMatchObject({ read: true, remote: false });
    });
  });
});
