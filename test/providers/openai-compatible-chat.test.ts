import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { GraphmemixError } from '../../src/errors/index.ts';
import { createOpenAICompatibleChat } from '../../src/providers/openai-compatible-chat.ts';
import { allowMediaRoot, allowRemoteMedia } from '../../src/providers/to-image-url.ts';
import { type FakeOpenAIServer, startFakeOpenAIServer } from '../support/fake-openai-server.ts';

async function caught(promise: Promise<unknown>): Promise<GraphmemixError> {
  try {
    await promise;
  } catch (error) {
    return error as GraphmemixError;
  }
  throw new Error('expected a rejection');
}

describe('createOpenAICompatibleChat', () => {
  let server: FakeOpenAIServer;
  beforeAll(async () => {
    server = await startFakeOpenAIServer();
  });
  beforeEach(() => {
    server.reset();
  });
  afterAll(() => server.close());

  const chatFor = (extra: { timeoutMs?: number; apiKey?: string } = {}) =>
    createOpenAICompatibleChat({ baseUrl: server.baseUrl, model: 'fake-chat', ...extra });

  it('sends model, messages, temperature, max_tokens and json mode; parses content and usage', async () => {
    server.enqueue('chat', {
      type: 'json',
      value: { ok: 1 },
      usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 },
    });
    const response = await chatFor({ apiKey: 'sk-test' }).chat({
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
      ],
      jsonMode: true,
      temperature: 0,
      maxTokens: 8192,
    });
    expect(JSON.parse(response.text)).toEqual({ ok: 1 });
    expect(response.usage).toEqual({ promptTokens: 11, completionTokens: 3, totalTokens: 14 });
    expect(response).toMatchObject({ model: 'fake-chat', cached: false });
    const [sent] = server.requests;
    expect(sent?.body).toMatchObject({
      model: 'fake-chat',
      temperature: 0,
      max_tokens: 8192,
      response_format: { type: 'json_object' },
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(sent?.headers.authorization).toBe('Bearer sk-test');
  });

  it('omits response_format without json mode', async () => {
    server.enqueue('chat', { type: 'text', content: 'plain answer' });
    const response = await chatFor().chat({ messages: [{ role: 'user', content: 'q' }] });
    expect(response.text).toBe('plain answer');
    expect(server.requests[0]?.body.response_format).toBeUndefined();
    expect(server.requests[0]?.body.temperature).toBeUndefined();
  });

  it('inlines local image files as data URLs and passes URLs through', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gmx-chat-'));
    // Only media under an allowed root, and allow-listed URLs, ever reach a model (to-image-url.ts).
    allowMediaRoot(dir);
    allowRemoteMedia(['https://example.org/']);
    const png = join(dir, 'photo.png');
    const pngBytes = Buffer.from('89504e470d0a1a0a0000', 'hex');
    writeFileSync(png, pngBytes);
    const noExtension = join(dir, 'frame');
    writeFileSync(noExtension, Buffer.from('ffd8ffe000', 'hex'));
    server.enqueue('chat', { type: 'text', content: 'a caption' });
    await chatFor().chat({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', uri: png },
            { type: 'image', uri: noExtension },
            { type: 'image', uri: 'https://example.org/a.jpg' },
            { type: 'text', text: 'describe' },
          ],
        },
      ],
    });
    const parts = server.requests[0]?.body.messages[0].content;
    expect(parts[0]).toEqual({
      type: 'image_url',
      image_url: { url: `data:image/png;base64,${pngBytes.toString('base64')}` },
    });
    expect(parts[1].image_url.url.startsWith('data:image/jpeg;base64,')).toBe(true);
    expect(parts[2]).toEqual({ type: 'image_url', image_url: { url: 'https://example.org/a.jpg' } });
    expect(parts[3]).toEqual({ type: 'text', text: 'describe' });
  });

  it('a missing image file is the caller error NOT_FOUND_PATH, and nothing is sent', async () => {
    const missingRoot = mkdtempSync(join(tmpdir(), 'gmx-chat-missing-'));
    allowMediaRoot(missingRoot);
    const error = await caught(
      chatFor().chat({
        messages: [{ role: 'user', content: [{ type: 'image', uri: join(missingRoot, 'x.png') }] }],
      }),
    );
    expect(error.code).toBe('NOT_FOUND_PATH');
    expect(server.requests).toHaveLength(0);
  });

  it.each([
    [429, true],
    [500, true],
    [503, true],
    [408, true],
    [400, false],
    [401, false],
    [404, false],
  ])('HTTP %i -> MODEL_UNAVAILABLE with status and retryable=%s', async (status, retryable) => {
    server.enqueue('chat', { type: 'error', status, retryAfter: 2 });
    const error = await caught(chatFor().chat({ messages: [{ role: 'user', content: 'q' }] }));
    expect(error.code).toBe('MODEL_UNAVAILABLE');
    expect(error.details).toMatchObject({ status, retryable, retryAfterMs: 2000 });
  });

  it('a dropped connection is a retryable MODEL_UNAVAILABLE', async () => {
    server.enqueue('chat', { type: 'drop' });
    const error = await caught(chatFor().chat({ messages: [{ role: 'user', content: 'q' }] }));
    expect(error.code).toBe('MODEL_UNAVAILABLE');
    expect(error.details).toMatchObject({ reason: 'network', retryable: true });
  });

  it('a slow reply times out as a retryable MODEL_UNAVAILABLE', async () => {
    server.enqueue('chat', { type: 'text', content: 'late', delayMs: 2000 });
    const started = Date.now();
    const error = await caught(
      chatFor({ timeoutMs: 100 }).chat({ messages: [{ role: 'user', content: 'q' }] }),
    );
    expect(Date.now() - started).toBeLessThan(1500);
    expect(error.code).toBe('MODEL_UNAVAILABLE');
    expect(error.details).toMatchObject({ reason: 'timeout', retryable: true });
  });

  it('the caller abort is not retryable', async () => {
    server.enqueue('chat', { type: 'text', content: 'late', delayMs: 2000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await caught(
      chatFor().chat({ messages: [{ role: 'user', content: 'q' }], signal: controller.signal }),
    );
    expect(error.code).toBe('MODEL_UNAVAILABLE');
    expect(error.details).toMatchObject({ reason: 'aborted', retryable: false });
  });

  it.each([null, ''])('a reply with content %j is MODEL_OUTPUT', async (content) => {
    server.enqueue('chat', { type: 'text', content });
    const error = await caught(chatFor().chat({ messages: [{ role: 'user', content: 'q' }] }));
    expect(error.code).toBe('MODEL_OUTPUT');
  });

  it('a 200 body that is not JSON is MODEL_OUTPUT', async () => {
    const chat = createOpenAICompatibleChat({
      baseUrl: 'http://127.0.0.1:9/v1',
      model: 'm',
      fetch: async () => new Response('<html>proxy error</html>', { status: 200 }),
    });
    const error = await caught(chat.chat({ messages: [{ role: 'user', content: 'q' }] }));
    expect(error.code).toBe('MODEL_OUTPUT');
  });

  it('a 200 JSON body without choices is MODEL_OUTPUT', async () => {
    server.enqueue('chat', { type: 'body', body: { object: 'chat.completion', choices: [] } });
    const error = await caught(chatFor().chat({ messages: [{ role: 'user', content: 'q' }] }));
    expect(error.code).toBe('MODEL_OUTPUT');
  });

  it('rejects a config without model or base URL with CONFIG', () => {
    expect(() => createOpenAICompatibleChat({ baseUrl: '', model: 'm' })).toThrow(
      expect.objectContaining({ code: 'CONFIG' }),
    );
    expect(() => createOpenAICompatibleChat({ baseUrl: server.baseUrl, model: '' })).toThrow(
      expect.objectContaining({ code: 'CONFIG' }),
    );
  });
});
