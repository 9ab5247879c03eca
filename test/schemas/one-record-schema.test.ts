import { describe, expect, it } from 'vitest';
import { memoryInputSchema } from '../../src/api-schemas/common-schemas.ts';
import { parseInput } from '../../src/api-schemas/parse-input.ts';
import { addMemoriesSchema, retrieveSchema } from '../../src/api-schemas/route-schemas.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { questionInputSchema } from '../../src/schemas/question-schema.ts';
import { memoryRecordInputSchema, toMemoryRecord } from '../../src/schemas/record-schema.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';

// Issue #14 item 3: ONE record schema and ONE question schema behind every door.

/** Every MemoryRecord field, checked by the compiler both ways (a missing or an extra key fails tsc). */
const RECORD_FIELDS = {
  id: true,
  contextId: true,
  kind: true,
  sequence: true,
  sessionId: true,
  roundId: true,
  sourceId: true,
  role: true,
  speaker: true,
  timestamp: true,
  location: true,
  text: true,
  assets: true,
  derived: true,
  metadata: true,
  agentId: true,
  runId: true,
  supersedes: true,
  recordedAt: true,
  media: true,
} satisfies Record<keyof MemoryRecord, true>;

describe('one record schema', () => {
  it('covers exactly the MemoryRecord fields, and HTTP/MCP use the same object', () => {
    expect(Object.keys(memoryRecordInputSchema.shape).sort()).toEqual(Object.keys(RECORD_FIELDS).sort());
    expect(memoryInputSchema).toBe(memoryRecordInputSchema);
  });

  it('names an unknown field the same way in JSONL/addMemories and in HTTP/MCP bodies', async () => {
    const record = { id: 'x', text: 'hi', timestmap: '2024-01-01' };
    const checked = toMemoryRecord(record, { contextId: 'c', sequence: 0 });
    expect(checked).toMatchObject({ ok: false, code: 'INVALID_INPUT', field: 'timestmap' });
    expect(() => parseInput(addMemoriesSchema, { user_id: 'c', memories: [record] })).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', location: { field: 'memories.0.timestmap' } }),
    );
    const gm = await openGraphmemix({ db: 'memory:' });
    const report = await gm.addMemories('c', [record as unknown as { id: string }]);
    expect(report.rejected[0]).toMatchObject({ code: 'INVALID_INPUT', field: 'timestmap' });
    await gm.close();
  });
});

describe('one question schema', () => {
  it('the library and the HTTP body refuse the same bad questions', async () => {
    const gm = await openGraphmemix({ db: 'memory:' });
    await expect(gm.retrieve('c', { prompt: '   ' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(
      gm.retrieve('c', { prompt: 'x', choices: [{ id: 'a', text: 'b', extra: 1 }] } as never),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT', location: { field: 'choices.0.extra' } });
    expect(() =>
      parseInput(retrieveSchema, {
        user_id: 'c',
        question: 'x',
        choices: [{ id: 'a', text: 'b', extra: 1 }],
      }),
    ).toThrow(expect.objectContaining({ location: { field: 'choices.0.extra' } }));
    expect(questionInputSchema.safeParse({ prompt: 'x'.repeat(4001) }).success).toBe(false);
    expect(() => parseInput(retrieveSchema, { user_id: 'c', question: 'x'.repeat(4001) })).toThrow();
    await gm.close();
  });
});
