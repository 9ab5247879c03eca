import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Hono } from 'hono';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { createMcpServer, type McpServerOptions } from '../../src/mcp/create-mcp-server.ts';
import { createOpenAICompatibleChat } from '../../src/providers/openai-compatible-chat.ts';
import { createServer, type ServerOptions } from '../../src/server/create-server.ts';
import { type FakeOpenAIServer, startFakeOpenAIServer } from '../support/fake-openai-server.ts';

/**
 * Counts hostile inputs tried and handled per category and prints the table after the file's tests, so
 * the figures can be cited from the test output. A case counts as handled only after all its assertions
 * passed (`handled()` runs last in each case).
 */
export class SecurityTally {
  readonly #rows = new Map<string, { tried: number; handled: number }>();

  tried(category: string): () => void {
    const row = this.#rows.get(category) ?? { tried: 0, handled: 0 };
    row.tried += 1;
    this.#rows.set(category, row);
    return () => {
      row.handled += 1;
    };
  }

  table(title: string): string {
    const lines = [`security corpus: ${title}`, 'category | tried | handled'];
    let tried = 0;
    let handled = 0;
    for (const [category, row] of this.#rows) {
      lines.push(`${category} | ${row.tried} | ${row.handled}`);
      tried += row.tried;
      handled += row.handled;
    }
    lines.push(`TOTAL | ${tried} | ${handled}`);
    return lines.join('\n');
  }

  print(title: string): void {
    console.log(this.table(title));
  }
}

/** A real archive behind the HTTP app, with a reader model on a real local fake OpenAI server. */
export interface SecurityWorld {
  graphmemix: Graphmemix;
  app: Hono;
  mediaDir: string;
  fake: FakeOpenAIServer;
  close(): Promise<void>;
}

export async function startSecurityWorld(options: Partial<ServerOptions> = {}): Promise<SecurityWorld> {
  const fake = await startFakeOpenAIServer({
    handlers: { chat: () => ({ type: 'text', content: 'an answer' }) },
  });
  const reader = createOpenAICompatibleChat({ baseUrl: fake.baseUrl, model: 'fake-reader' });
  const graphmemix = await openGraphmemix({ db: 'memory:', models: { reader } });
  const mediaDir = mkdtempSync(join(tmpdir(), 'gmx-sec-media-'));
  const app = createServer({
    graphmemix,
    apiKeys: ['ka=alice', 'kb=bob|carol', 'kroot=*', 'kold'],
    mediaDir,
    ...options,
  });
  return {
    graphmemix,
    app,
    mediaDir,
    fake,
    close: async () => {
      await graphmemix.close();
      await fake.close();
    },
  };
}

export function jsonRequest(method: string, key: string | undefined, body?: unknown): RequestInit {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  return { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) };
}

