import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../support/repo-paths.ts';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGTERM');
});

function cli(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', OPENAI_API_KEY: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
  const firstLine = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => stdout.includes('\n') && resolve(stdout.split('\n')[0]!));
    void exited.then((code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  // Not every test waits for a first line; an exit must not become an unhandled rejection.
  firstLine.catch(() => undefined);
  return { child, exited, firstLine, output: () => ({ stdout, stderr }) };
}

/** The port `mcp --http` printed it listens on (polled from its stderr; 0 if it never did within 10 s). */
async function mcpPort(mcp: ReturnType<typeof cli>): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = Number(/127\.0\.0\.1:(\d+)\/mcp/.exec(mcp.output().stderr)?.[1] ?? 0);
    if (port !== 0) return port;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return 0;
}

describe('graphmemix serve', () => {
  it('serves the API with keys from GRAPHMEMIX_API_KEYS and stops cleanly on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gmx-serve-'));
    try {
      const server = cli(['serve', '--db', join(dir, 'a.db'), '--port', '0', '--json'], {
        GRAPHMEMIX_API_KEYS: 'k1',
      });
      const { url } = JSON.parse(await server.firstLine) as { url: string };
      const headers = { authorization: 'Bearer k1', 'content-type': 'application/json' };
      expect((await fetch(`${url}/v1/search`, { method: 'POST', body: '{}' })).status).toBe(401);
      const added = await fetch(`${url}/v1/memories`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          user_id: 'alice',
          memories: [{ id: 'm1', text: 'Dentist appointment on May 3', timestamp: '2024-04-20' }],
        }),
      });
      expect(added.status).toBe(200);
      const retrieved = await fetch(`${url}/v1/retrieve`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ user_id: 'alice', question: 'When is the dentist appointment?' }),
      });
      const body = (await retrieved.json()) as { evidence: { memory_id: string }[] };
      expect(body.evidence.map((e) => e.memory_id)).toEqual(['m1']);
      const other = await fetch(`${url}/v1/retrieve`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ user_id: 'bob', question: 'When is the dentist appointment?' }),
      });
      expect(((await other.json()) as { evidence: unknown[] }).evidence).toEqual([]);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to start without keys unless --open, and --open on a public host', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gmx-serve-'));
    try {
      const noKeys = cli(['serve', '--db', join(dir, 'a.db'), '--port', '0']);
      expect(await noKeys.exited).toBe(2);
      expect(noKeys.output().stderr).toContain('CONFIG');
      const publicOpen = cli(['serve', '--db', join(dir, 'a.db'), '--open', '--host', '0.0.0.0']);
      expect(await publicOpen.exited).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes its request bounds from flags and the config file, the flag winning; refuses contradicting ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gmx-serve-'));
    try {
      const config = join(dir, 'graphmemix.config.json');
      writeFileSync(config, JSON.stringify({ limits: { keyRequestsInFlight: 1 } }));
      const env = { GRAPHMEMIX_API_KEYS: 'ka=ann,kb=bob' };
      const add = (url: string, key: string, user: string) =>
        fetch(`${url}/v1/memories`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ user_id: user, memories: [{ id: 'm', text: 'a note' }] }),
        });
      /** A request of key `ka` whose body has not all arrived: it holds its place in the budget. */
      const halfSent = async (url: string) => {
        const socket = connect(Number(new URL(url).port), '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write(
          'POST /v1/memories HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ka\r\n' +
            'Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"user_id":"ann",',
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
        return socket;
      };
      const fromConfig = cli(
        ['serve', '--db', join(dir, 'a.db'), '--port', '0', '--json', '--config', config],
        env,
      );
      const { url } = JSON.parse(await fromConfig.firstLine) as { url: string };
      const held = await halfSent(url);
      const refused = await add(url, 'ka', 'ann');
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({
        code: 'BUSY',
        message: expect.stringContaining('this key has 1 requests in progress'),
      });
      expect((await add(url, 'kb', 'bob')).status).toBe(200);
      held.destroy();
      fromConfig.child.kill('SIGTERM');
      expect(await fromConfig.exited).toBe(0);

      const flagWins = cli(
        [
          'serve',
          '--db',
          join(dir, 'a.db'),
          '--port',
          '0',
          '--json',
          '--config',
          config,
          '--key-requests-in-flight',
          '2',
        ],
        env,
      );
      const second = (JSON.parse(await flagWins.firstLine) as { url: string }).url;
      const heldAgain = await halfSent(second);
      expect((await add(second, 'ka', 'ann')).status).toBe(200);
      heldAgain.destroy();
      flagWins.child.kill('SIGTERM');
      expect(await flagWins.exited).toBe(0);

      const contradicting = cli(
        ['serve', '--db', join(dir, 'b.db'), '--port', '0', '--key-bytes-in-flight', '2048'],
        env,
      );
      expect(await contradicting.exited).toBe(2);
      expect(contradicting.output().stderr).toMatch(
        /CONFIG.*--key-bytes-in-flight \(2048 bytes\) is below the default body limit/,
      );
      const mcpStdio = cli(['mcp', '--db', join(dir, 'b.db'), '--bytes-in-flight', '99999999']);
      expect(await mcpStdio.exited).toBe(2);
      expect(mcpStdio.output().stderr).toContain(
        '--bytes-in-flight bounds HTTP requests; MCP over stdio has none',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('mcp --http takes keys and bounds from the config file as serve does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gmx-mcp-http-'));
    try {
      const config = join(dir, 'graphmemix.config.json');
      writeFileSync(config, JSON.stringify({ apiKeys: ['kc=carol'], limits: { keyRequestsInFlight: 1 } }));
      const mcp = cli(['mcp', '--http', '--db', join(dir, 'a.db'), '--port', '0', '--config', config]);
      const port = await mcpPort(mcp);
      expect(port).toBeGreaterThan(0);
      const initialize = (key?: string) =>
        fetch(`http://127.0.0.1:${port}/mcp`, {
          method: 'POST',
          headers: {
            ...(key ? { authorization: `Bearer ${key}` } : {}),
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: {
              protocolVersion: '2025-03-26',
              capabilities: {},
              clientInfo: { name: 't', version: '1' },
            },
          }),
        });
      expect((await initialize()).status).toBe(401);
      expect((await initialize('kc')).status).toBe(200);
      const socket = connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        'POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer kc\r\nAccept: application/json, text/event-stream\r\n' +
          'Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"jsonrpc":',
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await initialize('kc')).status).toBe(503);
      socket.destroy();
      mcp.child.kill('SIGTERM');
      expect(await mcp.exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serve and mcp --http bound their open connections (flag or config): the one past the bound is closed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gmx-serve-conns-'));
    /** Three sockets that each ask for the health page: which were answered, which closed unanswered. */
    const threeSockets = async (port: number, path: string) => {
      const outcomes: Array<Promise<string>> = [];
      const sockets = [];
      for (let i = 0; i < 3; i++) {
        const socket = connect(port, '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        sockets.push(socket);
        outcomes.push(
          new Promise((settle) => {
            socket.on('data', (chunk) => settle(String(chunk).startsWith('HTTP/1.1') ? 'answered' : '?'));
            socket.on('close', () => settle('closed'));
            socket.on('error', () => settle('closed'));
          }),
        );
        socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const seen = await Promise.all(outcomes);
      for (const socket of sockets) socket.destroy();
      return seen;
    };
    try {
      const server = cli(
        ['serve', '--db', join(dir, 'a.db'), '--port', '0', '--json', '--max-connections', '2'],
        { GRAPHMEMIX_API_KEYS: 'k1' },
      );
      const { url } = JSON.parse(await server.firstLine) as { url: string };
      expect(await threeSockets(Number(new URL(url).port), '/v1/health')).toEqual([
        'answered',
        'answered',
        'closed',
      ]);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);

      const config = join(dir, 'graphmemix.config.json');
      writeFileSync(config, JSON.stringify({ apiKeys: ['kc=carol'], limits: { maxConnections: 2 } }));
      const mcp = cli(['mcp', '--http', '--db', join(dir, 'a.db'), '--port', '0', '--config', config]);
      const port = await mcpPort(mcp);
      expect(await threeSockets(port, '/mcp')).toEqual(['answered', 'answered', 'closed']);
      mcp.child.kill('SIGTERM');
      expect(await mcp.exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('checks its keys before it opens anything: none, or short ones on a network interface, create no archive', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gmx-serve-keys-'));
    try {
      for (const [args, env] of [
        [['serve', '--port', '0'], {}],
        [['serve', '--port', '0', '--host', '0.0.0.0'], { GRAPHMEMIX_API_KEYS: 'short=alice' }],
        [['mcp', '--http', '--port', '0'], {}],
        [['mcp', '--http', '--port', '0', '--host', '0.0.0.0'], { GRAPHMEMIX_API_KEYS: 'short=alice' }],
      ] as const) {
        const refused = cli([...args, '--db', join(dir, 'a.db')], env);
        expect(await refused.exited, args.join(' ')).toBe(2);
        expect(refused.output().stderr).toMatch(/CONFIG.*(API keys are required|shorter than 16 characters)/);
        expect(existsSync(join(dir, 'a.db')), args.join(' ')).toBe(false);
      }
      // On loopback a short key starts, with a warning.
      const local = cli(['serve', '--db', join(dir, 'a.db'), '--port', '0', '--json'], {
        GRAPHMEMIX_API_KEYS: 'short=alice',
      });
      await local.firstLine;
      expect(local.output().stderr).toContain('warning: 1 API key(s) shorter than 16 characters');
      local.child.kill('SIGTERM');
      expect(await local.exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
