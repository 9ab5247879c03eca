import { afterEach, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createMcpHttpApp } from '../../src/mcp/serve-mcp.ts';
import { ReadWorkerPool } from '../../src/read-workers/read-worker-pool.ts';
import { createServer } from '../../src/server/create-server.ts';
import { defaultQuestionShare, QuestionShare } from '../../src/shell-kit/question-share.ts';
import { gatedFacade } from '../support/gated-facade.ts';
import { postToolCall } from '../support/mcp-tool-call.ts';

/** A facade whose questions and listing pages wait until `release()`: they stay in progress meanwhile. */
async function gatedQuestions(): Promise<{ gm: Graphmemix; release: () => void; asked: () => number }> {
  const inner = await openGraphmemix({ db: 'memory:' });
  await inner.addMemories('ann', [{ id: 'a', text: 'the garden party is on Sunday' }]);
  await inner.addMemories('bob', [{ id: 'b', text: 'the budget review is on Monday' }]);
  const gated = gatedFacade(inner, ['retrieve', 'searchMemories', 'listMemories']);
  return { gm: gated.gm, release: gated.release, asked: gated.entered };
}

const retrieve = (app: ReturnType<typeof createServer>, key: string, user: string) =>
  app.request('/v1/retrieve', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ user_id: user, question: 'when is it?' }),
  });

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("question share: one key cannot take every other key's question capacity", () => {
  let gm: Graphmemix | undefined;
  afterEach(async () => {
    await gm?.close();
    gm = undefined;
  });

  it('counts per caller, refuses past the share with BUSY, and releases once', () => {
    const share = new QuestionShare(2);
    const a1 = share.take('a');
    share.take('a');
    expect(() => share.take('a')).toThrow(expect.objectContaining({ code: 'BUSY' }));
    const b = share.take('b');
    a1();
    a1(); // a second release frees nothing more
    share.take('a');
    expect(() => share.take('a')).toThrow(/this key has 2 questions in progress/);
    b();
    expect(() => new QuestionShare(0)).toThrow(expect.objectContaining({ code: 'CONFIG' }));
  });

  it('by default half the read capacity per key, and only where one key could starve another', async () => {
    // Several keys and a pool: half of (workers x running + queued).
    expect(defaultQuestionShare({ keys: 3, capacity: 72 })?.max).toBe(36);
    expect(defaultQuestionShare({ keys: 2, capacity: 1 })?.max).toBe(1);
    // One key (a backend serving its own users), open mode (no keys) or questions on the event loop: none.
    expect(defaultQuestionShare({ keys: 1, capacity: 72 })).toBeUndefined();
    expect(defaultQuestionShare({ keys: 0, capacity: 72, share: 4 })).toBeUndefined();
    expect(defaultQuestionShare({ keys: 2, capacity: undefined })).toBeUndefined();
    // An explicit share applies whenever there are keys.
    expect(defaultQuestionShare({ keys: 1, capacity: undefined, share: 4 })?.max).toBe(4);
    // What a pool takes at once: each worker's running calls plus its queue.
    const pool = new ReadWorkerPool({ db: ':memory:', size: 3, concurrency: 8, maxQueue: 64 });
    expect(pool.capacity).toBe(3 * 8 + 64);
    await pool.close();
  });

  it('REST: a key past its share gets 503 on POST questions and the viewer GET; another key is answered', async () => {
    const gated = await gatedQuestions();
    gm = gated.gm;
    const app = createServer({
      graphmemix: gated.gm,
      apiKeys: ['ka=ann', 'kb=bob'],
      budget: { perCallerQuestions: 2 },
    });
    const held = [retrieve(app, 'ka', 'ann'), retrieve(app, 'ka', 'ann')];
    await tick();
    expect(gated.asked()).toBe(2);
    const third = await retrieve(app, 'ka', 'ann');
    expect(third.status).toBe(503);
    expect(third.headers.get('retry-after')).toBe('1');
    expect(((await third.json()) as { error: { code: string } }).error.code).toBe('BUSY');
    // The viewer page asks a question with a GET: it counts as well.
    const view = await app.request('/view?user_id=ann&q=party', { headers: { authorization: 'Bearer ka' } });
    expect(view.status).toBe(503);
    const search = await app.request('/v1/search', {
      method: 'POST',
      headers: { authorization: 'Bearer ka', 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: 'ann', query: 'party' }),
    });
    expect(search.status).toBe(503);
    // Another key's question is taken (it waits at the gate like the others).
    const other = retrieve(app, 'kb', 'bob');
    await tick();
    expect(gated.asked()).toBe(3);
    // A listing page runs in the read workers as a question does: it counts; an add to the same path, a read
    // of one memory and the users' list do not.
    const listed = await app.request('/v1/memories?user_id=ann', { headers: { authorization: 'Bearer ka' } });
    expect(listed.status).toBe(503);
    const added = await app.request('/v1/memories', {
      method: 'POST',
      headers: { authorization: 'Bearer ka', 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: 'ann', memories: [{ id: 'n', text: 'a new note' }] }),
    });
    expect(added.status).toBe(200);
    expect(
      (await app.request('/v1/memories/a?user_id=ann', { headers: { authorization: 'Bearer ka' } })).status,
    ).toBe(200);
    expect((await app.request('/v1/users', { headers: { authorization: 'Bearer ka' } })).status).toBe(200);
    gated.release();
    for (const response of [...held, other]) expect((await response).status).toBe(200);
    // Slots come back when the questions end.
    expect((await retrieve(app, 'ka', 'ann')).status).toBe(200);
  });

  it('open local mode has one caller, the owner: only the queue bounds its questions', async () => {
    const gated = await gatedQuestions();
    gm = gated.gm;
    const app = createServer({ graphmemix: gated.gm, open: true, budget: { perCallerQuestions: 1 } });
    const local = () =>
      app.request('/v1/retrieve', {
        method: 'POST',
        headers: { host: 'localhost', 'content-type': 'application/json' },
        body: JSON.stringify({ user_id: 'ann', question: 'when is it?' }),
      });
    const both = [local(), local()];
    await tick();
    expect(gated.asked()).toBe(2);
    gated.release();
    for (const response of both) expect((await response).status).toBe(200);
  });

  it('MCP over HTTP: the question tools and list_memories take a slot of the key; other tools do not', async () => {
    const gated = await gatedQuestions();
    gm = gated.gm;
    const app = createMcpHttpApp({
      graphmemix: gated.gm,
      apiKeys: ['ka=ann'],
      budget: { perCallerQuestions: 1 },
    });
    const call = (name: string, args: Record<string, unknown>) => postToolCall(app, 'ka', name, args);
    const held = call('retrieve_evidence', { user_id: 'ann', question: 'when is the party?' });
    await tick();
    expect(gated.asked()).toBe(1);
    const refused = (await (await call('search_memories', { user_id: 'ann', query: 'party' })).json()) as {
      result: {
        isError?: boolean;
        structuredContent?: { error?: { code: string } };
        content: { text: string }[];
      };
    };
    expect(refused.result.isError).toBe(true);
    expect(refused.result.content[0]!.text).toContain('BUSY');
    const listedMcp = (await (await call('list_memories', { user_id: 'ann' })).json()) as {
      result: { isError?: boolean; content: { text: string }[] };
    };
    expect(listedMcp.result.isError).toBe(true);
    expect(listedMcp.result.content[0]!.text).toContain('BUSY');
    const added = (await (
      await call('add_memory', { user_id: 'ann', memories: [{ id: 'c', text: 'more' }] })
    ).json()) as {
      result: { isError?: boolean };
    };
    expect(added.result.isError).toBeFalsy();
    gated.release();
    const answered = (await (await held).json()) as { result: { isError?: boolean } };
    expect(answered.result.isError).toBeFalsy();
  });
});
