import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { GraphmemixError } from '../errors/index.ts';

const endpointFields = {
  baseUrl: z.url({ protocol: /^https?$/ }).optional(),
  model: z.string().min(1).optional(),
  /** The key itself. Prefer apiKeyEnv so config files hold no secrets. */
  apiKey: z.string().min(1).optional(),
  /** Name of the environment variable holding the key. */
  apiKeyEnv: z.string().min(1).optional(),
  timeoutMs: z.number().int().positive().optional(),
  /** Largest reply body accepted, in bytes (default DEFAULT_MAX_REPLY_BYTES, 8 MiB). */
  maxReplyBytes: z.number().int().positive().optional(),
  /** In-flight calls allowed on this endpoint (shared by every role on the same baseUrl). */
  maxConcurrency: z.number().int().positive().optional(),
  headers: z.record(z.string(), z.string()).optional(),
};

const chatEndpointSchema = z.strictObject(endpointFields);
const embeddingEndpointSchema = z.strictObject({
  ...endpointFields,
  supportsImages: z.boolean().optional(),
  batchSize: z.number().int().positive().optional(),
});

/** A byte count of the bounds: at least 1 KiB, at most `max`. */
const byteCount = (max: number) => z.number().int().min(1024).max(max).optional();
/** A count of the bounds (writes, questions, requests). */
const count = (min: number, max = 65_536) => z.number().int().min(min).max(max).optional();

/**
 * Operator bounds of the long-running shells (`serve`, `mcp`), the same as their flags (which beat these):
 * src/shell-kit/server-limits.ts, docs/interfaces.md "Backpressure".
 */
export const serverLimitsSchema = z.strictObject({
  /** Largest request body (HTTP) or message line (MCP stdio), bytes (default 16 MiB). */
  maxBodyBytes: byteCount(1024 ** 3),
  /** Write calls unsettled at once before the next is refused with BUSY (default 256). */
  maxPendingWrites: count(1),
  /** Questions waiting for a read worker before the next is refused with BUSY (default 64). */
  maxQueuedQuestions: count(0),
  /** Body bytes of all requests in flight (HTTP; default 16 bodies of the largest size). */
  bytesInFlight: byteCount(64 * 1024 ** 3),
  /** Body bytes of one key's requests in flight (HTTP; default 4 bodies of the largest size). */
  keyBytesInFlight: byteCount(64 * 1024 ** 3),
  /** Requests with a body of one key in flight (HTTP; default 64). */
  keyRequestsInFlight: count(1),
  /** Questions of one key in progress (HTTP and MCP over HTTP; default with several keys: half the read capacity). */
  keyQuestionsInFlight: count(1),
  /** Body bytes one key may send per second on average (HTTP; default 16 MiB/s with several keys). */
  keyBytesPerSecond: byteCount(64 * 1024 ** 3),
  /** Open connections in all (HTTP; default: the open-file limit less an eighth, at least 256, for the archive). */
  maxConnections: count(1, 1_048_576),
  /** Open connections from one client address, an IPv6 /64 (HTTP; default 256; 0: none; loopback not counted). */
  maxConnectionsPerAddress: count(0, 1_048_576),
});
export type ServerLimitsConfig = z.infer<typeof serverLimitsSchema>;

/**
 * The models section of graphmemix.config.json. Chat roles inherit every field of `default` they do not
 * set; `embedding` inherits the connection (baseUrl, key, timeout, headers, concurrency) but never the
 * model, since a chat model does not embed. Unknown keys are rejected so a typo is named, not ignored.
 */
