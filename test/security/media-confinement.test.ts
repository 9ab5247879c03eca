import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toImageUrl } from '../../src/providers/to-image-url.ts';
import {
  connectMcp,
  type HostileUri,
  hostileMediaUris,
  jsonRequest,
  plantHostileFiles,
  REMOTE_URIS,
  SecurityTally,
  type SecurityWorld,
  startSecurityWorld,
  toolError,
} from './security-harness.ts';

// Issue #12 item 1: records added over HTTP/MCP reference only the user's own media store (or remote URLs
// kept as data); whatever a stored record says, only allowed media reach the model endpoint.
const tally = new SecurityTally();
let world: SecurityWorld;
let mcp: Client;
let hostile: HostileUri[];

const passwd = readFileSync('/etc/passwd');
/** True when any request the fake model server received carries these bytes (raw or base64). */
function modelSaw(bytes: Buffer): boolean {
  const needles = [bytes.subarray(0, 24).toString('base64'), bytes.subarray(0, 24).toString('utf8')];
  return world.fake.requests.some((request) => {
    const body = JSON.stringify(request.body);
    return needles.some((needle) => needle.length > 8 && body.includes(needle));
  });
}
function imagePartsSent(): string[] {
  return world.fake
    .requestsFor('chat')
    .flatMap((request) =>
      (request.body.messages as { content: unknown }[]).flatMap((message) =>
        Array.isArray(message.content)
          ? (message.content as { type: string; image_url?: { url: string } }[])
              .filter((part) => part.type === 'image_url')
              .map((part) => part.image_url?.url ?? '')
          : [],
      ),
    );
}

beforeAll(async () => {
  world = await startSecurityWorld();
  plantHostileFiles(join(world.mediaDir, 'alice'));
  plantHostileFiles(join(world.mediaDir, 'bob'));
  hostile = hostileMediaUris(world.mediaDir, 'alice');
  mcp = await connectMcp(world.graphmemix, { mediaDir: world.mediaDir });
});
afterAll(async () => {
  await mcp.close();
  await world.close();
  tally.print('media confinement');
});

