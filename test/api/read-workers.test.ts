import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { CloseOptions } from '../../src/graphmemix-api.ts';
import type { RetrievalResult } from '../../src/pipeline/retrieval-result.ts';
import { createModels } from '../../src/providers/create-models.ts';
import type { ResolvedModelConfig } from '../../src/providers/model-config.ts';
import { splitModelConcurrency } from '../../src/read-workers/split-model-concurrency.ts';
import { readPoolOf, withReadWorkers } from '../../src/read-workers/with-read-workers.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';

/** The parts of a result that must not depend on the thread it was computed in (timings do). */
function comparable(result: RetrievalResult) {
  const { trace, ...rest } = result;
  return { ...rest, flags: trace.flags, components: trace.components, calibration: trace.calibration };
}

describe('openGraphmemix({ readWorkers })', () => {
  let dir: string;
  let db: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gm-read-workers-'));
    db = join(dir, 'a.db');
    const gm = await openGraphmemix({ db });
    await gm.addMemories(
      'alice',
      Array.from({ length: 400 }, (_, i) => ({
        id: `m${i}`,
        text: `note ${i} about the pottery workshop number ${i % 37} and the train ticket ${i % 11}`,
        sessionId: `s${Math.floor(i / 8)}`,
        timestamp: new Date(Date.UTC(2024, 0, 1) + i * 3_600_000).toISOString(),
      })),
    );
    await gm.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("passes close's mode to the archive it wraps (serve's SIGTERM stops a compaction under way)", async () => {
    const inner = await openGraphmemix({ db });
    const modes: (CloseOptions | undefined)[] = [];
    const pooled = await withReadWorkers(
      {
        ...inner,
        close: (closeOptions) => {
          modes.push(closeOptions);
          return inner.close(closeOptions);
        },
      },
      { db, readWorkers: 1 },
    );
    await pooled.close({ background: 'stop' });
    expect(modes).toEqual([{ background: 'stop' }]);
  });

  it('answers retrieve, answer and search in worker threads with the same results as in-thread', async () => {
    const here = await openGraphmemix({ db, readonly: true });
    const pooled = await openGraphmemix({ db, readWorkers: 2 });
    try {
      expect(readPoolOf(pooled)?.size).toBe(2);
      // Nothing of the pipeline runs in this thread: its store is never searched.
      let searchedHere = 0;
      const searchHere = pooled.store.searchLexical.bind(pooled.store);
      pooled.store.searchLexical = (...args) => {
        searchedHere++;
        return searchHere(...args);
      };
      const question = 'when was the pottery workshop number 12?';
      const options = { k: 5, verifiers: 'offline' as const };
      const [expected, got] = await Promise.all([
        here.retrieve('alice', question, options),
        pooled.retrieve('alice', question, options),
      ]);
      expect(comparable(got)).toEqual(comparable(expected));
      expect(got.evidence.length).toBeGreaterThan(0);
      const answer = await pooled.answer('alice', question, options);
      expect(answer).toMatchObject({ answered: false, answer: '' });
      expect(answer.evidence.map((e) => e.memoryId)).toEqual(expected.evidence.map((e) => e.memoryId));
      const hits = await pooled.search('alice', 'pottery workshop number 12', { k: 3 });
      expect(hits).toEqual(await here.search('alice', 'pottery workshop number 12', { k: 3 }));
      expect(await pooled.searchMemories('alice', 'pottery workshop number 12', { k: 3 })).toEqual({
        hits,
        flags: [],
      });
      expect(searchedHere).toBe(0);
      // Reads through this thread's own store still work (getMemory, listing).
      expect(await pooled.getMemory('alice', 'm12')).toMatchObject({ id: 'm12' });
    } finally {
      await here.close();
      await pooled.close();
    }
  });

  it('sees writes committed by the write worker after it started', async () => {
    const gm = await openGraphmemix({ db, writeWorker: true, readWorkers: 1 });
    try {
      await gm.addMemories('bob', [{ id: 'b1', text: 'the violet submarine docked in Porto' }]);
      const hits = await gm.search('bob', 'violet submarine', { k: 1 });
      expect(hits[0]?.memoryId).toBe('b1');
    } finally {
      await gm.close();
    }
  });

  it('pages listMemories in a worker (filtered pages read thousands of rows): the same pages, writes seen, codes kept', async () => {
    const here = await openGraphmemix({ db, readonly: true });
    const gm = await openGraphmemix({ db, writeWorker: true, readWorkers: 1 });
    try {
      const filter = { from: '2024-01-03T00:00:00Z', to: '2024-01-09T23:59:59Z' };
      let cursor: string | undefined;
      let pages = 0;
      do {
        const options = { filter, limit: 25, ...(cursor === undefined ? {} : { cursor }) };
        const before = readPoolOf(gm)!.stats().running;
        const pending = gm.listMemories('alice', options);
        // The page is a call of the pool while it runs, not a read of this thread's connection.
        expect(readPoolOf(gm)!.stats().running + readPoolOf(gm)!.stats().queued).toBe(before + 1);
        const page = await pending;
        expect(page).toEqual(await here.listMemories('alice', options));
        cursor = page.nextCursor;
        pages++;
      } while (cursor !== undefined);
      expect(pages).toBeGreaterThan(4);
      await gm.addMemories('alice', [
        { id: 'late', text: 'added after the pool started', timestamp: '2024-01-05T00:30:00Z' },
      ]);
      const ids: string[] = [];
      cursor = undefined;
      do {
        const page = await gm.listMemories('alice', {
          filter,
          limit: 200,
          ...(cursor === undefined ? {} : { cursor }),
        });
        ids.push(...page.memories.map((memory) => memory.id));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      expect(ids).toContain('late');
      await gm.deleteMemory('alice', 'late');
      await expect(gm.listMemories('alice', { cursor: 'not-a-cursor' })).rejects.toMatchObject({
        name: 'GraphmemixError',
        code: 'INVALID_INPUT',
      });
    } finally {
      await gm.close();
      await here.close();
    }
  });

  it('keeps error codes across the thread and honours an aborted signal', async () => {
    const gm = await openGraphmemix({ db, readWorkers: 1 });
    try {
      await expect(gm.retrieve('alice', '   ')).rejects.toMatchObject({
        name: 'GraphmemixError',
        code: 'INVALID_INPUT',
        location: { field: 'prompt' },
      });
      await expect(gm.retrieve('alice', 'pottery', { signal: AbortSignal.abort() })).rejects.toMatchObject({
        name: 'AbortError',
      });
      // The worker is still fine afterwards.
      await expect(gm.retrieve('alice', 'pottery', { verifiers: 'offline' })).resolves.toMatchObject({
        contextId: 'alice',
      });
    } finally {
      await gm.close();
    }
  });

  it('rebuilds the models in the workers from the plain config (answer reaches the reader endpoint)', async () => {
    const fake = await startFakeOpenAIServer({
      handlers: { chat: () => ({ type: 'text', content: 'In workshop 12.' }) },
    });
    const config: ResolvedModelConfig = { reader: { baseUrl: fake.baseUrl, model: 'fake-reader' } };
    const gm = await openGraphmemix({
      db,
      readonly: true,
      models: createModels(config),
      readWorkers: { size: 2, modelConfig: config },
    });
    try {
      expect(readPoolOf(gm)?.size).toBe(2);
      const answer = await gm.answer('alice', 'which pottery workshop?', { verifiers: 'offline', k: 3 });
      expect(answer).toMatchObject({ answered: true, answer: 'In workshop 12.' });
      expect(answer.trace.modelCalls.map((call) => call.stage)).toEqual(['reader']);
      expect(fake.requestsFor('chat')).toHaveLength(1);
    } finally {
      await gm.close();
      await fake.close();
    }
  });

  it('divides an endpoint’s concurrency limit among the workers (a limiter lives in one thread)', () => {
    const config: ResolvedModelConfig = {
      reader: { baseUrl: 'http://127.0.0.1:1/v1', model: 'r', maxConcurrency: 8 },
      verifier: { baseUrl: 'http://127.0.0.1:1/v1', model: 'v' },
      embedding: { baseUrl: 'http://127.0.0.1:2/v1', model: 'e', supportsImages: false, maxConcurrency: 2 },
    };
    const split = splitModelConcurrency(config, 3);
    expect(split.reader?.maxConcurrency).toBe(2);
    expect(split.verifier?.maxConcurrency).toBe(2); // the default 8, divided
    expect(split.embedding).toMatchObject({ maxConcurrency: 1, supportsImages: false });
    expect(splitModelConcurrency(config, 1)).toBe(config);
  });

  it('stays in this thread for in-memory stores and for model objects without their config', async () => {
    const memory = await openGraphmemix({ db: 'memory:', readWorkers: 2 });
    expect(readPoolOf(memory)).toBeUndefined();
    await memory.close();
    const withModels = await openGraphmemix({
      db,
      readonly: true,
      readWorkers: 2,
      models: { reader: { specificationVersion: 'v1' } as never },
    });
    expect(readPoolOf(withModels)).toBeUndefined();
    await withModels.close();
  });
});
