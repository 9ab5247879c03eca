import { describe, expect, it } from 'vitest';
import { INGEST_BATCH_SIZE, ingestItems, UNSCHEDULED_INGEST_BATCH_SIZE } from '../../src/digest/ingest.ts';
import { GraphmemixError } from '../../src/errors/graphmemix-error.ts';
import type { ImportItem } from '../../src/importers/importer-spec.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';

function recordItem(record: Partial<MemoryRecord> & { id: string }, line: number): ImportItem {
  return { type: 'record', record: record as MemoryRecord, source: { file: 'in.jsonl', line } };
}

function messages(count: number, contextId = 'ctx'): ImportItem[] {
  return Array.from({ length: count }, (_, i) =>
    recordItem(
      {
        id: `m${i}`,
        contextId,
        kind: 'message',
        sequence: i,
        text: `message number ${i} about topic ${i % 7}`,
        assets: [],
      },
      i + 1,
    ),
  );
}

async function snapshot(store: ArchiveStore, contextId: string) {
  const records = await store.listMemories(contextId);
  const views = await store.getViews(
    contextId,
    records.map((r) => r.id),
  );
  // recordedAt is the write clock (two runs differ there only); everything else must match.
  const content = records.map(({ recordedAt: _clock, ...rest }) => rest);
  return { records: content, views, questions: await store.listQuestions(contextId) };
}

const offline = { relations: false } as const;