describe('hostile media references at the edge', () => {
  it('POST /v1/memories (JSON) refuses each with 400 naming the field, and stores nothing', async () => {
    for (const [index, { category, uri }] of hostile.entries()) {
      const handled = tally.tried(`HTTP JSON: ${category}`);
      const id = `j${index}`;
      const response = await world.app.request(
        '/v1/memories',
        jsonRequest('POST', 'ka', {
          user_id: 'alice',
          memories: [
            { id: `${id}-ok`, text: 'a harmless note' },
            {
              id,
              text: 'photo',
              assets: [
                { id: 'ok', kind: 'image' },
                { id: 'x', kind: 'image', uri },
              ],
            },
          ],
        }),
      );
      expect(response.status, uri).toBe(400);
      const body = (await response.json()) as { error: { code: string; location: { field?: string } } };
      expect(body.error.code).toBe('INVALID_INPUT');
      expect(body.error.location.field).toBe('memories[1].assets[1].uri');
      expect(await world.graphmemix.getMemory('alice', id)).toBeUndefined();
      expect(await world.graphmemix.getMemory('alice', `${id}-ok`)).toBeUndefined();
      handled();
    }
  });

  it('refuses the same references as video frames', async () => {
    for (const [index, { category, uri }] of hostile.entries()) {
      const handled = tally.tried(`HTTP JSON frames: ${category}`);
      const response = await world.app.request(
        '/v1/memories',
        jsonRequest('POST', 'ka', {
          user_id: 'alice',
          memories: [{ id: `f${index}`, text: 'clip', assets: [{ id: 'v', kind: 'video', frames: [uri] }] }],
        }),
      );
      expect(response.status, uri).toBe(400);
      const body = (await response.json()) as { error: { location: { field?: string } } };
      expect(body.error.location.field).toBe('memories[0].assets[0].frames[0]');
      expect(await world.graphmemix.getMemory('alice', `f${index}`)).toBeUndefined();
      handled();
    }
  });

  it('POST /v1/memories (multipart with an upload) refuses them before writing any file', async () => {
    for (const [index, { category, uri }] of hostile.slice(0, 12).entries()) {
      const handled = tally.tried(`HTTP multipart: ${category}`);
      const form = new FormData();
      form.set('user_id', 'alice');
      form.set(
        'memories',
        JSON.stringify([{ id: `u${index}`, text: 'up', assets: [{ id: 'x', kind: 'image', uri }] }]),
      );
      form.set(`asset:u${index}`, new File([Buffer.from(`unique upload ${index}`)], 'p.png'));
      const response = await world.app.request('/v1/memories', {
        method: 'POST',
        headers: { authorization: 'Bearer ka' },
        body: form,
      });
      expect(response.status, uri).toBe(400);
      expect(await world.graphmemix.getMemory('alice', `u${index}`)).toBeUndefined();
      handled();
    }
  });

  it('MCP add_memory refuses them with INVALID_INPUT and stores nothing', async () => {
    for (const [index, { category, uri }] of hostile.entries()) {
      const handled = tally.tried(`MCP add_memory: ${category}`);
      const result = await mcp.callTool({
        name: 'add_memory',
        arguments: {
          user_id: 'alice',
          memories: [{ id: `m${index}`, text: 'p', assets: [{ id: 'x', kind: 'image', uri }] }],
        },
      });
      expect(toolError(result)?.code, uri).toBe('INVALID_INPUT');
      expect(await world.graphmemix.getMemory('alice', `m${index}`)).toBeUndefined();
      handled();
    }
  });

  it('PATCH /v1/memories/:id and MCP update_memory refuse them too, and leave the memory as it was', async () => {
    // Round 52: an update's patch went to the store unchecked, so a PATCH could point a memory at any file
    // the server reads (the archive itself included) and GET /v1/media served it.
    await world.graphmemix.addMemories('alice', [{ id: 'patched', text: 'a note before any update' }]);
    const unchanged = async () => {
      const stored = await world.graphmemix.getMemory('alice', 'patched');
      expect(stored?.text).toBe('a note before any update');
      expect(stored?.assets).toEqual([]);
    };
    for (const { category, uri } of hostile) {
      const handled = tally.tried(`HTTP PATCH: ${category}`);
      for (const [asset, field] of [
        [{ id: 'x', kind: 'document', uri }, 'assets[0].uri'],
        [{ id: 'v', kind: 'video', frames: [uri] }, 'assets[0].frames[0]'],
      ] as const) {
        const response = await world.app.request(
          '/v1/memories/patched',
          jsonRequest('PATCH', 'ka', { user_id: 'alice', text: 'moved', assets: [asset] }),
        );
        expect(response.status, uri).toBe(400);
        const body = (await response.json()) as { error: { code: string; location: { field?: string } } };
        expect(body.error.code).toBe('INVALID_INPUT');
        expect(body.error.location.field).toBe(field);
      }
      const result = await mcp.callTool({
        name: 'update_memory',
        arguments: { user_id: 'alice', memory_id: 'patched', assets: [{ id: 'x', kind: 'image', uri }] },
      });
      expect(toolError(result)?.code, uri).toBe('INVALID_INPUT');
      await unchanged();
      handled();
    }
    const handled = tally.tried('HTTP PATCH: server-set fields');
    const own = join(world.mediaDir, 'alice', 'real.png');
    for (const [patch, field] of [
      [{ assets: [{ id: 'a', kind: 'image', uri: own, thumbnail: '/etc/passwd' }] }, 'assets[0].thumbnail'],
      [{ media: { status: 'done', sourceHash: 'a'.repeat(64) } }, 'media'],
    ] as const) {
      const response = await world.app.request(
        '/v1/memories/patched',
        jsonRequest('PATCH', 'ka', { user_id: 'alice', ...patch }),
      );
      expect(response.status).toBe(400);
      expect(
        ((await response.json()) as { error: { location: { field?: string } } }).error.location.field,
      ).toBe(field);
    }
    await unchanged();
    // Control: the user's own upload is a valid update.
    const ok = await world.app.request(
      '/v1/memories/patched',
      jsonRequest('PATCH', 'ka', { user_id: 'alice', assets: [{ id: 'a', kind: 'image', uri: own }] }),
    );
    expect(ok.status).toBe(200);
    expect((await world.graphmemix.getMemory('alice', 'patched'))?.assets[0]?.uri).toBe(own);
    handled();
  });

  it('accepts the user own uploads and remote URLs (kept as data)', async () => {
    const handled = tally.tried('controls: allowed references');
    const own = join(world.mediaDir, 'alice', 'real.png');
    const response = await world.app.request(
      '/v1/memories',
      jsonRequest('POST', 'ka', {
        user_id: 'alice',
        memories: [
          { id: 'own', text: 'my own upload of the harbour', assets: [{ id: 'a', kind: 'image', uri: own }] },
          ...REMOTE_URIS.map((uri, i) => ({
            id: `remote${i}`,
            text: `remote harbour picture ${i}`,
            assets: [{ id: 'r', kind: 'image', uri }],
          })),
        ],
      }),
    );
    expect(response.status).toBe(200);
    expect((await world.graphmemix.getMemory('alice', 'own'))?.assets[0]?.uri).toBe(own);
    handled();
  });
});

