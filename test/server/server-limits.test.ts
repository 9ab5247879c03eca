import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseInput } from '../../src/api-schemas/parse-input.ts';
import { listenFlagsSchema } from '../../src/api-schemas/route-schemas.ts';
import { parseListenFlags } from '../../src/cli/limit-flags.ts';
import { GraphmemixError } from '../../src/errors/graphmemix-error.ts';
import { loadModelConfig, parseModelConfig } from '../../src/providers/model-config.ts';
import { openShellGraphmemix } from '../../src/shell-kit/open-shell-graphmemix.ts';
import { refuseHttpOnlyLimits, resolveServerLimits } from '../../src/shell-kit/server-limits.ts';

const MiB = 1024 * 1024;
const listen = (flags: Record<string, string> = {}) =>
  parseInput(listenFlagsSchema, { db: 'a.db', port: '0', host: '127.0.0.1', ...flags });

function caught(run: () => unknown): GraphmemixError {
  try {
    run();
  } catch (error) {
    if (error instanceof GraphmemixError) return error;
    throw error;
  }
  throw new Error('expected a GraphmemixError');
}

describe('server limits (serve / mcp flags and the config file)', () => {
  it('sets nothing when nothing is given: the defaults stay with the code that applies them', () => {
    expect(resolveServerLimits(listen())).toEqual({ budget: {}, connections: {} });
  });

  it('a flag beats the config field; unset flags keep the config values', () => {
    const limits = resolveServerLimits(
      listen({ max_pending_writes: '8', key_requests_in_flight: '3', key_questions_in_flight: '4' }),
      {
        maxPendingWrites: 100,
        maxQueuedQuestions: 5,
        keyRequestsInFlight: 9,
        bytesInFlight: 512 * MiB,
      },
    );
    expect(limits).toEqual({
      maxPendingWrites: 8,
      maxQueuedQuestions: 5,
      budget: { perCallerRequests: 3, perCallerQuestions: 4, totalBytes: 512 * MiB },
      connections: {},
    });
  });

  it('passes the connection bounds (flag or config) to the listener; MCP over stdio refuses them', () => {
    expect(
      resolveServerLimits(listen({ max_connections_per_address: '0' }), {
        maxConnections: 900,
        maxConnectionsPerAddress: 32,
      }).connections,
    ).toEqual({ total: 900, perAddress: 0 });
    expect(() => refuseHttpOnlyLimits(listen({ max_connections: '10' }), 'MCP over stdio')).toThrow(
      /--max-connections/,
    );
    expect(() => parseListenFlags({ db: 'a.db', port: '0', host: 'h', max_connections: '0' })).toThrow(
      /--max-connections|max_connections/,
    );
    expect(() => parseModelConfig({ limits: { maxConnectionsPerAddress: -1 } })).toThrow(
      /maxConnectionsPerAddress/,
    );
  });

  it('passes the per-key body rate (flag or config) to the request budget', () => {
    expect(resolveServerLimits(listen({ key_bytes_per_second: '4096' })).budget).toEqual({
      perCallerBytesPerSecond: 4096,
    });
    expect(resolveServerLimits(listen(), { keyBytesPerSecond: 8192 }).budget).toEqual({
      perCallerBytesPerSecond: 8192,
    });
    expect(() => refuseHttpOnlyLimits(listen({ key_bytes_per_second: '4096' }), 'MCP over stdio')).toThrow(
      /--key-bytes-per-second/,
    );
  });

  it('refuses a key share below the largest body, naming the setting the operator wrote', () => {
    const flag = caught(() => resolveServerLimits(listen({ key_bytes_in_flight: String(8 * MiB) })));
    expect(flag.code).toBe('CONFIG');
    expect(flag.message).toMatch(/--key-bytes-in-flight \(8388608 bytes\) is below the default body limit/);
    expect(flag.location?.field).toBe('key_bytes_in_flight');
    const config = caught(() =>
      resolveServerLimits(listen(), { keyBytesInFlight: MiB, maxBodyBytes: 2 * MiB }),
    );
    expect(config.message).toMatch(/limits\.keyBytesInFlight .* below limits\.maxBodyBytes/);
    // A larger body alone pushes the default key share with it (4 bodies): accepted.
    expect(resolveServerLimits(listen({ max_body_bytes: String(64 * MiB) })).maxBodyBytes).toBe(64 * MiB);
  });

  it('refuses a whole budget below the largest body; a smaller budget alone caps the key share', () => {
    const small = caught(() => resolveServerLimits(listen({ bytes_in_flight: String(8 * MiB) })));
    expect(small.message).toMatch(
      /--bytes-in-flight \(8388608 bytes\) is below the default body limit \(16777216/,
    );
    expect(small.location?.field).toBe('bytes_in_flight');
    // A budget of two bodies with the default share (4 bodies): the share is the budget, accepted.
    expect(resolveServerLimits(listen({ bytes_in_flight: String(32 * MiB) })).budget).toEqual({
      totalBytes: 32 * MiB,
    });
    expect(
      resolveServerLimits(
        listen({ bytes_in_flight: String(32 * MiB), key_bytes_in_flight: String(16 * MiB) }),
      ).budget,
    ).toEqual({ totalBytes: 32 * MiB, perCallerBytes: 16 * MiB });
  });

  it('validates every flag at the edge (whole numbers in range), before anything opens', () => {
    for (const [flag, value] of [
      ['max_pending_writes', '0'],
      ['max_pending_writes', '1.5'],
      ['max_queued_questions', '-1'],
      ['key_requests_in_flight', 'many'],
      ['bytes_in_flight', '100'],
    ] as const) {
      const error = caught(() => listen({ [flag]: value }));
      expect(error.code, `${flag}=${value}`).toBe('INVALID_INPUT');
      expect(error.message).toContain(flag);
    }
    expect(listen({ max_queued_questions: '0' }).max_queued_questions).toBe(0);
    // The shells name the flag as the operator typed it.
    const named = caught(() =>
      parseListenFlags({ db: 'a.db', port: '0', host: 'h', max_pending_writes: 'x' }),
    );
    expect(named.code).toBe('INVALID_INPUT');
    expect(named.location?.field).toBe('--max-pending-writes');
    expect(named.message).toBe('field --max-pending-writes: Invalid input: expected number, received NaN');
    expect(caught(() => parseListenFlags({ db: 'a.db', port: '70000', host: 'h' })).location?.field).toBe(
      '--port',
    );
  });

  it('refuses the HTTP-only bounds for a shell without HTTP instead of ignoring them', () => {
    const error = caught(() =>
      refuseHttpOnlyLimits(listen({ key_requests_in_flight: '2' }), 'MCP over stdio'),
    );
    expect(error.code).toBe('CONFIG');
    expect(error.message).toContain('--key-requests-in-flight bounds HTTP requests; MCP over stdio has none');
    expect(() => refuseHttpOnlyLimits(listen({ key_questions_in_flight: '2' }), 'MCP over stdio')).toThrow(
      /--key-questions-in-flight/,
    );
    expect(() => refuseHttpOnlyLimits(listen({ max_pending_writes: '2' }), 'MCP over stdio')).not.toThrow();
  });

  it('the config file carries `limits`, strictly: an unknown or bad field is named', () => {
    expect(parseModelConfig({ limits: { maxPendingWrites: 12, keyRequestsInFlight: 2 } }).limits).toEqual({
      maxPendingWrites: 12,
      keyRequestsInFlight: 2,
    });
    expect(() => parseModelConfig({ limits: { maxPendingWrite: 12 } })).toThrow(/limits\.maxPendingWrite/);
    expect(() => parseModelConfig({ limits: { maxQueuedQuestions: -1 } })).toThrow(
      /limits\.maxQueuedQuestions/,
    );
    expect(loadModelConfig({ env: {}, cwd: '/nonexistent-dir' }).limits).toBeUndefined();
  });

  it('the shells pass the write and question bounds to the archive they open', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gmx-limits-'));
    const gm = await openShellGraphmemix({
      db: join(dir, 'a.db'),
      readWorkers: 1,
      limits: { maxPendingWrites: 1, maxQueuedQuestions: 1 },
    });
    try {
      const first = gm.addMemories('ann', [{ id: 'a', text: 'the first note' }]);
      await expect(gm.addMemories('ann', [{ id: 'b', text: 'the second note' }])).rejects.toMatchObject({
        code: 'BUSY',
      });
      await first;
      await gm.addMemories('ann', [{ id: 'b', text: 'the second note' }]);
      await gm.retrieve('ann', 'note');
      // One worker runs 8 questions at once; one more waits; the next is refused.
      const questions = Array.from({ length: 10 }, () =>
        gm.retrieve('ann', 'which note').then(
          () => 'ok',
          (e) => e,
        ),
      );
      const outcomes = await Promise.all(questions);
      expect(outcomes.filter((o) => o === 'ok')).toHaveLength(9);
      expect(outcomes.at(-1)).toMatchObject({ code: 'BUSY' });
    } finally {
      await gm.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a shell that has loaded its config passes it on: the archive opens without reading the file again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gmx-limits-'));
    const path = join(dir, 'graphmemix.config.json');
    writeFileSync(path, JSON.stringify({ questionDeadlineMs: 5000 }));
    const loaded = loadModelConfig({ path });
    // The file changes (or goes) after serve read it: the open uses what serve read, not a second version.
    rmSync(path);
    const gm = await openShellGraphmemix({
      db: join(dir, 'a.db'),
      readWorkers: 0,
      config: path,
      modelConfig: loaded,
    });
    try {
      await gm.addMemories('ann', [{ id: 'a', text: 'the first note' }]);
      expect((await gm.retrieve('ann', 'note')).evidence.map((e) => e.memoryId)).toEqual(['a']);
    } finally {
      await gm.close();
      rmSync(dir, { recursive: true, force: true });
    }
    await expect(
      openShellGraphmemix({ db: join(dir, 'b.db'), readWorkers: 0, config: path }),
    ).rejects.toThrow();
  });
});
