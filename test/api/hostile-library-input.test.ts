import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix, MemoryRecordInput } from '../../src/graphmemix-api.ts';
import { createServer } from '../../src/server/create-server.ts';

// Round 52 audit: values a library caller can hand over that JSON cannot carry threw raw errors half-way
// through a write (a BigInt in one record of 2,501 left 2,000 stored), and bad search arguments threw or
// were taken as given.
let gm: Graphmemix;
beforeAll(async () => {
  gm = await openGraphmemix({ db: 'memory:' });
});
afterAll(async () => {
  await gm.close();
});

const good = (prefix: string, n: number): MemoryRecordInput[] =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, text: `good record ${i} about cats` }));

describe('records a library caller builds', () => {
  const bad: [string, unknown, string][] = [
    ['a BigInt', { id: 'bad', text: 'b', metadata: { n: 1n } }, 'metadata'],
    ['a function', { id: 'bad', text: 'b', metadata: { f: () => 1 } }, 'metadata'],
    [
      'a throwing getter',
      Object.defineProperty({ id: 'bad', text: 'b' }, 'metadata', {
        enumerable: true,
        get() {
          throw new Error('getter boom');
        },
      }),
      '(record)',
    ],
    ['null', null, '(record)'],
    [
      'a __proto__ key',
      JSON.parse('{"id":"bad","text":"b","metadata":{"__proto__":{"x":1}}}'),
      'metadata.__proto__',
    ],
  ];
  for (const [what, record, field] of bad) {
    it(`${what}: that record is rejected naming ${field}, every other one is stored`, async () => {
      const user = `u-${what.replace(/\W/g, '')}`;
      const report = await gm.addMemories(user, [...good('g', 600), record as MemoryRecordInput]);
      expect(report.rejected).toHaveLength(1);
      expect(report.rejected[0]).toMatchObject({ field });
      expect(await gm.store.countMemories(user)).toBe(600);
    });
  }

  it('a non-array is INVALID_INPUT naming records, and nothing is written', async () => {
    await expect(
      gm.addMemories('u-na', { id: 'x', text: 'y' } as unknown as MemoryRecordInput[]),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT', location: { field: 'records' } });
    expect(await gm.store.countMemories('u-na')).toBe(0);
  });
});

describe('search arguments', () => {
  it('k and the query take the HTTP and MCP bounds', async () => {
    await gm.addMemories('s', good('s', 30));
    expect((await gm.searchMemories('s', 'cats', { k: 3 })).hits).toHaveLength(3);
    for (const k of [0, -5, 2.5, Number.NaN, 1e9]) {
      await expect(gm.searchMemories('s', 'cats', { k }), String(k)).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        location: { field: 'k' },
      });
    }
    await expect(gm.searchMemories('s', 'w '.repeat(5000))).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});

describe('a configuration the caller asks for but the archive lacks', () => {
  it('verifiers "model" without a verifier model is UNSUPPORTED naming verifiers (HTTP 400), not a server fault', async () => {
    await gm.addMemories('v', good('v', 5));
    await expect(gm.retrieve('v', 'cats', { verifiers: 'model' })).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      location: { field: 'verifiers' },
    });
    const app = createServer({ graphmemix: gm, open: true });
    const response = await app.request('http://localhost/v1/retrieve', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: 'v', question: 'cats', verifiers: 'model' }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('UNSUPPORTED');
  });
});