export const modelConfigSchema = z.strictObject({
  $schema: z.string().optional(),
  default: chatEndpointSchema.optional(),
  verifier: chatEndpointSchema.optional(),
  reader: chatEndpointSchema.optional(),
  vision: chatEndpointSchema.optional(),
  judge: chatEndpointSchema.optional(),
  embedding: embeddingEndpointSchema.optional(),
  /** Directory of the on-disk call cache; relative paths are taken from the config file's folder. */
  cacheDir: z.string().min(1).optional(),
  /** Budget of one question over all its model calls, in ms (default DEFAULT_QUESTION_DEADLINE_MS, 120 s). */
  questionDeadlineMs: z.number().int().positive().optional(),
  /**
   * HTTP API keys bound to users, entries as in GRAPHMEMIX_API_KEYS (`key=alice|bob`, `key=*`); read by
   * `graphmemix serve` and `mcp --http` in addition to the environment. Secrets: keep the file private.
   */
  apiKeys: z.array(z.string().min(1)).optional(),
  /**
   * The archive every command opens when `--db` is not given: a SQLite file (relative paths are taken from the
   * config file's folder) or a `postgres://` URL. Prefer a URL without a password (PGPASSWORD or ~/.pgpass).
   */
  db: z.string().min(1).optional(),
  /**
   * The archive's media folder (uploads). Default: beside a SQLite file; for a Postgres archive
   * `./graphmemix-media/<host_port_db>`. Replicas on several machines must share it (docs/postgres.md).
   */
  mediaDir: z.string().min(1).optional(),
  /** Bounds of `serve` and `mcp` (their flags beat these). */
  limits: serverLimitsSchema.optional(),
  /**
   * When the long-running shells (`serve`, `mcp`, `view`) apply a write's mutual-kNN update:
   * OpenGraphmemixOptions.semanticUpdates (default 'after-write').
   */
  semanticUpdates: z.enum(['in-write', 'after-write']).optional(),
});

export type ModelConfig = z.infer<typeof modelConfigSchema>;
export type ChatRole = 'verifier' | 'reader' | 'vision' | 'judge';
export const CHAT_ROLES: readonly ChatRole[] = ['verifier', 'reader', 'vision', 'judge'];

export interface ResolvedEndpoint {
  baseUrl: string;
  model: string;
  apiKey?: string;
  timeoutMs?: number;
  maxReplyBytes?: number;
  maxConcurrency?: number;
  headers?: Record<string, string>;
}

export interface ResolvedEmbeddingEndpoint extends ResolvedEndpoint {
  supportsImages: boolean;
  batchSize?: number;
}

/** Only the roles that are fully configured (base URL and model) appear. */
export interface ResolvedModelConfig {
  verifier?: ResolvedEndpoint;
  reader?: ResolvedEndpoint;
  vision?: ResolvedEndpoint;
  judge?: ResolvedEndpoint;
  embedding?: ResolvedEmbeddingEndpoint;
  cacheDir?: string;
  questionDeadlineMs?: number;
  apiKeys?: string[];
  db?: string;
  mediaDir?: string;
  limits?: ServerLimitsConfig;
  semanticUpdates?: 'in-write' | 'after-write';
}

export type Env = Record<string, string | undefined>;

/** Environment variables and the config field each one sets. */
export const ENV_FIELDS: Record<string, string> = {
  GRAPHMEMIX_BASE_URL: 'default.baseUrl',
  GRAPHMEMIX_MODEL: 'default.model',
  GRAPHMEMIX_API_KEY: 'default.apiKey',
  GRAPHMEMIX_VERIFIER_MODEL: 'verifier.model',
  GRAPHMEMIX_READER_MODEL: 'reader.model',
  GRAPHMEMIX_VISION_MODEL: 'vision.model',
  GRAPHMEMIX_JUDGE_MODEL: 'judge.model',
  GRAPHMEMIX_EMBEDDING_MODEL: 'embedding.model',
  GRAPHMEMIX_EMBEDDING_BASE_URL: 'embedding.baseUrl',
  GRAPHMEMIX_CACHE_DIR: 'cacheDir',
  GRAPHMEMIX_DB: 'db',
  GRAPHMEMIX_MEDIA_DIR: 'mediaDir',
  GRAPHMEMIX_SEMANTIC_UPDATES: 'semanticUpdates',
};

export const DEFAULT_CONFIG_FILE = 'graphmemix.config.json';

/**
 * Loads the model configuration. File: `options.path`, else $GRAPHMEMIX_CONFIG, else ./graphmemix.config.json
 * when it exists (none is fine: environment only). Then the environment (ENV_FIELDS) overrides the file
 * field by field, and roles inherit from `default` (a role's own field, from file or env, beats an inherited
 * one: GRAPHMEMIX_MODEL does not replace a file's reader.model). Keys: the resolved apiKey, else the
 * variable named by apiKeyEnv, else OPENAI_API_KEY (only for api.openai.com). Throws CONFIG naming the field (location.field), or
 * NOT_FOUND_PATH for a named config file that does not exist.
 */
