import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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
});