/** An MCP client over an in-memory transport to createMcpServer (the same tools as stdio and HTTP). */
export async function connectMcp(graphmemix: Graphmemix, options: McpServerOptions): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createMcpServer(graphmemix, options);
  await server.connect(serverSide);
  const client = new Client({ name: 'security-test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

export function toolError(result: unknown): { code?: string; message?: string } | undefined {
  const r = result as CallToolResult;
  if (!r.isError) return undefined;
  const first = r.content[0];
  const text = first?.type === 'text' ? first.text : '{}';
  return (JSON.parse(text) as { error?: { code?: string; message?: string } }).error ?? {};
}

/** Hostile filesystem fixtures inside a user's media folder: links out, a FIFO, a directory. */
export function plantHostileFiles(userDir: string): {
  symlinkFile: string;
  symlinkDir: string;
  fifo?: string;
} {
  mkdirSync(userDir, { recursive: true });
  const symlinkFile = join(userDir, 'innocent.jpg');
  symlinkSync('/etc/passwd', symlinkFile);
  const symlinkDir = join(userDir, 'album');
  symlinkSync('/etc', symlinkDir);
  writeFileSync(join(userDir, 'real.png'), Buffer.from('89504e470d0a1a0a', 'hex'));
  let fifo: string | undefined;
  try {
    fifo = join(userDir, 'pipe.jpg');
    execFileSync('mkfifo', [fifo]);
  } catch {
    fifo = undefined;
  }
  return { symlinkFile, symlinkDir, ...(fifo === undefined ? {} : { fifo }) };
}

/**
 * The hostile media references, by category. `mediaDir`/`user` place the ones that pretend to live in the
 * media store. Every entry must be refused at the HTTP/MCP edge and never read by toImageUrl.
 */
export interface HostileUri {
  category: string;
  uri: string;
  /** A real file inside the media store (another user's, or named by a file: URI): refused at the edge,
   * though toImageUrl (whose roots are the whole store) could read it. */
  storeFile?: boolean;
}

export function hostileMediaUris(mediaDir: string, user: string): HostileUri[] {
  const own = join(mediaDir, user);
  const planted = { symlinkFile: join(own, 'innocent.jpg'), symlinkDir: join(own, 'album') };
  const list: [string, string][] = [
    ['absolute path', '/etc/passwd'],
    ['absolute path', '/etc/shadow'],
    ['/proc', '/proc/self/environ'],
    ['/proc', '/proc/self/cmdline'],
    ['/proc', '/proc/1/environ'],
    ['/dev', '/dev/zero'],
    ['/dev', '/dev/urandom'],
    ['/dev', '/dev/stdin'],
    ['traversal', '../../../../etc/passwd'],
    ['traversal', `${own}/../../../../../etc/passwd`],
    ['traversal', `${own}/../bob/secret.png`],
    ['traversal', `${mediaDir}/bob/real.png`],
    ['traversal', 'real.png'],
    ['file: URI', 'file:///etc/passwd'],
    ['file: URI', 'FILE:///proc/self/environ'],
    ['file: URI', 'file://localhost/etc/passwd'],
    ['file: URI', `file://${own}/real.png`],
    ['encoded traversal', '%2e%2e/%2e%2e/%2e%2e/etc/passwd'],
    ['encoded traversal', `${own}/%2e%2e/%2e%2e/etc/passwd`],
    ['encoded traversal', '..%2f..%2f..%2fetc%2fpasswd'],
    ['encoded traversal', 'file:///etc/%2e%2e/etc/passwd'],
    ['encoded traversal', 'file:///etc%2fpasswd'],
    ['unicode dots', '\u2024\u2024/\u2024\u2024/etc/passwd'],
    ['unicode dots', `${own}/\uff0e\uff0e/\uff0e\uff0e/etc/passwd`],
    ['NUL byte', `${own}/real.png\u0000/../../etc/passwd`],
    ['NUL byte', '/etc/passwd\u0000.png'],
    ['NUL byte', 'file:///etc/passwd%00.png'],
    ['symlink', planted.symlinkFile],
    ['symlink', `${planted.symlinkDir}/passwd`],
    ['special file', own],
    ['special file', join(own, 'pipe.jpg')],
    ['other scheme', 'ftp://attacker.example/x.png'],
    ['other scheme', 'javascript:alert(1)'],
    ['other scheme', 'smb://host/share/x.png'],
    ['other scheme', '\\\\host\\share\\x.png'],
    ['other scheme', 'C:\\Windows\\win.ini'],
    ['oversized data: URI', `data:image/png;base64,${'A'.repeat(70_000)}`],
  ];
  const storeFiles = new Set([`${mediaDir}/bob/real.png`, `file://${own}/real.png`]);
  return list.map(([category, uri]) => ({
    category,
    uri,
    ...(storeFiles.has(uri) ? { storeFile: true } : {}),
  }));
}

/** Remote references: stored as data, but never fetched or forwarded to the model. */
export const REMOTE_URIS = [
  'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
  'https://attacker.example/exfil.png',
  'http://127.0.0.1:1/admin',
  'https://user:pass@attacker.example/x.png',
];
