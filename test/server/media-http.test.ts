import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTool } from '../../src/digest/media/external-tool.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createMcpServer } from '../../src/mcp/create-mcp-server.ts';
import { createServer } from '../../src/server/create-server.ts';
import { encodeMediaRef } from '../../src/server/media-ref.ts';
import { parseRange } from '../../src/server/media-routes.ts';
import { textImagePng, writeVideo } from '../fixtures/media-fixtures.ts';
import { MEDIA_TOOLS, reportMissingMediaTools } from '../support/system-tools.ts';

reportMissingMediaTools('test/server/media-http.test.ts');
/** Every test here digests a generated video (and PDF): without the tools the file skips. */
const TOOLS = MEDIA_TOOLS.ffmpeg;

const ALICE = 'alice-key';
const BOB = 'bob-key';
let dir: string;
let gm: Graphmemix;
let app: ReturnType<typeof createServer>;
let png: Buffer;
let video: Buffer;
// biome-ignore lint/suspicious/noExplicitAny: JSON bodies read field by field in assertions
type Json = any;
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

beforeAll(async () => {
  if (!TOOLS) return;
  dir = await mkdtemp(join(tmpdir(), 'gmx-media-http-'));
  const mediaDir = join(dir, 'media');
  gm = await openGraphmemix({ db: join(dir, 'a.db'), mediaDir, mediaDigest: 'background' });
  app = createServer({ graphmemix: gm, apiKeys: [`${ALICE}=alice`, `${BOB}=bob`], mediaDir });
  png = await textImagePng('BOARDING PASS 77');
  video = await readFile(await writeVideo(join(dir, 'clip.mp4'), { text: 'TRACK 4', seconds: 2 }));
  const form = new FormData();
  form.set('user_id', 'alice');
  form.set(
    'memories',
    JSON.stringify([
      { id: 'pass', text: '' },
      { id: 'clip', text: '' },
    ]),
  );
  form.set('asset:pass', new File([png], 'pass.png', { type: 'image/png' }));
  form.set('asset:clip', new File([video], 'clip.mp4', { type: 'video/mp4' }));
  const added = await app.request('/v1/memories', { method: 'POST', headers: bearer(ALICE), body: form });
  expect(added.status, await added.clone().text()).toBe(200);
}, 60_000);
afterAll(async () => {
  await gm?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!TOOLS)('media over HTTP', () => {
  it('an upload is acknowledged pending, then digested in the background (OCR, frames) and searchable', async () => {
    const first: Json = await (
      await app.request('/v1/memories/pass?user_id=alice', { headers: bearer(ALICE) })
    ).json();
    expect(['pending', 'done']).toContain(first.media_status);
    await gm.waitForMedia();
    const pass: Json = await (
      await app.request('/v1/memories/pass?user_id=alice', { headers: bearer(ALICE) })
    ).json();
    expect(pass.media_status).toBe('done');
    expect(pass.memory.assets[0].derived.ocr).toMatch(/BOARDING PASS 77/);
    const clip: Json = await (
      await app.request('/v1/memories/clip?user_id=alice', { headers: bearer(ALICE) })
    ).json();
    expect(clip.memory.assets[0].frames).toHaveLength(8);
    expect(clip.memory.assets[0].frameText.join(' ')).toMatch(/TRACK 4/);
    const search = await app.request('/v1/search', {
      method: 'POST',
      headers: { ...bearer(ALICE), 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: 'alice', query: 'boarding pass 77' }),
    });
    expect(((await search.json()) as Json).results[0].memory_id).toBe('pass');
  });

  it('GET /v1/media serves the stored bytes with their type, thumbnails, frames and one byte range', async () => {
    await gm.waitForMedia();
    const ref = encodeMediaRef({
      memoryId: 'pass',
      assetId: (await gm.getMemory('alice', 'pass'))!.assets[0]!.id,
    });
    const whole = await app.request(`/v1/media/${ref}?user_id=alice`, { headers: bearer(ALICE) });
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('image/png');
    expect(whole.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await whole.arrayBuffer()).equals(png)).toBe(true);
    const thumb = await app.request(`/v1/media/${ref}?user_id=alice&size=thumb`, { headers: bearer(ALICE) });
    const meta = await sharp(Buffer.from(await thumb.arrayBuffer())).metadata();
    expect([thumb.headers.get('content-type'), Math.max(meta.width!, meta.height!)]).toEqual([
      'image/jpeg',
      320,
    ]);

    const clipAsset = (await gm.getMemory('alice', 'clip'))!.assets[0]!.id;
    const clipRef = encodeMediaRef({ memoryId: 'clip', assetId: clipAsset });
    const part = await app.request(`/v1/media/${clipRef}?user_id=alice`, {
      headers: { ...bearer(ALICE), range: 'bytes=10-19' },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 10-19/${video.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(video.subarray(10, 20))).toBe(true);
    const frame = await app.request(
      `/v1/media/${encodeMediaRef({ memoryId: 'clip', assetId: clipAsset, frame: 3 })}?user_id=alice`,
      {
        headers: bearer(ALICE),
      },
    );
    expect([frame.status, frame.headers.get('content-type')]).toEqual([200, 'image/jpeg']);
  });

  it('hostile: range abuse, another user, forged ids and paths all fail without leaking', async () => {
    const ref = encodeMediaRef({
      memoryId: 'pass',
      assetId: (await gm.getMemory('alice', 'pass'))!.assets[0]!.id,
    });
    for (const range of [
      'bytes=0-1,2-3',
      'bytes=999999999-',
      'bytes=-0',
      'bytes=5-2',
      'items=0-1',
      `bytes=${'9'.repeat(300)}-`,
    ]) {
      const res = await app.request(`/v1/media/${ref}?user_id=alice`, {
        headers: { ...bearer(ALICE), range },
      });
      expect(res.status, range).toBe(416);
      expect(res.headers.get('content-range')).toBe(`bytes */${png.length}`);
    }
    // Bob's key on Alice's asset, or Bob naming Alice's memory under his own id: the same 404.
    const asBob = await app.request(`/v1/media/${ref}?user_id=alice`, { headers: bearer(BOB) });
    const bobOwn = await app.request(`/v1/media/${ref}?user_id=bob`, { headers: bearer(BOB) });
    expect([asBob.status, bobOwn.status]).toEqual([404, 404]);
    const forged = [
      Buffer.from('/etc/passwd').toString('base64url'),
      encodeMediaRef({ memoryId: 'pass', assetId: '../../etc/passwd' }),
      encodeMediaRef({ memoryId: 'clip', assetId: 'video', frame: 99 }),
      '..%2F..%2Fetc%2Fpasswd',
      'A'.repeat(5000),
    ];
    for (const id of forged) {
      const res = await app.request(`/v1/media/${id}?user_id=alice`, { headers: bearer(ALICE) });
      expect(res.status, id.slice(0, 40)).toBe(404);
    }
    expect((await app.request(`/v1/media/${ref}?user_id=alice`)).status).toBe(401);
    expect(parseRange('bytes=-5', 10)).toEqual({ start: 5, end: 9 });
    expect(parseRange('bytes=8-100', 10)).toEqual({ start: 8, end: 9 });
  });

  it('hostile: an uploaded "video" that is a playlist of another user\'s file is refused, nothing of it kept', async () => {
    // Bob's clip as MPEG-TS (what an HLS playlist names); Alice knows its bytes, hence its stored name.
    const mp4 = await writeVideo(join(dir, 'bob-src.mp4'), { text: 'BOB SECRET', seconds: 2 });
    const ts = join(dir, 'bob-src.ts');
    await runTool(
      'ffmpeg',
      ['-nostdin', '-v', 'error', '-y', '-i', mp4, '-c:v', 'mpeg2video', '-f', 'mpegts', ts],
      {
        timeoutMs: 30_000,
        maxOutputBytes: 1024 * 1024,
      },
    );
    const bobBytes = await readFile(ts);
    const bobForm = new FormData();
    bobForm.set('user_id', 'bob');
    bobForm.set('memories', JSON.stringify([{ id: 'secret', text: '' }]));
    bobForm.set('asset:secret', new File([bobBytes], 'secret.ts', { type: 'video/mp2t' }));
    const bobAdded = await app.request('/v1/memories', {
      method: 'POST',
      headers: bearer(BOB),
      body: bobForm,
    });
    expect(bobAdded.status).toBe(200);
    await gm.waitForMedia();
    expect((await gm.getMemory('bob', 'secret'))!.assets[0]!.frames?.length).toBeGreaterThan(0);

    const stored = `${createHash('sha256').update(bobBytes).digest('hex').slice(0, 32)}.ts`;
    const playlist = `#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\n../bob/${stored}\n#EXT-X-ENDLIST\n`;
    const form = new FormData();
    form.set('user_id', 'alice');
    form.set('memories', JSON.stringify([{ id: 'holiday', text: 'holiday clip' }]));
    form.set('asset:holiday', new File([playlist], 'holiday.mp4', { type: 'video/mp4' }));
    const added = await app.request('/v1/memories', { method: 'POST', headers: bearer(ALICE), body: form });
    expect(added.status).toBe(200);
    await gm.waitForMedia();
    const holiday: Json = await (
      await app.request('/v1/memories/holiday?user_id=alice', { headers: bearer(ALICE) })
    ).json();
    expect(holiday.media_status).toBe('failed');
    expect(holiday.memory.media.error).toMatch(/not on whitelist/);
    expect(holiday.memory.assets[0].frames).toBeUndefined();
    expect(JSON.stringify(holiday)).not.toMatch(/BOB|SECRET/);
  });

  it('the viewer works in a browser: login form -> session cookie, thumbnails through signed links', async () => {
    expect((await app.request('/view?user_id=alice&q=boarding')).status).toBe(401);
    const bad = await app.request('/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'key=wrong',
    });
    expect(bad.status).toBe(401);
    const login = await app.request('/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `key=${ALICE}&next=${encodeURIComponent('/view?user_id=alice&q=boarding+pass')}`,
    });
    expect(login.status).toBe(303);
    expect(login.headers.get('location')).toBe('/view?user_id=alice&q=boarding+pass');
    const cookie = login.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toContain(ALICE);
    const session = cookie.split(';')[0]!;
    const page = await app.request('/view?user_id=alice&q=boarding+pass', { headers: { cookie: session } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('data-testid="media-strip"');
    const src = /<img class="thumb"[^>]* src="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');
    expect(src).toMatch(/^\/v1\/media\/.+sig=/);
    // The signed link works with no key and no cookie; tampered or for another user it does not.
    expect((await app.request(src!)).status).toBe(200);
    expect((await app.request(src!.replace(/sig=[^&]+/, 'sig=AAAA'))).status).toBe(401);
    expect((await app.request(src!.replace('user_id=alice', 'user_id=bob'))).status).toBe(401);
    // The cookie opens only browser reads: a write with it alone is refused.
    const write = await app.request('/v1/memories', {
      method: 'POST',
      headers: { cookie: session, 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: 'alice', memories: [{ id: 'x', text: 'y' }] }),
    });
    expect(write.status).toBe(401);
    // Bob's session cannot read Alice's viewer.
    const bobLogin = await app.request('/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `key=${BOB}`,
    });
    const bobSession = (bobLogin.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect((await app.request('/view?user_id=alice&q=x', { headers: { cookie: bobSession } })).status).toBe(
      404,
    );
  });

  it('MCP retrieve_evidence returns the evidence images as base64 image content, size-capped', async () => {
    await gm.waitForMedia();
    const server = createMcpServer(gm);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 't', version: '1' });
    await client.connect(clientSide);
    try {
      const result = (await client.callTool({
        name: 'retrieve_evidence',
        arguments: { user_id: 'alice', question: 'What did the boarding pass say, 77?' },
      })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const images = result.content.filter((part) => part.type === 'image');
      expect(images.length).toBeGreaterThan(0);
      expect(images.length).toBeLessThanOrEqual(8);
      const first = images[0] as { data: string; mimeType: string };
      expect(first.mimeType).toBe('image/jpeg');
      const bytes = Buffer.from(first.data, 'base64');
      expect(bytes.length).toBeLessThanOrEqual(256 * 1024);
      expect((await sharp(bytes).metadata()).format).toBe('jpeg');
      const text = JSON.parse((result.content[0] as { text: string }).text);
      expect(text.images[0].memory_id).toBe(text.evidence[0].memory_id);
    } finally {
      await client.close();
    }
  });
});
