import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createServer } from '../../src/server/create-server.ts';
import {
  ALICE as ALICE_KEY,
  BOB as BOB_KEY,
  FUZZ_KEYS,
  HOSTILE_VALUES,
  isCodedRefusal,
  jsonMutator,
  seedBothUsers,
  seededPicker,
} from './fuzz-support.ts';

/**
 * Seeded mutation fuzzing of the HTTP API over a real archive: valid requests of every JSON route, their
 * fields swapped for hostile values (paths, file: and metadata-service URLs, prototype keys, lone
 * surrogates, 70k strings, deep nesting, broken JSON, wrong content types, traversal in path parameters).
 * Each request must end in a 2xx or a 4xx carrying an error code, a failed write must change nothing,
 * the other key's user must stay byte-identical, and nothing may leak onto Object.prototype.
 */
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-http-fuzz-'));
const ALICE = { ...ALICE_KEY, 'content-type': 'application/json' };
const BOB = { ...BOB_KEY, 'content-type': 'application/json' };

const HOSTILE: readonly unknown[] = [
  ...HOSTILE_VALUES,
  '../../etc/passwd',
  'file:///etc/passwd',
  'http://169.254.169.254/latest/meta-data',
  '%2e%2e%2f',
];

const RAW_BODIES: readonly string[] = [
  '{',
  '[]',
  'null',
  '{"user_id":"bob",'.repeat(1000),
  '\u0000',
  `{"user_id":"bob","query":${'{"a":'.repeat(200_000)}1${'}'.repeat(200_001)}`,
  '['.repeat(500_000),
];

const TEMPLATES: readonly [string, string, unknown][] = [
  [
    'POST',
    '/v1/memories',
    {
      user_id: 'bob',
      memories: [
        {
          id: 'n1',
          text: 'a new memory about the harbour',
          timestamp: '2024-06-20T10:00:00Z',
          // A remote image (kept as given, never fetched); mutation swaps in paths and file: URLs.
          assets: [
            {
              id: 'a1',
              kind: 'image',
              uri: 'https://example.com/photo.png',
              derived: { captions: ['a cat'], ocr: 'x' },
            },
          ],
          metadata: { k: 'v' },
        },
      ],
    },
  ],
  [
    'POST',
    '/v1/memories',
    {
      user_id: 'bob',
      messages: [
        { role: 'user', content: 'hi there' },
        {
          role: 'assistant',
          content: 'hello, here is the harbour photo',
        },
      ],
    },
  ],
  ['POST', '/v1/search', { user_id: 'bob', query: 'harbour walk', k: 5, filters: { metadata: { k: 'v' } } }],
  [
    'POST',
    '/v1/retrieve',
    {
      user_id: 'bob',
      question: 'what about the harbour walk on monday?',
      k: 5,
      choices: ['a', 'b'],
      verifiers: 'offline',
      filters: { after: '2024-06-01T00:00:00Z' },
    },
  ],
  ['POST', '/v1/answer', { user_id: 'bob', question: 'what about the harbour?', k: 3 }],
  ['PATCH', '/v1/memories/m1', { user_id: 'bob', text: 'patched', metadata: { x: 1 } }],
];

describe('HTTP API under seeded hostile requests', () => {
  let graphmemix: Graphmemix;
  let app: Hono;
  const request = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    app.request(path, { method, headers, ...(body === undefined ? {} : { body }) });
  const listing = async (user: 'alice' | 'bob') =>
    (await request('GET', `/v1/memories?user_id=${user}&limit=200`, user === 'alice' ? ALICE : BOB)).text();

  beforeAll(async () => {
    graphmemix = await openGraphmemix({ db: join(dir, 'a.db'), mediaDir: join(dir, 'media') });
    app = createServer({
      graphmemix,
      apiKeys: FUZZ_KEYS,
    });
    await seedBothUsers(app, 20);
  });
  afterAll(async () => {
    await graphmemix.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers every mutated request with a 2xx or a coded 4xx; failed writes and the other user unchanged', async () => {
    const picker = seededPicker(20261201);
    const { next, pick } = picker;
    const mutate = jsonMutator(picker, HOSTILE);
    const alice = await listing('alice');
    const statuses = new Map<number, number>();
    const problems: string[] = [];
    for (let i = 0; i < 300; i++) {
      const [method, template, body] = pick(TEMPLATES);
      const path =
        next() < 0.1
          ? template.replace(
              'm1',
              pick(['..%2f..%2fetc', 'm1%00', 'x'.repeat(5000), '%E0%A4%A', 'm1?user_id=alice']),
            )
          : template;
      // Some requests are valid but for alice, whom bob's key may not touch (others reach her by mutation only).
      const payload =
        next() < 0.05
          ? pick(RAW_BODIES)
          : JSON.stringify(next() < 0.1 ? { ...(body as object), user_id: 'alice' } : mutate(body));
      const headers =
        next() < 0.05
          ? {
              ...BOB,
              'content-type': pick([
                'text/plain',
                'multipart/form-data; boundary=x',
                'application/json; charset=utf-16',
              ]),
            }
          : BOB;
      const writes = method !== 'POST' || path.startsWith('/v1/memories');
      const before = writes ? await listing('bob') : '';
      const response = await request(method, path, headers, payload);
      const text = await response.text();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      const label = `${method} ${path.slice(0, 60)} ${payload.slice(0, 120)}`;
      if (response.status >= 500) problems.push(`${response.status}: ${label} -> ${text.slice(0, 200)}`);
      if (response.status >= 400) {
        if (!isCodedRefusal(text))
          problems.push(`uncoded ${response.status}: ${label} -> ${text.slice(0, 200)}`);
        if (writes && (await listing('bob')) !== before)
          problems.push(`a failed write changed bob: ${label}`);
      }
      if (({} as Record<string, unknown>).polluted !== undefined)
        problems.push(`Object.prototype polluted: ${label}`);
    }
    expect(problems).toEqual([]);
    expect(await listing('alice')).toBe(alice);
    // The mix exercised both outcomes (a generator that only produced rejects would prove little).
    expect(statuses.get(200) ?? 0).toBeGreaterThan(20);
    expect([...statuses.keys()].some((status) => status >= 400)).toBe(true);
    expect((await request('GET', '/v1/health', {})).status).toBe(200);
  });

  it('refuses a small body of many values before validating it (TOO_LARGE), changing nothing', async () => {
    const before = await listing('bob');
    const assets = `[${'0,'.repeat(99_999)}0]`;
    const response = await request(
      'POST',
      '/v1/memories',
      BOB,
      `{"user_id":"bob","memories":[{"id":"many","text":"x","assets":${assets}}]}`,
    );
    // 413, not the schema's 400: refused before validation (without the bound: 100k issues, seconds).
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('TOO_LARGE');
    expect(await listing('bob')).toBe(before);
  });
});
