import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createServer } from '../../src/server/create-server.ts';
import { encodeMediaRef } from '../../src/server/media-ref.ts';
import { servableMedia } from '../../src/shell-kit/servable-media.ts';
import { connectMcp } from './security-harness.ts';

// Records are confined when written over HTTP/MCP; one written by an older version (whose PATCH was not) or
// by the library may name any file. The media route and MCP's evidence images check what they send.
let dir: string;
let db: string;
let mediaDir: string;
let gm: Graphmemix;
let app: ReturnType<typeof createServer>;
let mcp: Client;
let png: Buffer;

const image = (uri: string) => ({ id: 'p', kind: 'image' as const, uri });
const get = (memoryId: string, user = 'alice') =>
  app.request(`/v1/media/${encodeMediaRef({ memoryId, assetId: 'p' })}?user_id=${user}`, {
    headers: { authorization: 'Bearer k' },
  });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gmx-serve-rule-'));
  db = join(dir, 'archive.db');
  mediaDir = `${db}.media`;
  png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#336699' } })
    .png()
    .toBuffer();
  mkdirSync(join(mediaDir, 'alice'), { recursive: true });
  mkdirSync(join(mediaDir, 'bob'), { recursive: true });
  writeFileSync(join(mediaDir, 'alice', 'own.png'), png);
  writeFileSync(join(mediaDir, 'bob', 'bobs.png'), png);
  writeFileSync(join(mediaDir, 'loose.png'), png);
  writeFileSync(join(dir, 'operator-photo.png'), png);
  gm = await openGraphmemix({ db, mediaDir });
  await gm.addMemories('bob', [
    { id: 'b1', text: 'bob private photo', assets: [image(join(mediaDir, 'bob', 'bobs.png'))] },
  ]);
  // Written through the library, past the edge's confinement, as an older server's PATCH could have.
  await gm.addMemories('alice', [
    { id: 'db', text: 'lighthouse photo one', assets: [image(db)] },
    { id: 'wal', text: 'lighthouse photo two', assets: [image(`${db}-wal`)] },
    { id: 'bobs', text: 'lighthouse photo three', assets: [image(join(mediaDir, 'bob', 'bobs.png'))] },
    { id: 'loose', text: 'lighthouse photo four', assets: [image(join(mediaDir, 'loose.png'))] },
    { id: 'own', text: 'harbour photo own', assets: [image(join(mediaDir, 'alice', 'own.png'))] },
    { id: 'operator', text: 'harbour photo operator', assets: [image(join(dir, 'operator-photo.png'))] },
  ]);
  app = createServer({ graphmemix: gm, apiKeys: ['k=alice'], mediaDir });
  mcp = await connectMcp(gm, { mediaDir });
});
afterAll(async () => {
  await mcp?.close();
  await gm?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('media a stored record names is sent only where the rule allows', () => {
  it('GET /v1/media answers 404 for the archive file, its WAL, another user folder and the media root', async () => {
    for (const id of ['db', 'wal', 'bobs', 'loose']) {
      const response = await get(id);
      expect(response.status, id).toBe(404);
      const body = Buffer.from(await response.arrayBuffer());
      expect(body.includes(Buffer.from('SQLite format 3')), id).toBe(false);
    }
  });

  it('serves the user own upload and an operator photo outside the media store (controls)', async () => {
    for (const id of ['own', 'operator']) {
      const response = await get(id);
      expect(response.status, id).toBe(200);
      expect(Buffer.from(await response.arrayBuffer()).equals(png), id).toBe(true);
    }
  });

  it('MCP evidence images leave out another user photo, keep the own one', async () => {
    const images = async (query: string) => {
      const result = (await mcp.callTool({
        name: 'retrieve_evidence',
        arguments: { user_id: 'alice', question: query, k: 4 },
      })) as CallToolResult;
      const reply = JSON.parse((result.content[0] as { text: string }).text) as {
        evidence: { memory_id: string }[];
        images: { memory_id: string }[];
      };
      return {
        evidence: reply.evidence.map((e) => e.memory_id),
        images: reply.images.map((i) => i.memory_id),
      };
    };
    const lighthouse = await images('lighthouse photo three');
    expect(lighthouse.evidence).toContain('bobs');
    expect(lighthouse.images).not.toContain('bobs');
    expect(lighthouse.images).not.toContain('loose');
    const harbour = await images('harbour photo own');
    expect(harbour.images).toContain('own');
  });

  it('servableMedia: the rule itself', async () => {
    expect(await servableMedia(db, 'alice', mediaDir)).toBe(false);
    expect(await servableMedia(db, 'alice', undefined)).toBe(false);
    expect(await servableMedia(join(mediaDir, 'bob', 'bobs.png'), 'alice', mediaDir)).toBe(false);
    expect(await servableMedia(join(mediaDir, 'bob', 'bobs.png'), 'bob', mediaDir)).toBe(true);
    expect(await servableMedia(join(dir, 'operator-photo.png'), 'alice', mediaDir)).toBe(true);
    // A user id that is a prefix of another's folder is not inside it.
    mkdirSync(join(mediaDir, 'alice2'), { recursive: true });
    writeFileSync(join(mediaDir, 'alice2', 'x.png'), png);
    expect(await servableMedia(join(mediaDir, 'alice2', 'x.png'), 'alice', mediaDir)).toBe(false);
  });
});
