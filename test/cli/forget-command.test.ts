import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readDrainFailure, writeDrainFailure } from '../../src/digest/incremental/drain-failure-mark.ts';
import { appendBacklog } from '../../src/digest/incremental/semantic-compaction-mark.ts';
import { openStore } from '../../src/store/open-store.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'graphmemix.js');
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-forget-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('graphmemix forget', () => {
  it('forgets one memory, then a whole context with its media folder; exit 2 for what does not exist', async () => {
    const db = join(dir, 'a.db');
    const media = join(dir, 'a.db.media', 'alice');
    mkdirSync(media, { recursive: true });
    const photo = join(media, 'p.png');
    writeFileSync(photo, 'photo bytes');
    const file = join(dir, 'alice.jsonl');
    const records = [
      { id: 'm1', text: 'first note' },
      { id: 'm2', text: 'second note', assets: [{ kind: 'image', uri: photo }] },
      { id: 'm3', text: 'third note' },
    ];
    writeFileSync(file, `${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
    expect(cli('ingest', file, '--format', 'unified', '--db', db, '--context', 'alice').code).toBe(0);
    expect(cli('ingest', file, '--format', 'unified', '--db', db, '--context', 'bob').code).toBe(0);

    const one = cli('forget', '--db', db, '--context', 'alice', '--memory', 'm1', '--json');
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({
      user_id: 'alice',
      memory_id: 'm1',
      deleted: true,
      memories: 1,
    });

    // bob imported the same photo: forgetting alice keeps the file, forgetting bob too removes it.
    const all = cli('forget', '--db', db, '--context', 'alice', '--json');
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout)).toEqual({ user_id: 'alice', deleted: true, memories: 2, media_files: 0 });
    expect(existsSync(photo)).toBe(true);
    const bob = cli('forget', '--db', db, '--context', 'bob', '--memory', 'm2', '--json');
    expect(bob.code, bob.stderr).toBe(0);
    expect(existsSync(photo)).toBe(false);
    expect(existsSync(media)).toBe(false);

    const store = await openStore(db, { readonly: true });
    expect((await store.listContexts()).map((c) => [c.id, c.memories])).toEqual([['bob', 2]]);
    await store.close();

    expect(cli('forget', '--db', db, '--context', 'alice').code).toBe(2);
    expect(cli('forget', '--db', join(dir, 'none.db'), '--context', 'alice').code).toBe(2);
    expect(existsSync(join(dir, 'none.db'))).toBe(false);
  });
});

describe('graphmemix users', () => {
  it('pages users with a cursor, as JSON in the HTTP field names; exit 2 for a missing archive', async () => {
    const db = join(dir, 'users.db');
    const file = join(dir, 'one.jsonl');
    writeFileSync(file, `${JSON.stringify({ id: 'm1', text: 'a note' })}\n`);
    for (const user of ['cy', 'al', 'bo']) {
      expect(cli('ingest', file, '--format', 'unified', '--db', db, '--context', user).code).toBe(0);
    }
    const first = cli('users', '--db', db, '--limit', '2', '--json');
    expect(first.code, first.stderr).toBe(0);
    const page = JSON.parse(first.stdout);
    expect(page.users).toEqual([
      { user_id: 'al', memories: 1 },
      { user_id: 'bo', memories: 1 },
    ]);
    const second = cli('users', '--db', db, '--limit', '2', '--cursor', page.next_cursor);
    expect(second.stdout).toBe('cy\t1 memories\n');
    expect(cli('users', '--db', db, '--limit', 'x').code).not.toBe(0);
    expect(cli('users', '--db', join(dir, 'missing.db')).code).toBe(2);

    // One user's stats, as GET /v1/users/:id answers them.
    const stats = cli('users', '--db', db, '--user', 'al', '--json');
    expect(stats.code, stats.stderr).toBe(0);
    expect(JSON.parse(stats.stdout)).toMatchObject({
      user_id: 'al',
      memories: 1,
      knn_approximate: null,
      semantic_pending: null,
    });
    expect(cli('users', '--db', db, '--user', 'al').stdout).toMatch(/^al: 1 memories\n {2}by kind: /);
    const missing = cli('users', '--db', db, '--user', 'nobody');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('user nobody not found');
    // The id rule of every shell: checked before the archive is opened, the id not echoed back whole.
    for (const bad of ['a'.repeat(100_000), '../../etc/passwd']) {
      const refused = cli('users', '--db', db, '--user', bad);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('user_id');
      expect(refused.stderr.length).toBeLessThan(2_000);
    }
    // A failed after-write drain, as a server's write worker leaves it: shown, and nothing is drained by looking.
    const store = await openStore(db);
    await appendBacklog(store, 'bo', ['m1']);
    const at = '2026-01-01T00:00:00.000Z';
    await writeDrainFailure(store, 'bo', { error: 'disk full', since: at, at, attempts: 4 });
    await store.close();
    const failed = cli('users', '--db', db, '--user', 'bo');
    expect(failed.code, failed.stderr).toBe(0);
    expect(failed.stdout).toContain(
      `kNN updates of recent writes: failed 4 time(s) since ${at}: disk full; the next write or open tries again`,
    );
    const after = await openStore(db, { readonly: true });
    expect(await readDrainFailure(after, 'bo')).toMatchObject({ attempts: 4 });
    await after.close();
  });
});
