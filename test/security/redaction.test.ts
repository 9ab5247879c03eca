import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { reportError } from '../../src/cli/run-cli.ts';
import { GraphmemixError } from '../../src/errors/graphmemix-error.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createOpenAICompatibleChat } from '../../src/providers/openai-compatible-chat.ts';
import { createServer } from '../../src/server/create-server.ts';
import { errorResponse } from '../../src/shell-kit/error-response.ts';
import { redact, redactText } from '../../src/shell-kit/redact.ts';
import { type FakeOpenAIServer, startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { connectMcp, jsonRequest, SecurityTally } from './security-harness.ts';

// Issue #12 item 7: no credentials, userinfo URLs, API keys or upstream bodies in traces, errors or logs
// returned to clients.
const tally = new SecurityTally();
const UPSTREAM = 'UPSTREAM-BODY-internal-hostname-db01.corp';
const MODEL_KEY = 'sk-live-abcdefghijklmnop1234';
const SECRETS = ['s3cretPass', 'sk-live-abcdefghijklmnop', 'UPSTREAM-BODY', 'tok_9f8e7d', 'kadmin-secret'];

function leaks(text: string): string[] {
  return SECRETS.filter((secret) => text.includes(secret));
}

const STRINGS: [string, string][] = [
  [
    'userinfo URL',
    'model endpoint unreachable (m at https://admin:s3cretPass@llm.internal/v1): fetch failed',
  ],
  ['userinfo URL', 'http://tok_9f8e7d@10.0.0.5:8000/v1/chat/completions'],
  ['userinfo URL', 'postgres://app:s3cretPass@db:5432/x'],
  ['API key', `Authorization: Bearer ${MODEL_KEY}`],
  ['API key', `key ${MODEL_KEY} rejected`],
  ['API key', 'https://llm.example/v1?api_key=tok_9f8e7d&x=1'],
  ['API key', 'https://llm.example/v1?key=tok_9f8e7d'],
  ['upstream body', `model endpoint answered HTTP 401 (m at https://llm/v1): ${UPSTREAM}`],
  ['upstream body', `model endpoint answered HTTP 500: {"error":"${UPSTREAM}"}`],
];

let fake: FakeOpenAIServer;
let graphmemix: Graphmemix;

beforeAll(async () => {
  fake = await startFakeOpenAIServer({
    handlers: {
      chat: () => ({ type: 'error', status: 401, message: `${UPSTREAM} key ${MODEL_KEY} invalid` }),
    },
  });
  graphmemix = await openGraphmemix({
    db: 'memory:',
    models: { reader: createOpenAICompatibleChat({ baseUrl: fake.baseUrl, model: 'r', apiKey: MODEL_KEY }) },
  });
  await graphmemix.addMemories('alice', [{ id: 'a1', text: 'the harbour trip is on Friday' }]);
});
afterAll(async () => {
  await graphmemix.close();
  await fake.close();
  tally.print('redaction');
});

describe('redact', () => {
  for (const [category, text] of STRINGS) {
    it(`${category}: ${text.slice(0, 48)}`, () => {
      const handled = tally.tried(`redact(): ${category}`);
      expect(leaks(redactText(text))).toEqual([]);
      expect(leaks(JSON.stringify(redact({ nested: [{ message: text }] })))).toEqual([]);
      handled();
    });
  }

  it('blanks secret-named fields and upstream body fields', () => {
    const handled = tally.tried('redact(): secret fields');
    const out = redact({
      apiKey: 'tok_9f8e7d',
      headers: { authorization: 'x' },
      details: { bodyStart: UPSTREAM },
    });
    expect(leaks(JSON.stringify(out))).toEqual([]);
    handled();
  });
});

describe('edges that serialize traces and errors', () => {
  // Two readers: one whose endpoint answers 401 with a body that must not travel to the client, one behind
  // a userinfo URL (the fetch fails and its message names the URL).
  it('HTTP /v1/answer trace: no upstream body, no model key, no userinfo', async () => {
    for (const base of ['plain', 'userinfo']) {
      const handled = tally.tried('HTTP answer trace');
      const reader = createOpenAICompatibleChat({
        baseUrl:
          base === 'plain' ? fake.baseUrl : fake.baseUrl.replace('http://', 'http://admin:s3cretPass@'),
        model: 'r',
        apiKey: MODEL_KEY,
      });
      const gm = await openGraphmemix({ db: 'memory:', store: graphmemix.store, models: { reader } });
      // Not vacuous: the library's own trace does carry the secret.
      const raw = await gm.answer('alice', 'harbour trip?', { verifiers: 'offline' });
      expect(leaks(JSON.stringify(raw.trace)).length).toBeGreaterThan(0);
      const app = createServer({ graphmemix: gm, apiKeys: ['kadmin-secret=alice'] });
      const response = await app.request(
        '/v1/answer',
        jsonRequest('POST', 'kadmin-secret', {
          user_id: 'alice',
          question: 'harbour trip?',
          verifiers: 'offline',
        }),
      );
      const text = await response.text();
      expect(response.status).toBe(200);
      const body = JSON.parse(text) as {
        answered: boolean;
        trace: { flags: string[]; modelCalls: unknown[] };
      };
      expect(body.answered).toBe(false);
      expect(body.trace.flags).toContain('reader_failed');
      // The failure is still visible, only its secrets are gone.
      expect(JSON.stringify(body.trace.modelCalls)).toContain('error');
      expect(leaks(text)).toEqual([]);
      handled();
    }
  });

  it('HTTP error bodies are redacted', async () => {
    const handled = tally.tried('HTTP error body');
    const app = new Hono();
    app.onError((error, c) => errorResponse(c, error, ['kadmin-secret']));
    app.get('/boom', () => {
      throw new GraphmemixError('MODEL_UNAVAILABLE', STRINGS.map(([, s]) => s).join(' | '), {
        details: { url: 'https://admin:s3cretPass@h/v1', bodyStart: UPSTREAM, apiKey: MODEL_KEY },
      });
    });
    app.get('/internal', () => {
      throw new Error(`crash with kadmin-secret and ${UPSTREAM}`);
    });
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
    expect(leaks(await (await app.request('/boom')).text())).toEqual([]);
    const internal = await app.request('/internal');
    expect(internal.status).toBe(500);
    expect(leaks(await internal.text())).toEqual([]);
    expect(leaks(JSON.stringify(quiet.mock.calls))).toEqual(['UPSTREAM-BODY']);
    quiet.mockRestore();
    handled();
  });

  it('MCP tool results and tool errors are redacted', async () => {
    const handled = tally.tried('MCP results');
    const client: Client = await connectMcp(graphmemix, {});
    const answered = await client.callTool({
      name: 'answer_question',
      arguments: { user_id: 'alice', question: 'harbour trip?', verifiers: 'offline' },
    });
    expect(leaks(JSON.stringify(answered))).toEqual([]);
    await client.close();
    handled();
  });

  it('CLI error output is redacted (text and --json)', () => {
    for (const json of [false, true]) {
      const handled = tally.tried('CLI error output');
      const writes: string[] = [];
      const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
        writes.push(String(chunk));
        return true;
      });
      reportError(new GraphmemixError('MODEL_UNAVAILABLE', STRINGS.map(([, s]) => s).join(' | ')), json);
      reportError(new Error(`boom https://admin:s3cretPass@h/ ${MODEL_KEY}`), json);
      spy.mockRestore();
      expect(writes.length).toBe(2);
      expect(leaks(writes.join('\n'))).toEqual([]);
      handled();
    }
  });
});
