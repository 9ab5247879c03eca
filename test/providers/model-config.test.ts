import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GraphmemixError } from '../../src/errors/index.ts';
import { loadModelConfig, parseModelConfig, resolveModelConfig } from '../../src/providers/model-config.ts';

function folderWith(config: unknown, name = 'graphmemix.config.json'): string {
  const dir = mkdtempSync(join(tmpdir(), 'gmx-config-'));
  writeFileSync(join(dir, name), typeof config === 'string' ? config : JSON.stringify(config));
  return dir;
}

function thrown(fn: () => unknown): GraphmemixError {
  try {
    fn();
  } catch (error) {
    return error as GraphmemixError;
  }
  throw new Error('expected a throw');
}

describe('loadModelConfig', () => {
  it('is empty (offline) with no file and no environment', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'gmx-empty-'));
    expect(loadModelConfig({ cwd, env: {} })).toEqual({});
  });

  it('reads the archive (db: file relative to the config, or a URL as written) and its media folder; env wins', () => {
    const cwd = folderWith({ db: 'archive.db', mediaDir: 'media' });
    expect(loadModelConfig({ cwd, env: {} })).toMatchObject({
      db: join(cwd, 'archive.db'),
      mediaDir: join(cwd, 'media'),
    });
    const url = 'postgres://gm@db.internal:5432/graphmemix';
    expect(loadModelConfig({ cwd: folderWith({ db: url }), env: {} }).db).toBe(url);
    expect(loadModelConfig({ cwd, env: { GRAPHMEMIX_DB: url, GRAPHMEMIX_MEDIA_DIR: 'm2' } })).toMatchObject({
      db: url,
      mediaDir: join(cwd, 'm2'),
    });
    expect(thrown(() => loadModelConfig({ cwd: folderWith({ db: '' }), env: {} })).location.field).toBe('db');
  });

  it('reads when the shells apply semantic updates (file, env wins) and names a bad value', () => {
    const cwd = folderWith({ semanticUpdates: 'after-write' });
    expect(loadModelConfig({ cwd, env: {} }).semanticUpdates).toBe('after-write');
    expect(loadModelConfig({ cwd, env: { GRAPHMEMIX_SEMANTIC_UPDATES: 'in-write' } }).semanticUpdates).toBe(
      'in-write',
    );
    const bad = thrown(() => loadModelConfig({ cwd: folderWith({ semanticUpdates: 'later' }), env: {} }));
    expect([bad.code, bad.location.field]).toEqual(['CONFIG', 'semanticUpdates']);
  });

  it('reads API keys bound to users from the file (entries as in GRAPHMEMIX_API_KEYS) and rejects a bad list', () => {
    const cwd = folderWith({ apiKeys: ['ka=alice', 'kb=bob|carol'] });
    expect(loadModelConfig({ cwd, env: {} }).apiKeys).toEqual(['ka=alice', 'kb=bob|carol']);
    const bad = folderWith({ apiKeys: 'ka=alice' });
    expect(thrown(() => loadModelConfig({ cwd: bad, env: {} })).code).toBe('CONFIG');
  });

  it('reads ./graphmemix.config.json; chat roles inherit default, embedding inherits only the connection', () => {
    const cwd = folderWith({
      default: { baseUrl: 'http://localhost:8000/v1', model: 'qwen', apiKeyEnv: 'MY_KEY', maxConcurrency: 4 },
      reader: { model: 'qwen-reader', timeoutMs: 5000 },
      embedding: { model: 'bge', supportsImages: false, batchSize: 32 },
      cacheDir: 'cache',
    });
    const config = loadModelConfig({ cwd, env: { MY_KEY: 'k1' } });
    expect(config.verifier).toEqual({
      baseUrl: 'http://localhost:8000/v1',
      model: 'qwen',
      apiKey: 'k1',
      maxConcurrency: 4,
    });
    expect(config.reader).toMatchObject({ model: 'qwen-reader', timeoutMs: 5000, apiKey: 'k1' });
    expect(config.judge?.model).toBe('qwen');
    expect(config.embedding).toMatchObject({
      baseUrl: 'http://localhost:8000/v1',
      model: 'bge',
      batchSize: 32,
      supportsImages: false,
    });
    expect(config.cacheDir).toBe(join(cwd, 'cache'));
  });

  it('lets the environment override the file, field by field', () => {
    const cwd = folderWith({
      default: { baseUrl: 'http://file-host/v1', model: 'file-model', apiKey: 'file-key' },
      embedding: { model: 'file-embed' },
    });
    const config = loadModelConfig({
      cwd,
      env: {
        GRAPHMEMIX_BASE_URL: 'http://env-host/v1',
        GRAPHMEMIX_READER_MODEL: 'env-reader',
        GRAPHMEMIX_EMBEDDING_MODEL: 'env-embed',
        GRAPHMEMIX_EMBEDDING_BASE_URL: 'http://embed-host/v1',
        GRAPHMEMIX_CACHE_DIR: 'env-cache',
      },
    });
    expect(config.verifier).toMatchObject({
      baseUrl: 'http://env-host/v1',
      model: 'file-model',
      apiKey: 'file-key',
    });
    expect(config.reader?.model).toBe('env-reader');
    expect(config.embedding).toMatchObject({ baseUrl: 'http://embed-host/v1', model: 'env-embed' });
    expect(config.cacheDir).toBe(join(cwd, 'env-cache'));
  });

  it('configures everything from the environment alone; OPENAI_API_KEY goes only to api.openai.com', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'gmx-env-'));
    const config = loadModelConfig({
      cwd,
      env: {
        GRAPHMEMIX_BASE_URL: 'https://api.openai.com/v1',
        GRAPHMEMIX_MODEL: 'm',
        OPENAI_API_KEY: 'sk-fallback',
      },
    });
    expect(config.verifier).toEqual({
      baseUrl: 'https://api.openai.com/v1',
      model: 'm',
      apiKey: 'sk-fallback',
    });
    const local = loadModelConfig({
      cwd,
      env: { GRAPHMEMIX_BASE_URL: 'http://h/v1', GRAPHMEMIX_MODEL: 'm', OPENAI_API_KEY: 'sk-fallback' },
    });
    expect(local.verifier).toEqual({ baseUrl: 'http://h/v1', model: 'm' });
    expect(config.embedding).toBeUndefined();
    const withOwnKey = loadModelConfig({
      cwd,
      env: {
        GRAPHMEMIX_BASE_URL: 'http://h/v1',
        GRAPHMEMIX_MODEL: 'm',
        GRAPHMEMIX_API_KEY: 'own',
        OPENAI_API_KEY: 'x',
      },
    });
    expect(withOwnKey.reader?.apiKey).toBe('own');
  });

  it('takes the file from the path option, then $GRAPHMEMIX_CONFIG', () => {
    const a = folderWith({ default: { baseUrl: 'http://a/v1', model: 'a' } }, 'a.json');
    const b = folderWith({ default: { baseUrl: 'http://b/v1', model: 'b' } }, 'b.json');
    const env = { GRAPHMEMIX_CONFIG: join(b, 'b.json') };
    expect(loadModelConfig({ env, cwd: a }).reader?.model).toBe('b');
    expect(loadModelConfig({ env, cwd: a, path: 'a.json' }).reader?.model).toBe('a');
  });

  it('a named config file that does not exist is NOT_FOUND_PATH', () => {
    const error = thrown(() => loadModelConfig({ env: {}, path: '/nonexistent/graphmemix.json' }));
    expect(error.code).toBe('NOT_FOUND_PATH');
  });

  it.each([
    [{ reader: { baseUrl: 'not a url', model: 'm' } }, 'reader.baseUrl'],
    [{ default: { baseUrl: 'http://h/v1', model: 'm', timeoutMs: -5 } }, 'default.timeoutMs'],
    [
      { embedding: { baseUrl: 'http://h/v1', model: 'e', supportsImages: 'yes' } },
      'embedding.supportsImages',
    ],
    [{ verfier: { model: 'typo' } }, 'verfier'],
    [{ reader: { model: 'm', temprature: 0 } }, 'reader.temprature'],
    [{ vision: { model: 'llava' } }, 'vision.baseUrl'],
    [{ embedding: { baseUrl: 'http://h/v1' } }, 'embedding.model'],
    [{ default: { baseUrl: 'http://h/v1', model: 'm', apiKeyEnv: 'UNSET_KEY_VAR' } }, 'default.apiKeyEnv'],
  ])('bad config %j -> CONFIG naming %s', (raw, field) => {
    const cwd = folderWith(raw);
    const error = thrown(() => loadModelConfig({ cwd, env: {} }));
    expect(error.code).toBe('CONFIG');
    expect(error.location.field).toBe(field);
  });

  it('names the environment variable when an env value is bad', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'gmx-env-'));
    const error = thrown(() => loadModelConfig({ cwd, env: { GRAPHMEMIX_BASE_URL: 'localhost:8000' } }));
    expect(error.code).toBe('CONFIG');
    expect(error.location.field).toBe('default.baseUrl');
    expect(error.details).toMatchObject({ envVar: 'GRAPHMEMIX_BASE_URL' });
  });

  it('a config file that is not JSON is CONFIG with the file named', () => {
    const cwd = folderWith('{ "default": ');
    const error = thrown(() => loadModelConfig({ cwd, env: {} }));
    expect(error.code).toBe('CONFIG');
    expect(error.location.file).toBe(join(cwd, 'graphmemix.config.json'));
  });
});

describe('resolveModelConfig', () => {
  it('a role key setting beats the inherited default key', () => {
    const config = resolveModelConfig(
      parseModelConfig({
        default: { baseUrl: 'http://h/v1', model: 'm', apiKey: 'default-key' },
        judge: { apiKeyEnv: 'JUDGE_KEY' },
      }),
      { JUDGE_KEY: 'judge-key' },
    );
    expect(config.judge?.apiKey).toBe('judge-key');
    expect(config.reader?.apiKey).toBe('default-key');
  });
});