export function loadModelConfig(
  options: { path?: string; env?: Env; cwd?: string } = {},
): ResolvedModelConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const named = options.path ?? env.GRAPHMEMIX_CONFIG;
  const path = named !== undefined && named !== '' ? resolve(cwd, named) : resolve(cwd, DEFAULT_CONFIG_FILE);
  let fileConfig: ModelConfig = {};
  if (existsSync(path)) {
    fileConfig = parseModelConfig(readJson(path), path);
    if (fileConfig.cacheDir !== undefined) fileConfig.cacheDir = resolve(dirname(path), fileConfig.cacheDir);
    if (fileConfig.mediaDir !== undefined) fileConfig.mediaDir = resolve(dirname(path), fileConfig.mediaDir);
    if (fileConfig.db !== undefined) fileConfig.db = resolveDbPath(dirname(path), fileConfig.db);
  } else if (named !== undefined && named !== '') {
    throw new GraphmemixError('NOT_FOUND_PATH', `config file not found: ${path}`, {
      location: { file: path },
    });
  }
  const envConfig = configFromEnv(env, cwd);
  return resolveModelConfig(mergeConfigs(fileConfig, envConfig), env);
}

/** Validates a raw config object; CONFIG error naming the first bad field (e.g. `reader.baseUrl`). */
export function parseModelConfig(raw: unknown, source?: string): ModelConfig {
  const parsed = modelConfigSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue?.path.map(String) ?? [];
  if (issue?.code === 'unrecognized_keys') path.push(issue.keys[0] ?? '');
  const field = path.join('.');
  const envName = Object.entries(ENV_FIELDS).find(([, target]) => target === field)?.[0];
  const where = source === 'environment' && envName ? `${envName} (${field})` : field || '(root)';
  throw new GraphmemixError('CONFIG', `bad model config: ${where}: ${issue?.message ?? 'invalid'}`, {
    location: { field, ...(source && source !== 'environment' ? { file: source } : {}) },
    details: {
      source: source ?? 'object',
      ...(envName && source === 'environment' ? { envVar: envName } : {}),
    },
  });
}

/** Applies inheritance and key lookup; drops roles without a model; CONFIG errors name the field. */
export function resolveModelConfig(config: ModelConfig, env: Env = process.env): ResolvedModelConfig {
  const out: ResolvedModelConfig = {};
  const base = config.default ?? {};
  for (const role of CHAT_ROLES) {
    const endpoint = resolveEndpoint(role, config[role] ?? {}, base, env);
    if (endpoint) out[role] = endpoint;
  }
  const own = config.embedding ?? {};
  const { model: _chatModel, ...connection } = base;
  const embedding = resolveEndpoint('embedding', own, connection, env);
  if (embedding) {
    out.embedding = { ...embedding, supportsImages: own.supportsImages ?? false };
    if (own.batchSize !== undefined) out.embedding.batchSize = own.batchSize;
  }
  if (config.cacheDir !== undefined) out.cacheDir = config.cacheDir;
  if (config.questionDeadlineMs !== undefined) out.questionDeadlineMs = config.questionDeadlineMs;
  if (config.apiKeys !== undefined) out.apiKeys = [...config.apiKeys];
  if (config.db !== undefined) out.db = config.db;
  if (config.mediaDir !== undefined) out.mediaDir = config.mediaDir;
  if (config.limits !== undefined) out.limits = { ...config.limits };
  if (config.semanticUpdates !== undefined) out.semanticUpdates = config.semanticUpdates;
  return out;
}

/** A config/env `db`: a SQLite path is taken from `dir`; URLs and the in-memory forms stay as written. */
function resolveDbPath(dir: string, db: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(db) || db === 'memory:' || db === ':memory:' ? db : resolve(dir, db);
}

type EndpointFields = z.infer<typeof chatEndpointSchema>;

