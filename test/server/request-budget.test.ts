import type { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createMcpHttpApp } from '../../src/mcp/serve-mcp.ts';
import { createServer } from '../../src/server/create-server.ts';
import { BodyRate } from '../../src/shell-kit/request-budget.ts';
import { gatedFacade } from '../support/gated-facade.ts';

/** A facade whose adds wait until `release()`: their requests stay in flight meanwhile. */
async function gatedAdds(): Promise<ReturnType<typeof gatedFacade>> {
  return gatedFacade(await openGraphmemix({ db: 'memory:' }), ['addMemories']);
}

/** A JSON POST with its length declared, as an HTTP client sends it (app.request declares none itself). */
const postJson = (
  app: Hono,
  path: string,
  key: string,
  value: unknown,
  extra: Record<string, string> = {},
) => {
  const body = JSON.stringify(value);
  return app.request(path, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      ...extra,
    },
    body,
  });
};

const add = (app: Hono, key: string, user: string, id: string, pad = 0) =>
  postJson(app, '/v1/memories', key, {
    user_id: user,
    memories: [{ id, text: `note ${id} ${'x'.repeat(pad)}` }],
  });

describe('request budget: bodies in flight are bounded in all and per key', () => {
  let gm: Graphmemix | undefined;
  afterEach(async () => {
    await gm?.close();
    gm = undefined;
  });

  it("refuses a key's request past its share (BUSY, 503, Retry-After) before reading it; other keys go on", async () => {
    const gated = await gatedAdds();
    gm = gated.gm;
    const app = createServer({
      graphmemix: gm,
      apiKeys: ['ka=ann', 'kb=bob'],
      budget: { perCallerRequests: 2 },
    });
    const held = [add(app, 'ka', 'ann', 'a1'), add(app, 'ka', 'ann', 'a2')];
    await new Promise((resolve) => setTimeout(resolve, 20));
    const refused = await add(app, 'ka', 'ann', 'a3');
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'BUSY',
      message: expect.stringContaining('this key has 2 requests in progress'),
    });
    // The refused body never reached the facade; the other key's request is admitted.
    expect(gated.entered()).toBe(2);
    const other = add(app, 'kb', 'bob', 'b1');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(gated.entered()).toBe(3);
    gated.release();
    for (const response of await Promise.all([...held, other])) expect(response.status).toBe(200);
    // The share is given back when the requests end.
    expect((await add(app, 'ka', 'ann', 'a3')).status).toBe(200);
    expect(await gm.store.countMemories('ann')).toBe(3);
    expect(await gm.store.countMemories('bob')).toBe(1);
  });

  it('bounds body bytes per key and in all; a streamed body reserves the largest size', async () => {
    const gated = await gatedAdds();
    gm = gated.gm;
    const app = createServer({
      graphmemix: gm,
      apiKeys: ['ka=ann', 'kb=bob', 'kc=cat'],
      maxBodyBytes: 4_000,
      budget: { perCallerBytes: 5_000, totalBytes: 7_000 },
    });
    const big = add(app, 'ka', 'ann', 'a1', 3_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // ann holds ~3.1k: another 3.1k would pass her 5k share; a small one fits.
    const refusedShare = await add(app, 'ka', 'ann', 'a2', 3_000);
    expect(refusedShare.status).toBe(503);
    expect(await refusedShare.text()).toContain('body bytes');
    const small = add(app, 'ka', 'ann', 'a3');
    // bob's 3.9k fits his share but not the 7k total beside ann's.
    const bobBig = await add(app, 'kb', 'bob', 'b1', 3_850);
    expect(bobBig.status).toBe(503);
    expect(await bobBig.text()).toContain('requests in progress hold');
    // A body without a declared length reserves the whole limit (4k): past cat's room in the total.
    const streamed = await app.request('/v1/memories', {
      method: 'POST',
      headers: {
        authorization: 'Bearer kc',
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
      },
      body: JSON.stringify({ user_id: 'cat', memories: [{ id: 'c1', text: 'tiny' }] }),
    });
    expect(streamed.status).toBe(503);
    gated.release();
    expect((await big).status).toBe(200);
    expect((await small).status).toBe(200);
    expect((await add(app, 'kb', 'bob', 'b1', 3_850)).status).toBe(200);
    expect(await gm.store.countMemories('ann')).toBe(2);
  });

  it("a lone key's share is the whole budget; with several keys each has its share", async () => {
    for (const [keys, admitted] of [
      [['ka=ann'], 5],
      [['ka=ann', 'kb=bob'], 4],
    ] as const) {
      const gated = await gatedAdds();
      gm = gated.gm;
      // Bodies of ~3.6 KB against a 4 KB body limit: 4 bodies (16 KB) per key, 16 (64 KB) in all.
      const app = createServer({ graphmemix: gm, apiKeys: [...keys], maxBodyBytes: 4_096 });
      const sent = Array.from({ length: 5 }, (_, i) => add(app, 'ka', 'ann', `a${i}`, 3_500));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(gated.entered(), keys.join(',')).toBe(admitted);
      gated.release();
      const statuses = (await Promise.all(sent)).map((response) => response.status);
      expect(statuses.filter((status) => status === 200)).toHaveLength(admitted);
      await gm.close();
      gm = undefined;
    }
  });

  it('bounds the body bytes a key sends per second (a token bucket bursting to its byte share)', () => {
    let now = 0;
    const rate = new BodyRate(1_000, 4_000, () => now);
    expect(rate.take('a', 3_000)).toBe(0);
    expect(rate.take('a', 3_000)).toBe(2); // 1,000 left: 2 s until 3,000
    expect(rate.take('b', 4_000)).toBe(0); // each key its own bucket
    now += 2_000;
    expect(rate.take('a', 3_000)).toBe(0);
    // A body above the burst waits for a full bucket, then goes (and the key owes the rest).
    now += 10_000;
    expect(rate.take('a', 6_000)).toBe(0);
    expect(rate.take('a', 1)).toBe(3);
    now += 3_000;
    expect(rate.take('a', 1_000)).toBe(0);
    expect(new BodyRate(Number.POSITIVE_INFINITY, 1).take('a', 10 ** 9)).toBe(0);
  });

  it('refuses a key past its body rate with BUSY and Retry-After, before reading; other keys go on', async () => {
    gm = await openGraphmemix({ db: 'memory:' });
    const app = createServer({
      graphmemix: gm,
      apiKeys: ['ka=ann', 'kb=bob'],
      maxBodyBytes: 4_096,
      budget: { perCallerBytes: 8_192, perCallerBytesPerSecond: 2_048 },
    });
    expect((await add(app, 'ka', 'ann', 'a1', 3_500)).status).toBe(200);
    expect((await add(app, 'ka', 'ann', 'a2', 3_500)).status).toBe(200);
    const refused = await add(app, 'ka', 'ann', 'a3', 3_500);
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      'faster than its rate',
    );
    expect((await add(app, 'kb', 'bob', 'b1', 3_500)).status).toBe(200);
    expect(await gm.store.countMemories('ann')).toBe(2);
  });

  it('applies to MCP over HTTP too', async () => {
    const inner = await openGraphmemix({ db: 'memory:' });
    gm = inner;
    const app = createMcpHttpApp({ graphmemix: inner, apiKeys: ['ka=ann'], budget: { perCallerBytes: 10 } });
    const response = await postJson(
      app,
      '/mcp',
      'ka',
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { accept: 'application/json, text/event-stream' },
    );
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('BUSY');
  });
});
