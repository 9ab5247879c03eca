import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createServer } from '../../src/server/create-server.ts';
import { stoppedForget } from '../support/stopped-forget.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-http-forget-'));

function filesUnder(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((name) => join(root, name))
    .filter((path) => statSync(path).isFile());
}

describe('HTTP: oversized records, rejected uploads and forgetting a user', () => {
  let graphmemix: Graphmemix;
  let app: Hono;
  const mediaDir = join(dir, 'media');
  const auth = { authorization: 'Bearer k' };
  const post = (body: unknown) =>
    app.request('/v1/memories', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const upload = (memories: unknown[], bytes: string) => {
    const form = new FormData();
    form.set('user_id', 'ann');
    form.set('memories', JSON.stringify(memories));
    form.set(
      `asset:${(memories[0] as { id: string }).id}`,
      new File([bytes], 'photo.png', { type: 'image/png' }),
    );
    return app.request('/v1/memories', { method: 'POST', headers: auth, body: form });
  };

  beforeAll(async () => {
    graphmemix = await openGraphmemix({ db: join(dir, 'a.db'), mediaDir });
    // The server takes the archive's media folder when none is given.
    app = createServer({ graphmemix, apiKeys: ['k'] });
  });
  afterAll(async () => {
    await graphmemix.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a record over the caption limit is rejected (TOO_LARGE), a 150k-caption request too, and every later add for the user works', async () => {
    const captions = Array.from({ length: 1_000 }, (_, i) => `c${i}`);
    const bad = await post({
      user_id: 'ann',
      memories: [{ id: 'huge', assets: [{ id: 'a', kind: 'image', derived: { captions } }] }],
    });
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as { rejected: { code: string; field: string }[] };
    expect(body.rejected).toMatchObject([{ code: 'TOO_LARGE', field: 'assets.0.derived.captions' }]);
    // 150k values are refused for the whole request before validation (MAX_INPUT_VALUES).
    const many = Array.from({ length: 150_000 }, (_, i) => `c${i}`);
    const refused = await post({
      user_id: 'ann',
      memories: [{ id: 'huge', assets: [{ id: 'a', kind: 'image', derived: { captions: many } }] }],
    });
    expect(refused.status).toBe(413);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('TOO_LARGE');
    for (let i = 0; i < 3; i++) {
      const ok = await post({
        user_id: 'ann',
        memories: [{ id: `n${i}`, text: `note ${i} about the lake` }],
      });
      expect(ok.status).toBe(200);
    }
    expect(await graphmemix.store.countMemories('ann')).toBe(3);
  });

  it('removes the uploaded file of a rejected record, keeps the file of a stored one', async () => {
    const rejected = await upload([{ id: 'p1', timestamp: 'not a date' }], 'REJECTED-UPLOAD-BYTES');
    expect(rejected.status).toBe(400);
    expect(filesUnder(mediaDir)).toEqual([]);
    const stored = await upload([{ id: 'p2', text: 'the lake at dawn' }], 'STORED-UPLOAD-BYTES');
    expect(stored.status).toBe(200);
    expect(filesUnder(mediaDir)).toHaveLength(1);
    // The same bytes again on a rejected record: the file is still referenced by p2, so it stays.
    const again = await upload([{ id: 'p3', timestamp: 'nope' }], 'STORED-UPLOAD-BYTES');
    expect(again.status).toBe(400);
    expect(filesUnder(mediaDir)).toHaveLength(1);
  });

  it('DELETE /v1/users/:user_id forgets the user with its media; 404 afterwards', async () => {
    await post({ user_id: 'other', memories: [{ id: 'o1', text: 'someone else' }] });
    const deleted = await app.request('/v1/users/ann', { method: 'DELETE', headers: auth });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ user_id: 'ann', deleted: true, memories: 4, media_files: 1 });
    expect(filesUnder(mediaDir)).toEqual([]);
    expect(await graphmemix.store.countMemories('ann')).toBe(0);
    expect(await graphmemix.store.countMemories('other')).toBe(1);
    const again = await app.request('/v1/users/ann', { method: 'DELETE', headers: auth });
    expect(again.status).toBe(404);
    const bad = await app.request('/v1/users/..%2Fetc', { method: 'DELETE', headers: auth });
    expect(bad.status).toBe(400);
    const unauthenticated = await app.request('/v1/users/other', { method: 'DELETE' });
    expect(unauthenticated.status).toBe(401);
  });
});

describe('HTTP: a user whose forget was interrupted (SQLite)', () => {
  const own = mkdtempSync(join(tmpdir(), 'graphmemix-http-forgetting-'));
  afterAll(() => rmSync(own, { recursive: true, force: true }));

  it('answers 409 CONFLICT to its reads and writes until DELETE finishes the forget', async () => {
    const file = join(own, 'interrupted.db');
    const first = await openGraphmemix({ db: file, readWorkers: false });
    await first.addMemories('carl', [
      { id: 'c1', text: 'carl keeps his bike in the blue shed' },
      { id: 'c2', text: 'carl moved to the harbour flat' },
    ]);
    await first.addMemories('dora', [{ id: 'd1', text: 'dora keeps her bike at work' }]);
    // A forget stopped right after its mark (as a process killed there leaves it).
    await stoppedForget(first.store, 'carl', 1);
    await first.close();

    const gm = await openGraphmemix({ db: file, readWorkers: false });
    const app = createServer({ graphmemix: gm, apiKeys: ['k'] });
    const headers = { authorization: 'Bearer k', 'content-type': 'application/json' };
    const retrieve = (user: string) =>
      app.request('/v1/retrieve', {
        method: 'POST',
        headers,
        body: JSON.stringify({ user_id: user, question: 'where is the bike?' }),
      });
    const refused = await retrieve('carl');
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({
      error: { code: 'CONFLICT', details: { reason: 'context_being_forgotten' } },
    });
    const write = await app.request('/v1/memories', {
      method: 'POST',
      headers,
      body: JSON.stringify({ user_id: 'carl', memories: [{ id: 'c3', text: 'a late write' }] }),
    });
    expect(write.status).toBe(409);
    expect((await retrieve('dora')).status).toBe(200);

    const forget = await app.request('/v1/users/carl', { method: 'DELETE', headers });
    expect(forget.status).toBe(200);
    expect(await forget.json()).toMatchObject({ deleted: true });
    expect((await retrieve('carl')).status).toBe(200);
    expect(await gm.getMemory('carl', 'c3')).toBeUndefined();
    expect(await gm.store.integrityCheck()).toEqual({ ok: true, problems: [] });
    await gm.close();
  }, 60_000);
});
