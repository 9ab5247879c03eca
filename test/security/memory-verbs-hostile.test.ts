import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonRequest, SecurityTally, type SecurityWorld, startSecurityWorld } from './security-harness.ts';

// Hostile inputs on the memory verbs of issue #15 (list, update, history, filters, conversations): every one
// is a 4xx naming the cause, changes nothing, and costs a bounded amount of work.
const tally = new SecurityTally();
let world: SecurityWorld;

beforeAll(async () => {
  world = await startSecurityWorld();
  await world.graphmemix.addMemories('alice', [
    { id: 'a1', text: 'alice secret plan', agentId: 'bot', metadata: { topic: 'work' } },
    { id: 'a2', text: 'alice other note', agentId: 'bot' },
  ]);
});
afterAll(async () => {
  await world.close();
  tally.print('memory verbs');
});

async function expectRefused(
  category: string,
  response: Response | Promise<Response>,
  status: number,
  field?: string,
): Promise<void> {
  const handled = tally.tried(category);
  const before = JSON.stringify(await world.graphmemix.listMemories('alice', { limit: 200 }));
  const answer = await response;
  expect(answer.status, category).toBe(status);
  const body = (await answer.json()) as { error: { code: string; location?: { field?: string } } };
  if (field !== undefined) expect(body.error.location?.field, category).toBe(field);
  expect(JSON.stringify(await world.graphmemix.listMemories('alice', { limit: 200 }))).toBe(before);
  handled();
}

const get = (path: string) => world.app.request(path, jsonRequest('GET', 'ka'));

describe('hostile list / filter / cursor inputs', () => {
  it('refuses huge, forged and malformed cursors', async () => {
    await expectRefused(
      'huge cursor',
      get(`/v1/memories?user_id=alice&cursor=${'A'.repeat(100_000)}`),
      400,
      'cursor',
    );
    await expectRefused('forged cursor', get('/v1/memories?user_id=alice&cursor=bm90IGpzb24'), 400, 'cursor');
    const forged = Buffer.from(JSON.stringify([1, 'x'.repeat(300)])).toString('base64url');
    await expectRefused(
      'cursor with a long id',
      get(`/v1/memories?user_id=alice&cursor=${forged}`),
      400,
      'cursor',
    );
    await expectRefused(
      'cursor with symbols',
      get('/v1/memories?user_id=alice&cursor=%00%01'),
      400,
      'cursor',
    );
  });

  it('refuses page sizes out of bounds and repeated or unknown parameters', async () => {
    await expectRefused('limit too big', get('/v1/memories?user_id=alice&limit=100000'), 400, 'limit');
    await expectRefused('limit zero', get('/v1/memories?user_id=alice&limit=0'), 400, 'limit');
    await expectRefused('repeated parameter', get('/v1/memories?user_id=alice&user_id=bob'), 400, 'user_id');
    await expectRefused('unknown parameter', get('/v1/memories?user_id=alice&agentid=bot'), 400, 'agentid');
  });

  it('refuses deep, wide and oversized filters', async () => {
    const deep = encodeURIComponent(JSON.stringify({ a: { b: { c: 1 } } }));
    await expectRefused(
      'nested metadata filter',
      get(`/v1/memories?user_id=alice&metadata=${deep}`),
      400,
      'filters.metadata.a',
    );
    const wide = encodeURIComponent(
      JSON.stringify(Object.fromEntries([...Array(17).keys()].map((i) => [`k${i}`, i]))),
    );
    await expectRefused(
      'too many metadata keys',
      get(`/v1/memories?user_id=alice&metadata=${wide}`),
      400,
      'filters.metadata',
    );
    const big = encodeURIComponent(JSON.stringify({ k: 'x'.repeat(5000) }));
    await expectRefused(
      'oversized metadata filter',
      get(`/v1/memories?user_id=alice&metadata=${big}`),
      413,
      'filters.metadata',
    );
    await expectRefused(
      'metadata not JSON',
      get('/v1/memories?user_id=alice&metadata=%7B'),
      400,
      'filters.metadata',
    );
    await expectRefused(
      'bad event time',
      get('/v1/memories?user_id=alice&from=yesterday'),
      400,
      'filters.from',
    );
    // Built as text: JSON.stringify itself would overflow on this depth.
    const depth = 100_000;
    const nested = `${'{"and":'.repeat(depth)}1${'}'.repeat(depth)}`;
    await expectRefused(
      'deep filter body on retrieve',
      world.app.request('/v1/retrieve', {
        ...jsonRequest('POST', 'ka'),
        body: `{"user_id":"alice","question":"plan?","filters":{"metadata":${nested}}}`,
      }),
      // 100k nested keys: over MAX_INPUT_VALUES, refused before validation.
      413,
    );
    await expectRefused(
      'unknown filter field on search',
      world.app.request(
        '/v1/search',
        jsonRequest('POST', 'ka', { user_id: 'alice', query: 'plan', filters: { user: 'bob' } }),
      ),
      400,
      'filters.user',
    );
  });

  it('a filtered retrieve never returns a memory outside the filter', async () => {
    const handled = tally.tried('filtered retrieve stays inside the filter');
    const response = await world.app.request(
      '/v1/retrieve',
      jsonRequest('POST', 'ka', {
        user_id: 'alice',
        question: 'alice secret plan note',
        verifiers: 'offline',
        filters: { metadata: { topic: 'work' } },
      }),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      evidence: { memory_id: string }[];
      pool: { memoryId: string }[];
    };
    expect(body.pool.map((c) => c.memoryId)).toEqual(['a1']);
    expect(body.evidence.map((e) => e.memory_id)).toEqual(['a1']);
    handled();
  });
});

