import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createServer } from '../../src/server/create-server.ts';
import { ALICE, BOB, FUZZ_KEYS, isCodedRefusal, seedBothUsers, seededPicker } from './fuzz-support.ts';

/**
 * Seeded hostile requests on the routes http-fuzz.test.ts leaves out: GET pages, history, users, media and the
 * viewer with mutated query strings; DELETE of memories and users, including the other key's; multipart imports
 * in every format whose file names and record URIs point at a secret file outside the media folder. Each
 * response is a 2xx or a coded 4xx, the secret's content never appears in a response (nor behind any media link
 * the viewer then gives for bob's memories), a refused write changes nothing, no request of bob's key changes
 * alice's archive, and no upload lands outside its folder.
 */
const SECRET_TEXT = 'FUZZ-SECRET-5b1e';
const root = mkdtempSync(join(tmpdir(), 'graphmemix-fuzz-routes-'));
const secret = join(root, 'secret.txt');
const dir = join(root, 'archive');

const QUERY_VALUES = [
  '',
  '0',
  '-1',
  '1e9',
  'abc',
  '%00',
  '..%2f..%2f',
  'x'.repeat(5000),
  '{"a":1}',
  '{"__proto__":{"polluted":1}}',
  '[1,2]',
  '{',
  'alice',
  'bob',
  '2024-06-01T00:00:00Z',
  'null',
  '9'.repeat(400),
  secret,
  `file://${secret}`,
];
const GET_PATHS = [
  '/v1/memories',
  '/v1/memories/m2',
  '/v1/memories/m2/history',
  '/v1/users',
  '/v1/users/bob',
  '/v1/media/a1',
  '/v1/media/q',
  '/view',
];
const PARAMS = [
  'user_id',
  'limit',
  'cursor',
  'metadata',
  'from',
  'to',
  'agent_id',
  'run_id',
  'k',
  'q',
  '__proto__',
];
const FORMATS = ['unified', 'bundle', 'locomo', 'mem-gallery', 'm3exam', 'media', 'photos', 'documents', 'x'];

