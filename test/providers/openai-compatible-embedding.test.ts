import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAICompatibleEmbedding } from '../../src/providers/openai-compatible-embedding.ts';
import { allowMediaRoot } from '../../src/providers/to-image-url.ts';
import {
  type FakeOpenAIServer,
  fakeEmbedding,
  startFakeOpenAIServer,
} from '../support/fake-openai-server.ts';

describe('createOpenAICompatibleEmbedding', () => {
  let server: FakeOpenAIServer;
  beforeAll(async () => {
    server = await startFakeOpenAIServer({ embeddingDimensions: 8 });
  });
  beforeEach(() => {
    server.reset();
  });
  afterAll(() => server.close());

  it('always sends encoding_format float, batches, and returns Float32Array vectors in input order', async () => {
    const embedder = createOpenAICompatibleEmbedding({
      baseUrl: server.baseUrl,
      model: 'fake-embed',
      batchSize: 2,
    });
    const texts = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];
    const response = await embedder.embed(texts.map((text) => ({ type: 'text', text })));
    expect(server.requests).toHaveLength(3);
    for (const request of server.requests) {
      expect(request.body.encoding_format).toBe('float');
      expect(request.body.model).toBe('fake-embed');
    }
    expect(server.requests.map((r) => r.body.input)).toEqual([
      ['alpha', 'beta'],
      ['gamma', 'delta'],
      ['epsilon'],
    ]);
    expect(response.vectors).toHaveLength(5);
    response.vectors.forEach((vector, i) => {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(Array.from(vector)).toEqual(fakeEmbedding(texts[i], 8));
    });
    expect(response.usage.promptTokens).toBe(5);
    expect(response.cached).toBe(false);
  });

  it('orders vectors by index, not by position in the reply', async () => {
    server.enqueue('embeddings', {
      type: 'vectors',
      vectors: [
        [1, 0],
        [0, 1],
        [0.5, 0.5],
      ],
      order: [2, 0, 1],
    });
    const embedder = createOpenAICompatibleEmbedding({ baseUrl: server.baseUrl, model: 'fake-embed' });
    const response = await embedder.embed([
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
      { type: 'text', text: 'c' },
    ]);
    expect(response.vectors.map((v) => Array.from(v))).toEqual([
      [1, 0],
      [0, 1],
      [0.5, 0.5],
    ]);
  });

  it('rejects a reply with the wrong number of vectors as MODEL_OUTPUT', async () => {
    server.enqueue('embeddings', { type: 'vectors', vectors: [[1, 0]] });
    const embedder = createOpenAICompatibleEmbedding({ baseUrl: server.baseUrl, model: 'fake-embed' });
    await expect(
      embedder.embed([
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ]),
    ).rejects.toMatchObject({ code: 'MODEL_OUTPUT' });
  });

  it('rejects image inputs with UNSUPPORTED when the model does not support images', async () => {
    const embedder = createOpenAICompatibleEmbedding({ baseUrl: server.baseUrl, model: 'fake-embed' });
    expect(embedder.supportsImages).toBe(false);
    await expect(embedder.embed([{ type: 'image', uri: 'https://example.org/a.png' }])).rejects.toMatchObject(
      {
        code: 'UNSUPPORTED',
      },
    );
    expect(server.requests).toHaveLength(0);
  });

  it('sends images as {image: dataUrl} objects (texts as {text}) when images are supported', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gmx-embed-'));
    allowMediaRoot(dir);
    const file = join(dir, 'pic.webp');
    writeFileSync(file, Buffer.from('abc'));
    const embedder = createOpenAICompatibleEmbedding({
      baseUrl: server.baseUrl,
      model: 'fake-vision-embed',
      supportsImages: true,
    });
    const response = await embedder.embed([
      { type: 'text', text: 'a cat' },
      { type: 'image', uri: file },
    ]);
    expect(server.requests[0]?.body.input).toEqual([
      { text: 'a cat' },
      { image: `data:image/webp;base64,${Buffer.from('abc').toString('base64')}` },
    ]);
    expect(server.requests[0]?.body.encoding_format).toBe('float');
    expect(response.vectors).toHaveLength(2);
  });

  it('reads base64 vectors from a server that ignored encoding_format', async () => {
    const floats = new Float32Array([0.25, -1.5, 3]);
    const base64 = Buffer.from(floats.buffer).toString('base64');
    server.enqueue('embeddings', { type: 'body', body: { data: [{ index: 0, embedding: base64 }] } });
    const embedder = createOpenAICompatibleEmbedding({ baseUrl: server.baseUrl, model: 'fake-embed' });
    const response = await embedder.embed([{ type: 'text', text: 'x' }]);
    expect(Array.from(response.vectors[0] ?? [])).toEqual([0.25, -1.5, 3]);
  });
});
