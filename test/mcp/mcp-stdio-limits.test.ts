import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { serveMcpStdio } from '../../src/mcp/serve-mcp.ts';
import { StdioMessageFilter } from '../../src/mcp/stdio-message-filter.ts';
import { createFakeGraphmemix } from '../support/fake-graphmemix.ts';
import { BIN } from '../support/repo-paths.ts';

interface Reply {
  id: number | null;
  result?: { tools?: unknown[]; protocolVersion?: string };
  error?: { code: number; message: string; data?: { code: string } };
}

const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
})}\n`;
const INITIALIZED = `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`;
const LIST_TOOLS = `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`;

/** Runs chunks through a filter; returns what it passed on and what it answered. */
async function filterChunks(max: number, chunks: (string | Buffer)[]) {
  const replies: string[] = [];
  const filter = new StdioMessageFilter(max, (line) => replies.push(line));
  const out: Buffer[] = [];
  filter.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => filter.on('end', resolve));
  for (const chunk of chunks) filter.write(chunk);
  filter.end();
  await ended;
  return { passed: Buffer.concat(out).toString('utf8'), replies: replies.map((r) => JSON.parse(r) as Reply) };
}

/** Reads newline-delimited JSON replies from a stream until `count` arrived. */
function collectReplies(stream: NodeJS.ReadableStream, count: number): Promise<Reply[]> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const replies: Reply[] = [];
    const timer = setTimeout(() => reject(new Error(`only ${replies.length} replies: ${buffer}`)), 20_000);
    stream.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      let newline = buffer.indexOf('\n');
      while (newline !== -1) {
        replies.push(JSON.parse(buffer.slice(0, newline)) as Reply);
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf('\n');
      }
      if (replies.length >= count) {
        clearTimeout(timer);
        resolve(replies);
      }
    });
  });
}

describe('StdioMessageFilter', () => {
  it('passes whole JSON lines on, however the chunks cut them (multi-byte characters included)', async () => {
    const line = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping', params: { text: 'café ☕ 東京' } });
    const bytes = Buffer.from(`${line}\n${line}\r\n\n`);
    // One byte at a time splits every multi-byte character.
    const chunks = [...bytes].map((byte) => Buffer.from([byte]));
    const { passed, replies } = await filterChunks(1024, chunks);
    expect(replies).toEqual([]);
    expect(
      passed
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l)),
    ).toEqual([JSON.parse(line), JSON.parse(line)]);
  });

  it('skips a line over the limit as it streams in, answers TOO_LARGE once, and goes on', async () => {
    const ok = `${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' })}\n`;
    const big = 'x'.repeat(5000);
    const { passed, replies } = await filterChunks(1000, [
      ok,
      big.slice(0, 2500),
      big.slice(2500),
      `\n${ok}`,
    ]);
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({ id: null, error: { code: -32600, data: { code: 'TOO_LARGE' } } });
    expect(replies[0]?.error?.message).toContain('1000 bytes');
    expect(passed).toBe(ok + ok);
  });

  it('accepts a line of exactly the limit and refuses one byte more', async () => {
    const exact = JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping', params: { pad: '' } });
    const pad = 'p'.repeat(200 - exact.length);
    const line = JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping', params: { pad } });
    expect(Buffer.byteLength(line)).toBe(200);
    expect((await filterChunks(200, [`${line}\n`])).passed).toBe(`${line}\n`);
    expect((await filterChunks(199, [`${line}\n`])).replies[0]?.error?.data?.code).toBe('TOO_LARGE');
  });

  it('answers a line that is not JSON with a parse error and passes nothing of it', async () => {
    const { passed, replies } = await filterChunks(1000, ['{"jsonrpc":"2.0","id":5,"method":\n', LIST_TOOLS]);
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({ id: null, error: { code: -32700, data: { code: 'INVALID_INPUT' } } });
    expect(passed).toBe(LIST_TOOLS);
  });

  it('answers what is not one JSON-RPC message (the SDK dropped each without a reply), with its id when readable', async () => {
    const refused: [string, string | number | null][] = [
      ['[{"jsonrpc":"2.0","id":900,"method":"tools/list"}]', null],
      ['[]', null],
      ['"str"', null],
      ['123', null],
      ['{}', null],
      ['{"jsonrpc":"1.0","id":901,"method":"tools/list"}', 901],
      ['{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', null],
      ['{"jsonrpc":"2.0","id":"x"}', 'x'],
    ];
    const { passed, replies } = await filterChunks(1000, [
      ...refused.map(([line]) => `${line}\n`),
      LIST_TOOLS,
    ]);
    expect(replies.map((reply) => reply.id)).toEqual(refused.map(([, id]) => id));
    for (const reply of replies)
      expect(reply.error).toMatchObject({ code: -32600, data: { code: 'INVALID_INPUT' } });
    expect(passed).toBe(LIST_TOOLS);
    // Notifications and responses go on as they are.
    const response = '{"jsonrpc":"2.0","id":3,"result":{}}\n';
    const more = await filterChunks(1000, [INITIALIZED, response]);
    expect(more.replies).toHaveLength(0);
    expect(more.passed).toBe(INITIALIZED + response);
  });
});

describe('serveMcpStdio limits', () => {
  it('keeps serving after an oversized and a broken message, answering each', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const served = serveMcpStdio(createFakeGraphmemix(), { stdin, stdout, maxMessageBytes: 4096 });
    const replies = collectReplies(stdout, 4);
    stdin.write(INITIALIZE);
    stdin.write(INITIALIZED);
    stdin.write(
      `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{"text":"${'y'.repeat(10_000)}"}}}\n`,
    );
    stdin.write('not json at all\n');
    stdin.write(LIST_TOOLS);
    // Answers to unreadable lines go out at once, so they may overtake the server's replies.
    const got = await replies;
    const init = got.find((r) => r.id === 1);
    const tooLarge = got.find((r) => r.error?.data?.code === 'TOO_LARGE');
    const parseError = got.find((r) => r.error?.data?.code === 'INVALID_INPUT');
    const list = got.find((r) => r.id === 2);
    expect(init?.result?.protocolVersion).toBeDefined();
    expect(tooLarge?.error?.data?.code).toBe('TOO_LARGE');
    expect(parseError?.error?.code).toBe(-32700);
    expect(list?.id).toBe(2);
    expect(list?.result?.tools?.length).toBeGreaterThan(5);
    stdin.end();
    await served;
  });

  it('the real CLI answers an oversized line with TOO_LARGE and still answers the next request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gmx-mcp-limit-'));
    const child = spawn(
      process.execPath,
      [BIN, 'mcp', '--db', join(dir, 'a.db'), '--max-body-bytes', '2048'],
      {
        env: { PATH: process.env.PATH ?? '', HOME: dir, OPENAI_API_KEY: '' },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const replies = collectReplies(child.stdout, 3);
      child.stdin.write(INITIALIZE);
      child.stdin.write(INITIALIZED);
      // 64 KiB in pieces: the process never holds more than the limit of it.
      for (let i = 0; i < 16; i++) child.stdin.write('z'.repeat(4096));
      child.stdin.write(`\n${LIST_TOOLS}`);
      const got = await replies;
      const init = got.find((r) => r.id === 1);
      const tooLarge = got.find((r) => r.id === null);
      const list = got.find((r) => r.id === 2);
      expect(init?.id).toBe(1);
      expect(tooLarge).toMatchObject({ id: null, error: { data: { code: 'TOO_LARGE' } } });
      expect(list?.id).toBe(2);
      expect(stderr).toContain('message over 2048 bytes');
      child.stdin.end();
      expect(await exited).toBe(0);
    } finally {
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