describe('HTTP routes under seeded hostile queries, deletes and imports', () => {
  let graphmemix: Graphmemix;
  let app: Hono;
  const request = (method: string, path: string, headers: Record<string, string>, body?: string | FormData) =>
    app.request(path, { method, headers, ...(body === undefined ? {} : { body }) });
  /** Every memory of a user, page by page. */
  const archiveOf = async (user: string, headers: Record<string, string>): Promise<string> => {
    let out = '';
    let cursor: string | undefined;
    for (;;) {
      const page = `/v1/memories?user_id=${user}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const json = (await (await request('GET', page, headers)).json()) as {
        memories: unknown[];
        next_cursor?: string | null;
      };
      out += JSON.stringify(json.memories);
      if (!json.next_cursor) return out;
      cursor = json.next_cursor;
    }
  };

  beforeAll(async () => {
    writeFileSync(secret, SECRET_TEXT);
    mkdirSync(dir);
    graphmemix = await openGraphmemix({ db: join(dir, 'a.db'), mediaDir: join(dir, 'media') });
    app = createServer({
      graphmemix,
      apiKeys: FUZZ_KEYS,
      mediaDir: join(dir, 'media'),
    });
    await seedBothUsers(app, 30, (i) => ({ metadata: { k: 'v', n: i } }));
  });
  afterAll(async () => {
    await graphmemix?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('answers a 2xx or a coded 4xx, leaks nothing, and changes nothing it may not', async () => {
    const { next, pick } = seededPicker(20261205);
    const alice = await archiveOf('alice', ALICE);
    const problems: string[] = [];
    /** Per kind of request (GET, DELETE, import): the outcomes reached. */
    const outcomes = new Map<string, Set<string>>();
    for (let i = 0; i < 240; i++) {
      const kind = next();
      let method = 'GET';
      let path: string;
      let body: string | FormData | undefined;
      if (kind < 0.55) {
        path = pick(GET_PATHS);
        const params = new URLSearchParams();
        params.set('user_id', next() < 0.8 ? 'bob' : pick(QUERY_VALUES));
        const extra = Math.floor(next() * 3);
        for (let e = 0; e < extra; e++) params.append(pick(PARAMS), pick(QUERY_VALUES));
        path += `?${params.toString()}`;
      } else if (kind < 0.75) {
        method = 'DELETE';
        path =
          next() < 0.7
            ? `/v1/memories/${pick(['m3', 'm4', 'zz', '..%2fm3', 'm3%00'])}?user_id=${pick(['bob', 'alice', '%2e%2e'])}`
            : `/v1/users/${pick(['alice', 'dave', '..%2falice', 'alice%00', 'ALICE'])}`;
      } else {
        method = 'POST';
        path = '/v1/memories/import';
        const form = new FormData();
        if (next() < 0.9) form.set('user_id', next() < 0.8 ? 'bob' : pick(['alice', '../alice', '']));
        form.set('format', pick(FORMATS));
        const uri = pick([
          secret,
          `file://${secret}`,
          `../../../..${secret}`,
          'x.png',
          'http://169.254.169.254/',
        ]);
        const lines = [
          JSON.stringify({
            id: `i${i}`,
            text: 'imported harbour',
            assets: [{ id: 'q', kind: 'image', uri }],
          }),
          JSON.stringify({ id: `j${i}`, text: 'a plain line', metadata: { a: 1 } }),
          next() < 0.5 ? '{' : '',
        ];
        const name = pick(['data.jsonl', '../../evil.jsonl', 'a/b.json', '\u0000.jsonl', 'x'.repeat(300)]);
        form.set('file', new Blob([lines.join('\n')]), name);
        body = form;
      }
      const writes = method !== 'GET';
      const before = writes ? await archiveOf('bob', BOB) : '';
      const response = await request(method, path, BOB, body);
      const text = await response.text();
      const kindName = path.startsWith('/v1/memories/import') ? 'import' : method;
      const reached = outcomes.get(kindName) ?? new Set<string>();
      reached.add(response.status < 300 ? 'accepted' : 'refused');
      outcomes.set(kindName, reached);
      const label = `${method} ${path.slice(0, 100)}`;
      if (response.status >= 500) problems.push(`${response.status}: ${label} -> ${text.slice(0, 200)}`);
      if (text.includes(SECRET_TEXT)) problems.push(`the secret file's content in the response: ${label}`);
      // The viewer answers its errors as an HTML page; every JSON route carries a code.
      if (response.status >= 400 && !path.startsWith('/view')) {
        if (!isCodedRefusal(text))
          problems.push(`uncoded ${response.status}: ${label} -> ${text.slice(0, 200)}`);
        if (writes && (await archiveOf('bob', BOB)) !== before)
          problems.push(`a refused write changed bob: ${label}`);
      }
      if (writes && (await archiveOf('alice', ALICE)) !== alice)
        problems.push(`bob's key changed alice: ${label}`);
      if (({} as Record<string, unknown>).polluted !== undefined)
        problems.push(`Object.prototype polluted: ${label}`);
    }
    // Every media link the viewer gives for what was imported is followed: none serves the secret file.
    const page = await (await request('GET', '/view?user_id=bob&q=imported%20harbour&k=50', BOB)).text();
    const links = [...new Set([...page.matchAll(/\/v1\/media\/[^"'\s<>]+/g)].map((match) => match[0]))];
    for (const link of links) {
      const media = await request('GET', link.replaceAll('&amp;', '&'), BOB);
      if (Buffer.from(await media.arrayBuffer()).includes(SECRET_TEXT))
        problems.push(`served the secret: ${link}`);
    }
    expect(problems).toEqual([]);
    // Nothing was written beside the archive's folder, and an upload's name with ../ stayed a name in its folder.
    expect(readdirSync(root).sort()).toEqual(['archive', 'secret.txt']);
    const escaped = (readdirSync(dir, { recursive: true }) as string[]).filter((file) =>
      file.endsWith('evil.jsonl'),
    );
    expect(escaped).toEqual([]);
    // The mix reached both outcomes on reads, deletes and imports alike (all refusals would prove little).
    const both = ['accepted', 'refused'];
    expect(Object.fromEntries([...outcomes].map(([name, set]) => [name, [...set].sort()]))).toEqual({
      GET: both,
      DELETE: both,
      import: both,
    });
    expect((await request('GET', '/v1/users/alice', ALICE)).status).toBe(200);
  });
});