describe('hostile updates and conversations', () => {
  it('refuses identity fields, unknown fields and bad values in a patch, changing nothing', async () => {
    const patch = (body: unknown, id = 'a1') =>
      world.app.request(`/v1/memories/${id}`, jsonRequest('PATCH', 'ka', body));
    await expectRefused('patch moves id', patch({ user_id: 'alice', id: 'b1' }), 400, 'id');
    await expectRefused(
      'patch moves context',
      patch({ user_id: 'alice', contextId: 'bob' }),
      400,
      'contextId',
    );
    await expectRefused(
      'patch forges the write clock',
      patch({ user_id: 'alice', recordedAt: '2000-01-01' }),
      400,
      'recordedAt',
    );
    await expectRefused('patch unknown field', patch({ user_id: 'alice', txt: 'x' }), 400, 'txt');
    await expectRefused('patch empties the memory', patch({ user_id: 'alice', text: '' }), 400, 'text');
    await expectRefused('patch of a missing memory', patch({ user_id: 'alice', text: 'x' }, 'nope'), 404);
    await expectRefused('patch body not an object', patch([1, 2]), 400, 'user_id');
  });

  it('refuses malformed conversations', async () => {
    const post = (body: unknown) => world.app.request('/v1/memories', jsonRequest('POST', 'ka', body));
    await expectRefused(
      'both memories and messages',
      post({
        user_id: 'alice',
        memories: [{ id: 'x', text: 'x' }],
        messages: [{ role: 'user', content: 'x' }],
      }),
      400,
      'memories',
    );
    await expectRefused(
      'message unknown field',
      post({ user_id: 'alice', messages: [{ role: 'user', content: 'x', tool_calls: [] }] }),
      400,
      'messages.0.tool_calls',
    );
    await expectRefused(
      'too many messages',
      post({
        user_id: 'alice',
        messages: Array.from({ length: 1001 }, () => ({ role: 'user', content: 'x' })),
      }),
      400,
      'messages',
    );
    await expectRefused(
      'message without role',
      post({ user_id: 'alice', messages: [{ content: 'x' }] }),
      400,
      'messages.0.role',
    );
  });
});
