import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'graphmemix.js');
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-bundle-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const QUESTION = 'when is the design review with Priya?';

function retrieveJson(db: string) {
  const run = cli('retrieve', QUESTION, '--db', db, '--context', 'alice', '--json');
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as {
    evidence: { memory_id: string }[];
    pool: { memory_id: string; prize: number; retrieval_score: number }[];
  };
}

describe('graphmemix export / import (backup bundles)', () => {
  const source = join(dir, 'source.db');
  const bundle = join(dir, 'bundle');
  const restored = join(dir, 'restored.db');
  const photo = join(dir, 'my-photos', 'whiteboard.png');
  const changed = join(dir, 'my-photos', 'agenda.png');

  it('round-trips a context with its imported media: identical retrieve, idempotent restore', async () => {
    mkdirSync(join(dir, 'my-photos'));
    writeFileSync(photo, 'whiteboard photo bytes');
    writeFileSync(changed, 'agenda scan bytes');
    const records = [
      { id: 'm1', text: 'the design review with Priya moved to Monday 10:00', timestamp: '2024-04-01' },
      {
        id: 'm2',
        text: 'photo of the whiteboard after the design review',
        assets: [{ kind: 'image', uri: photo }],
      },
      { id: 'm3', text: 'lunch with Sam on Friday', timestamp: '2024-04-02' },
      { id: 'm4', text: 'Priya asked to move the review again, now Tuesday', timestamp: '2024-04-03' },
      { id: 'm5', text: 'scan of the old agenda', assets: [{ kind: 'image', uri: changed }] },
    ];
    const file = join(dir, 'alice.jsonl');
    writeFileSync(file, `${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const ingest = cli('ingest', file, '--format', 'unified', '--db', source, '--context', 'alice');
    expect(ingest.code, ingest.stderr).toBe(0);
    expect(cli('ingest', file, '--format', 'unified', '--db', source, '--context', 'bob').code).toBe(0);

    // A file whose bytes no longer match the sha256 recorded at import is not what was imported: the bundle
    // references it and does not copy it (a stored uri never makes export read an arbitrary file).
    writeFileSync(changed, 'something else now');
    const exported = cli('export', '--db', source, '--context', 'alice', '--out', bundle, '--json');
    expect(exported.code, exported.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(bundle, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ format: 'graphmemix-archive-bundle', version: 1 });
    expect(manifest.contexts).toEqual([{ id: 'alice', memories: 5 }]);
    expect(JSON.parse(exported.stdout).media_files).toBe(1);

    // The bundle owns a copy of the photo, so it survives the original's loss.
    rmSync(photo);
    const restore = cli('import', '--bundle', bundle, '--db', restored, '--json');
    expect(restore.code, restore.stderr).toBe(0);
    expect(JSON.parse(restore.stdout).contexts).toEqual([{ id: 'alice', memories: 5, written: 5 }]);

    const store = await openStore(restored, { readonly: true });
    try {
      expect((await store.listContexts()).map((c) => c.id)).toEqual(['alice']);
      const uri = (await store.getMemory('alice', 'm2'))?.assets[0]?.uri;
      expect(uri).toBeDefined();
      expect(uri).not.toBe(photo);
      expect(readFileSync(uri!, 'utf8')).toBe('whiteboard photo bytes');
      expect((await store.getMemory('alice', 'm5'))?.assets[0]?.uri).toBe(changed);
    } finally {
      await store.close();
    }

    const before = retrieveJson(source);
    const after = retrieveJson(restored);
    expect(after.evidence.map((e) => e.memory_id)).toEqual(before.evidence.map((e) => e.memory_id));
    expect(after.pool.map((c) => [c.memory_id, c.prize])).toEqual(
      before.pool.map((c) => [c.memory_id, c.prize]),
    );

    const again = cli('import', '--bundle', bundle, '--db', restored, '--json');
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).contexts).toEqual([{ id: 'alice', memories: 5, written: 0 }]);
  });

  it('refuses a non-empty --out, an unknown context, a foreign manifest and a newer bundle version', () => {
    expect(existsSync(bundle)).toBe(true);
    const busy = cli('export', '--db', source, '--out', bundle);
    expect(busy.code).toBe(2);
    expect(busy.stderr).toMatch(/new or empty folder/);
    const noSuchContext = cli('export', '--db', source, '--context', 'carol', '--out', join(dir, 'carol'));
    expect(noSuchContext.code).toBe(2);
    expect(existsSync(join(dir, 'carol'))).toBe(false); // a failed export leaves no half-written bundle
    const unknown = cli('import', '--bundle', bundle, '--db', join(dir, 'x.db'), '--context', 'carol');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no context carol/);

    const forged = join(dir, 'forged');
    mkdirSync(forged);
    writeFileSync(join(forged, 'manifest.json'), JSON.stringify({ format: 'something-else', version: 1 }));
    writeFileSync(join(forged, 'archive.db'), 'not sqlite');
    const foreign = cli('import', '--bundle', forged, '--db', join(dir, 'y.db'));
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toMatch(/not a graphmemix-archive-bundle manifest/);

    writeFileSync(
      join(forged, 'manifest.json'),
      JSON.stringify({ format: 'graphmemix-archive-bundle', version: 99, contexts: [] }),
    );
    const newer = cli('import', '--bundle', forged, '--db', join(dir, 'z.db'));
    expect(newer.code).toBe(2);
    expect(newer.stderr).toMatch(/newer than this graphmemix reads/);
    expect(existsSync(join(dir, 'z.db'))).toBe(false);
  });
});