describe('ingestItems', () => {
  it('imports records and questions, builds views, counts assets', async () => {
    const store = await openStore('memory:');
    const items: ImportItem[] = [
      ...messages(3),
      recordItem(
        {
          id: 'p',
          contextId: 'ctx',
          sequence: 3,
          kind: 'photo',
          text: '',
          assets: [{ id: 'a', kind: 'image', uri: '/x.jpg', derived: { captions: ['a dog'] } }],
        },
        4,
      ),
      {
        type: 'question',
        question: {
          id: 'q1',
          contextId: 'ctx',
          prompt: 'Which dog?',
          answer: { text: 'a dog' },
          evidence: ['p'],
        },
        source: { file: 'q.jsonl', line: 1 },
      },
      { type: 'warning', message: 'in.jsonl:9: dangling evidence id', source: { file: 'in.jsonl', line: 9 } },
    ];
    const report = await ingestItems(store, items, offline);
    expect(report).toMatchObject({
      contexts: ['ctx'],
      imported: 4,
      updated: 0,
      unchanged: 0,
      skipped: 0,
      rejected: [],
      questions: 1,
      assets: 1,
    });
    expect(report.warnings).toEqual(['in.jsonl:9: dangling evidence id']);
    expect(await store.countMemories('ctx')).toBe(4);
    expect((await store.getViews('ctx', ['p'])).map((v) => v.kind)).toEqual(['caption', 'metadata', 'image']);
    expect((await store.searchLexical('ctx', 'dog', { limit: 3, kinds: ['caption'] }))[0]?.memoryId).toBe(
      'p',
    );
    expect((await store.listQuestions('ctx'))[0]?.prompt).toBe('Which dog?');
  });

  it('is idempotent by id and content; a changed record updates its views', async () => {
    const store = await openStore(':memory:');
    await ingestItems(store, messages(5), offline);
    const first = await snapshot(store, 'ctx');
    const again = await ingestItems(store, messages(5), offline);
    expect(again).toMatchObject({ imported: 0, updated: 0, unchanged: 5 });
    expect(await snapshot(store, 'ctx')).toEqual(first);
    const changed = messages(5);
    changed[2] = recordItem(
      { id: 'm2', contextId: 'ctx', kind: 'message', sequence: 2, text: 'rewritten text', assets: [] },
      3,
    );
    const update = await ingestItems(store, changed, offline);
    expect(update).toMatchObject({ imported: 0, updated: 1, unchanged: 4 });
    expect((await store.getViews('ctx', ['m2']))[0]?.text).toBe('rewritten text');
  });

  it('rejects bad records with file, line and field and keeps the valid ones', async () => {
    const store = await openStore('memory:');
    const items: ImportItem[] = [
      recordItem({ id: 'ok1', contextId: 'ctx', sequence: 0, text: 'fine', assets: [] }, 1),
      recordItem({ id: 'bad', contextId: 'ctx', sequence: 1, text: 42 as unknown as string, assets: [] }, 2),
      recordItem({ id: 'big', contextId: 'ctx', sequence: 2, text: 'x'.repeat(2000), assets: [] }, 3),
      recordItem({ id: 'ok1', contextId: 'ctx', sequence: 0, text: 'different content', assets: [] }, 4),
      recordItem({ id: 'ok1', contextId: 'ctx', sequence: 0, text: 'fine', assets: [] }, 5),
      recordItem(
        { id: 'ts', contextId: 'ctx', sequence: 3, text: 'when?', timestamp: '2024-02-31', assets: [] },
        6,
      ),
      {
        type: 'reject',
        error: new GraphmemixError('INVALID_INPUT', 'malformed JSON', {
          location: { file: 'in.jsonl', line: 7 },
        }),
        source: { file: 'in.jsonl', line: 7 },
      },
      recordItem({ id: 'ok2', contextId: 'ctx', sequence: 4, text: 'also fine', assets: [] }, 8),
    ];
    const report = await ingestItems(store, items, { ...offline, maxTextBytes: 1000 });
    expect(report.imported).toBe(2);
    expect(report.skipped).toBe(1);
    expect(report.rejected.map((r) => [r.code, r.line, r.recordId, r.field])).toEqual([
      ['INVALID_INPUT', 2, 'bad', 'text'],
      ['TOO_LARGE', 3, 'big', 'text'],
      ['DUPLICATE_ID', 4, 'ok1', 'id'],
      ['INVALID_INPUT', 6, 'ts', 'timestamp'],
      ['INVALID_INPUT', 7, undefined, undefined],
    ]);
    expect(report.rejected.every((r) => r.file === 'in.jsonl')).toBe(true);
    expect((await store.getMemory('ctx', 'ok1'))?.text).toBe('fine');
    expect((await store.listMemories('ctx')).map((r) => r.id)).toEqual(['ok1', 'ok2']);
  });

  it('tells repeats apart per context: one id in two contexts is two records', async () => {
    const store = await openStore('memory:');
    const items: ImportItem[] = [
      recordItem({ id: 'x', contextId: 'a', sequence: 0, text: 'one', assets: [] }, 1),
      recordItem({ id: 'x', contextId: 'b', sequence: 0, text: 'two', assets: [] }, 2),
      recordItem({ id: 'x', contextId: 'b', sequence: 0, text: 'two', assets: [] }, 3),
      recordItem({ id: 'x', contextId: 'a', sequence: 0, text: 'three', assets: [] }, 4),
      recordItem({ id: 'y', contextId: 'a', sequence: 1, text: 'one', assets: [] }, 5),
    ];
    const report = await ingestItems(store, items, offline);
    expect(report.imported).toBe(3);
    expect(report.skipped).toBe(1);
    expect(report.rejected.map((r) => [r.code, r.line, r.recordId])).toEqual([['DUPLICATE_ID', 4, 'x']]);
    expect((await store.getMemory('a', 'x'))?.text).toBe('one');
    expect((await store.getMemory('b', 'x'))?.text).toBe('two');
  });

  it('puts everything into the contextId option, and defaults missing sequences idempotently', async () => {
    const store = await openStore('memory:');
    const plain = (id: string, text: string): ImportItem => ({
      type: 'record',
      record: { id, text } as unknown as MemoryRecord,
      source: { file: 'api' },
    });
    await ingestItems(store, [plain('a', 'one'), plain('b', 'two')], { ...offline, contextId: 'alice' });
    const second = await ingestItems(store, [plain('c', 'three'), plain('a', 'one')], {
      ...offline,
      contextId: 'alice',
    });
    expect(second).toMatchObject({ imported: 1, unchanged: 1 });
    expect((await store.listMemories('alice')).map((r) => [r.id, r.sequence, r.contextId])).toEqual([
      ['a', 0, 'alice'],
      ['b', 1, 'alice'],
      ['c', 2, 'alice'],
    ]);
    const moved = await ingestItems(store, messages(2, 'elsewhere'), { ...offline, contextId: 'bob' });
    expect(moved.contexts).toEqual(['bob']);
    expect(await store.countMemories('elsewhere')).toBe(0);
  });

  it('commits batch by batch: a failure midway keeps earlier batches, and a re-run completes the same state', async () => {
    const clean = await openStore('memory:');
    await ingestItems(clean, messages(23), { ...offline, batchSize: 5 });
    const store = await openStore(':memory:');
    let calls = 0;
    const failing: ArchiveStore = Object.create(store, {
      writeMemories: {
        value: async (...args: Parameters<ArchiveStore['writeMemories']>) => {
          calls++;
          if (calls === 3) throw new GraphmemixError('STORE', 'disk full');
          return store.writeMemories(...args);
        },
      },
    });
    const progress: number[] = [];
    await expect(
      ingestItems(failing, messages(23), { ...offline, batchSize: 5, onProgress: (n) => progress.push(n) }),
    ).rejects.toMatchObject({ code: 'STORE' });
    expect(progress).toEqual([5, 10]);
    expect(await store.countMemories('ctx')).toBe(10);
    const resumed = await ingestItems(store, messages(23), { ...offline, batchSize: 5 });
    expect(resumed).toMatchObject({ imported: 13, unchanged: 10 });
    expect(await snapshot(store, 'ctx')).toEqual(await snapshot(clean, 'ctx'));
  });

  it('writes batches of INGEST_BATCH_SIZE as turns of a write queue, UNSCHEDULED_INGEST_BATCH_SIZE without one', async () => {
    const count = UNSCHEDULED_INGEST_BATCH_SIZE + INGEST_BATCH_SIZE + 1;
    const batches = async (schedule?: <T>(work: () => Promise<T>) => Promise<T>) => {
      const store = await openStore(':memory:');
      const sizes: number[] = [];
      const counting: ArchiveStore = Object.create(store, {
        writeMemories: {
          value: async (...args: Parameters<ArchiveStore['writeMemories']>) => {
            sizes.push(args[1].length);
            return store.writeMemories(...args);
          },
        },
      });
      const report = await ingestItems(counting, messages(count), {
        ...offline,
        ...(schedule ? { schedule } : {}),
      });
      expect(report.imported).toBe(count);
      return sizes;
    };
    let turns = 0;
    const queued = await batches((work) => {
      turns++;
      return work();
    });
    expect(queued.every((size) => size <= INGEST_BATCH_SIZE)).toBe(true);
    expect(queued.length).toBe(Math.ceil(count / INGEST_BATCH_SIZE));
    expect(turns).toBeGreaterThanOrEqual(queued.length);
    expect(await batches()).toEqual([UNSCHEDULED_INGEST_BATCH_SIZE, INGEST_BATCH_SIZE + 1]);
  });

  it('rebuilds relations of every touched context and reports the edge counts', async () => {
    const store = await openStore(':memory:');
    const session = (contextId: string, count: number) =>
      Array.from({ length: count }, (_, i) =>
        recordItem(
          {
            id: `t${i}`,
            contextId,
            kind: 'message',
            sequence: i,
            sessionId: 's1',
            text: `turn ${i} about the garden`,
            assets: [],
          },
          i + 1,
        ),
      );
    const report = await ingestItems(store, [...session('one', 3), ...session('two', 4)]);
    expect(report.contexts).toEqual(['one', 'two']);
    expect(report.edges.consecutive_turn).toBe(2 + 3);
    expect((await store.countEdges('one')).consecutive_turn).toBe(2);
    expect(report.stepSeconds.relations).toBeGreaterThan(0);
    expect((await store.neighbors('two', ['t1'])).map((e) => `${e.a}-${e.b}`)).toEqual(
      expect.arrayContaining(['t0-t1', 't1-t2']),
    );
  });
});
