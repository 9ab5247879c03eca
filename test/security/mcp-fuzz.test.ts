import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { userScope } from '../../src/shell-kit/user-scope.ts';
import { HOSTILE_VALUES, jsonMutator, seededPicker } from './fuzz-support.ts';
import { connectMcp, toolError } from './security-harness.ts';

/**
 * Seeded hostile tool calls over MCP from a client scoped to bob: every tool's valid arguments with fields
 * swapped for hostile values (paths of a secret image outside the media store and of alice's own media, file:
 * and metadata-service URLs, prototype keys, deep nesting, 70k strings, other users' ids), half the adds aimed
 * at those files. A refused call is a tool error with a code (never an internal one), no result carries the
 * secret, alice's archive stays byte-identical, nothing leaks onto Object.prototype, and every local file bob's
 * stored memories name lies in bob's media folder (the only files evidence images are then read from).
 */
const SECRET = 'MCP-FUZZ-SECRET-31c9';
const root = mkdtempSync(join(tmpdir(), 'graphmemix-mcp-fuzz-'));
const mediaDir = join(root, 'media');
const secretPng = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from(SECRET)]);
const outside = join(root, 'secret.png');
const alicePrivate = join(mediaDir, 'alice', 'private.png');
const bobPhoto = join(mediaDir, 'bob', 'photo.png');

/** Files a hostile asset may name: outside the store, alice's, and through traversal or file: URLs. */
const FILES = [
  outside,
  `file://${outside}`,
  `${join(mediaDir, 'bob')}/../alice/private.png`,
  alicePrivate,
  `file://${alicePrivate}`,
  '../alice/private.png',
  bobPhoto,
];
const HOSTILE: readonly unknown[] = [...HOSTILE_VALUES, ...FILES, 'http://169.254.169.254/latest/meta-data'];
const CALLS: readonly [string, Record<string, unknown>][] = [
  [
    'add_memory',
    {
      user_id: 'bob',
      memories: [
        { id: 'n1', text: 'a new harbour memory', assets: [{ id: 'a1', kind: 'image', uri: bobPhoto }] },
      ],
    },
  ],
  [
    'add_memory',
    {
      user_id: 'bob',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hi' },
            { type: 'image_url', image_url: { url: bobPhoto } },
          ],
        },
      ],
    },
  ],
  ['search_memories', { user_id: 'bob', query: 'harbour walk', k: 5 }],
  [
    'retrieve_evidence',
    { user_id: 'bob', question: 'what about the harbour walk?', k: 5, verifiers: 'offline' },
  ],
  ['delete_memory', { user_id: 'bob', memory_id: 'm3' }],
  ['list_users', {}],
  ['list_memories', { user_id: 'bob', limit: 10, filters: { metadata: { k: 'v' } } }],
  ['get_memory', { user_id: 'bob', memory_id: 'm2' }],
  ['update_memory', { user_id: 'bob', memory_id: 'm1', text: 'patched', metadata: { x: 1 } }],
  ['memory_history', { user_id: 'bob', memory_id: 'm1', limit: 5 }],
  ['user_stats', { user_id: 'bob' }],
  ['delete_user', { user_id: 'alice' }],
];

/** True when any text or image part of a tool result carries the secret. */
function carriesSecret(result: CallToolResult): boolean {
  return result.content.some(
    (part) =>
      (part.type === 'text' && part.text.includes(SECRET)) ||
      (part.type === 'image' && Buffer.from(part.data, 'base64').includes(SECRET)),
  );
}

describe('MCP tools under seeded hostile calls', () => {
  let graphmemix: Graphmemix;
  let bob: Client;
  const aliceArchive = async () => JSON.stringify(await graphmemix.listMemories('alice', { limit: 200 }));

  beforeAll(async () => {
    mkdirSync(join(mediaDir, 'alice'), { recursive: true });
    mkdirSync(join(mediaDir, 'bob'), { recursive: true });
    writeFileSync(outside, secretPng);
    writeFileSync(alicePrivate, secretPng);
    writeFileSync(bobPhoto, Buffer.from('89504e470d0a1a0a', 'hex'));
    graphmemix = await openGraphmemix({ db: join(root, 'a.db'), mediaDir });
    for (const user of ['alice', 'bob']) {
      await graphmemix.addMemories(
        user,
        Array.from({ length: 20 }, (_, i) => ({
          id: `m${i}`,
          text: `${user} memory ${i} about the harbour walk on monday`,
          timestamp: `2024-06-${10 + (i % 9)}T10:00:00Z`,
          metadata: { k: 'v' },
        })),
      );
    }
    bob = await connectMcp(graphmemix, { scope: userScope(['bob']), mediaDir });
  });
  afterAll(async () => {
    await bob?.close();
    await graphmemix?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("answers a result or a coded tool error, stores no file outside bob's media, never touches alice", async () => {
    const picker = seededPicker(20261205);
    const { next, pick } = picker;
    const mutate = jsonMutator(picker, HOSTILE);
    const alice = await aliceArchive();
    const problems: string[] = [];
    const reached = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const [name, args] = pick(CALLS);
      // Half the adds name one of the hostile files in an otherwise valid asset, so the check below is reached.
      const aimed =
        name === 'add_memory' && 'memories' in args && next() < 0.5
          ? {
              user_id: 'bob',
              memories: [
                { id: `h${i}`, text: 'aimed', assets: [{ id: 'a1', kind: 'image', uri: pick(FILES) }] },
              ],
            }
          : undefined;
      // Some calls are valid but for alice, whom this client may not touch (others reach her by mutation only).
      const mutated =
        aimed ??
        (next() < 0.15 ? { ...args, ...('user_id' in args ? { user_id: 'alice' } : {}) } : mutate(args));
      // The client itself refuses arguments that are not an object: nothing reaches the server to test.
      if (mutated === null || typeof mutated !== 'object' || Array.isArray(mutated)) continue;
      const label = `${name} ${JSON.stringify(mutated).slice(0, 160)}`;
      const result = (await bob.callTool({
        name,
        arguments: mutated as Record<string, unknown>,
      })) as CallToolResult;
      if (carriesSecret(result)) problems.push(`the secret in a result: ${label}`);
      const error = toolError(result);
      if (error === undefined) reached.add(name);
      else {
        reached.add('refused');
        if (typeof error.code !== 'string') problems.push(`uncoded tool error: ${label}`);
        else if (error.code === 'INTERNAL' || error.code === 'STORE')
          problems.push(`${error.code}: ${label}`);
      }
      if ((await aliceArchive()) !== alice) problems.push(`bob's client changed alice: ${label}`);
      if (({} as Record<string, unknown>).polluted !== undefined)
        problems.push(`Object.prototype polluted: ${label}`);
    }
    // Every local file bob's memories name lies in bob's media folder (what the evidence images are read from).
    const stored = await graphmemix.listMemories('bob', { limit: 200 });
    const files = stored.memories.flatMap((memory) =>
      memory.assets.flatMap((asset) =>
        asset.uri !== undefined && !/^https?:/.test(asset.uri) ? [asset.uri] : [],
      ),
    );
    for (const file of files)
      if (!file.startsWith(join(mediaDir, 'bob') + sep)) problems.push(`stored outside: ${file}`);
    expect(problems).toEqual([]);
    expect(files.length).toBeGreaterThan(0);
    // Both outcomes were reached, the writes among the accepted calls (all refusals would prove little).
    for (const name of ['refused', 'add_memory', 'update_memory', 'retrieve_evidence', 'get_memory']) {
      expect(reached.has(name), name).toBe(true);
    }
  });
});