describe('a record already stored with a hostile uri is harmless', () => {
  it('answer sends none of those bytes or URLs to the model endpoint', async () => {
    // Stored through the library, bypassing the edge: as an old archive or a hostile import could hold.
    const stored = [...hostile.map((h) => h.uri), ...REMOTE_URIS];
    await world.graphmemix.addMemories(
      'mallory',
      stored.map((uri, i) => ({
        id: `h${i}`,
        text: `holiday photo number ${i} at the lighthouse`,
        assets: [{ id: 'p', kind: 'image' as const, uri }],
      })),
    );
    for (const [i, uri] of stored.entries()) {
      const category = i < hostile.length ? (hostile[i]?.category ?? '') : 'remote URI';
      const handled = tally.tried(`stored then answered: ${category}`);
      world.fake.reset();
      const started = Date.now();
      const response = await world.app.request(
        '/v1/answer',
        jsonRequest('POST', 'kroot', {
          user_id: 'mallory',
          question: `holiday photo number ${i} lighthouse`,
          k: 1,
          verifiers: 'offline',
        }),
      );
      expect(response.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(modelSaw(passwd)).toBe(false);
      // Refused media become a text marker and the reader call still happens; only a file missing inside the
      // media store keeps its NOT_FOUND_PATH contract (the call fails before sending anything).
      const body = (await response.json()) as { answered: boolean; trace: { modelCalls: unknown[] } };
      if (world.fake.requestsFor('chat').length === 0) {
        expect(JSON.stringify(body.trace.modelCalls), uri).toContain('image file cannot be read');
      } else {
        expect(world.fake.requestsFor('chat'), uri).toHaveLength(1);
        expect(body.answered).toBe(true);
      }
      const sent = imagePartsSent();
      if (hostile[i]?.storeFile === true || uri.startsWith('data:')) {
        // A real media-store file (refused at the edge, see above) or the record's own inline bytes.
        expect(sent.length).toBeLessThanOrEqual(1);
      } else {
        // Nothing else may become an image part: no file bytes, no remote URL.
        expect(sent, uri).toEqual([]);
        const request = world.fake.requestsFor('chat')[0];
        if (request) expect(JSON.stringify(request.body)).toContain('[image withheld');
      }
      handled();
    }
  });

  it('control: the user own upload is sent, so the refusals above are not vacuous', async () => {
    const handled = tally.tried('controls: allowed references');
    world.fake.reset();
    const response = await world.app.request(
      '/v1/answer',
      jsonRequest('POST', 'ka', {
        user_id: 'alice',
        question: 'own upload harbour',
        k: 1,
        verifiers: 'offline',
      }),
    );
    const body = (await response.json()) as { answered: boolean };
    expect(body.answered).toBe(true);
    expect(imagePartsSent()).toEqual([
      `data:image/png;base64,${Buffer.from('89504e470d0a1a0a', 'hex').toString('base64')}`,
    ]);
    handled();
  });

  it('toImageUrl itself refuses every hostile reference with FORBIDDEN or NOT_FOUND_PATH', async () => {
    const cases = [
      ...hostile.filter((h) => h.storeFile !== true),
      ...REMOTE_URIS.map((u) => ({ category: 'remote URI', uri: u })),
    ];
    for (const { category, uri } of cases) {
      const handled = tally.tried(`toImageUrl: ${category}`);
      if (category === 'oversized data: URI') {
        // Small data: URLs are inline bytes, not reads: they pass (the edge caps them at 64 KiB).
        await expect(toImageUrl(uri)).resolves.toBe(uri);
      } else {
        await expect(toImageUrl(uri), uri).rejects.toMatchObject({
          code: expect.stringMatching(/^(FORBIDDEN|NOT_FOUND_PATH)$/),
        });
      }
      handled();
    }
  });

  it('toImageUrl refuses a file over the size cap inside the media store', async () => {
    const handled = tally.tried('toImageUrl: oversized file');
    const big = join(world.mediaDir, 'alice', 'big.png');
    writeFileSync(big, Buffer.alloc(21 * 1024 * 1024));
    await expect(toImageUrl(big)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    handled();
  });
});
