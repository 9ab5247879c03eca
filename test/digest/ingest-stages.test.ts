import { describe, expect, it } from 'vitest';
import { ingestItems } from '../../src/digest/ingest.ts';
import type { MediaDigestOutcome } from '../../src/digest/media/digest-record-media.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';

const item = (record: Record<string, unknown>) => ({
  type: 'record' as const,
  record: record as unknown as MemoryRecord,
  source: { file: 't' },
});

describe('ingest stages', () => {
  it('measures every stage with the injected clock (one tick per reading)', async () => {
    const store = await openStore('memory:');
    let now = 0;
    const report = await ingestItems(store, [item({ id: 'a', text: 'hello there' })], {
      contextId: 'c',
      clock: () => (now += 1000),
    });
    // Each stage reads the clock twice (start, end) and the clock moves 1 s per reading.
    expect(report.stepSeconds.parse).toBeGreaterThan(0);
    expect(report.stepSeconds.write).toBe(1);
    expect(report.stepSeconds.relations).toBe(1);
    expect(Number.isInteger(report.seconds)).toBe(true);
    await store.close();
  });

  it('media stage: inline digests local media once; the same input again is unchanged, not re-digested', async () => {
    const store = await openStore('memory:');
    const calls: string[] = [];
    const media = {
      mode: 'inline' as const,
      async digest(record: MemoryRecord): Promise<MediaDigestOutcome> {
        calls.push(record.id);
        const assets = record.assets.map((asset) => ({ ...asset, derived: { ocr: 'SIGN TEXT' } }));
        return { record: { ...record, assets }, warnings: ['one frame unreadable'] };
      },
    };
    const input = () => [item({ id: 'p', assets: [{ id: 'i', kind: 'image', uri: '/media/p.jpg' }] })];
    const first = await ingestItems(store, input(), { contextId: 'c', media });
    expect(first.media).toEqual({ pending: 0, done: 1, failed: 0, unchanged: 0 });
    expect(first.warnings).toEqual(['record p: one frame unreadable']);
    const stored = await store.getMemory('c', 'p');
    expect(stored?.assets[0]?.derived?.ocr).toBe('SIGN TEXT');
    expect(stored?.media?.status).toBe('done');
    const second = await ingestItems(store, input(), { contextId: 'c', media });
    expect([second.unchanged, second.media?.unchanged, calls]).toEqual([1, 1, ['p']]);
    // A record without local media never reaches the digest.
    await ingestItems(store, [item({ id: 't', text: 'just text' })], { contextId: 'c', media });
    expect(calls).toEqual(['p']);
    await store.close();
  });
});