function resolveEndpoint(
  role: string,
  own: EndpointFields,
  inherited: EndpointFields,
  env: Env,
): ResolvedEndpoint | undefined {
  const fields = { ...inherited, ...own };
  if (fields.model === undefined) {
    if (own.baseUrl !== undefined) throw configError(`${role}.model`, `${role} has a baseUrl but no model`);
    return undefined;
  }
  if (fields.baseUrl === undefined) {
    throw configError(`${role}.baseUrl`, `${role} model ${fields.model} has no baseUrl`);
  }
  const endpoint: ResolvedEndpoint = { baseUrl: fields.baseUrl, model: fields.model };
  // A role's own key settings beat inherited ones. OPENAI_API_KEY is the last resort, and only for OpenAI's own
  // endpoint: sending it to whatever base URL is configured (a local or third-party server) would leak it.
  const apiKey =
    keyFrom(own, role, env) ??
    keyFrom(inherited, 'default', env) ??
    (isOpenAIEndpoint(fields.baseUrl) ? env.OPENAI_API_KEY || undefined : undefined);
  if (apiKey !== undefined) endpoint.apiKey = apiKey;
  if (fields.timeoutMs !== undefined) endpoint.timeoutMs = fields.timeoutMs;
  if (fields.maxReplyBytes !== undefined) endpoint.maxReplyBytes = fields.maxReplyBytes;
  if (fields.maxConcurrency !== undefined) endpoint.maxConcurrency = fields.maxConcurrency;
  if (fields.headers !== undefined) endpoint.headers = fields.headers;
  return endpoint;
}

function isOpenAIEndpoint(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

function keyFrom(fields: EndpointFields, section: string, env: Env): string | undefined {
  if (fields.apiKey !== undefined) return fields.apiKey;
  if (fields.apiKeyEnv === undefined) return undefined;
  const value = env[fields.apiKeyEnv];
  if (!value) {
    throw configError(
      `${section}.apiKeyEnv`,
      `environment variable ${fields.apiKeyEnv} (${section}.apiKeyEnv) is not set`,
    );
  }
  return value;
}

function configFromEnv(env: Env, cwd: string): ModelConfig {
  const raw: Record<string, Record<string, string> | string> = {};
  for (const [name, target] of Object.entries(ENV_FIELDS)) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    const [section, key] = target.split('.') as [string, string | undefined];
    if (key === undefined) {
      raw[section] =
        section === 'cacheDir' || section === 'mediaDir'
          ? resolve(cwd, value)
          : section === 'db'
            ? resolveDbPath(cwd, value)
            : value;
    } else raw[section] = { ...(raw[section] as Record<string, string> | undefined), [key]: value };
  }
  return parseModelConfig(raw, 'environment');
}

/** Field-by-field: `over` wins wherever it sets a field. */
function mergeConfigs(under: ModelConfig, over: ModelConfig): ModelConfig {
  const out: ModelConfig = { ...under };
  for (const key of ['default', ...CHAT_ROLES] as const) {
    if (over[key]) out[key] = { ...under[key], ...over[key] };
  }
  if (over.embedding) out.embedding = { ...under.embedding, ...over.embedding };
  if (over.cacheDir !== undefined) out.cacheDir = over.cacheDir;
  if (over.questionDeadlineMs !== undefined) out.questionDeadlineMs = over.questionDeadlineMs;
  if (over.apiKeys !== undefined) out.apiKeys = over.apiKeys;
  if (over.db !== undefined) out.db = over.db;
  if (over.mediaDir !== undefined) out.mediaDir = over.mediaDir;
  if (over.limits !== undefined) out.limits = { ...under.limits, ...over.limits };
  if (over.semanticUpdates !== undefined) out.semanticUpdates = over.semanticUpdates;
  return out;
}

function readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new GraphmemixError('NOT_FOUND_PATH', `config file cannot be read: ${path}`, {
      location: { file: path },
      cause: error,
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new GraphmemixError('CONFIG', `config file is not valid JSON: ${path}`, {
      location: { file: path },
      cause: error,
    });
  }
}

function configError(field: string, message: string): GraphmemixError {
  return new GraphmemixError('CONFIG', `bad model config: ${message}`, { location: { field } });
}
