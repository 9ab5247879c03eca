import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'graphmemix.js');
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-copy-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('graphmemix copy', () => {
  it('copies an archive with its uploads into the target media folder, idempotently', async () => {
    const from = join(dir, 'from.db');
    const to = join(dir, 'to.db');
    const uploads = join(dir, 'from.db.media', 'alice');
    mkdirSync(uploads, { recursive: true });
    const photo = join(uploads, 'p.png');
    writeFileSync(photo, 'photo bytes');
    const outside = join(dir, 'outside.png');
    writeFileSync(outside, 'not the archive');
    const file = join(dir, 'alice.jsonl');
    const records = [
      { id: 'm1', text: 'the design review moved to Monday', timestamp: '2024-04-01' },
      { id: 'm2', text: 'photo of the whiteboard', assets: [{ kind: 'image', uri: photo }] },
      { id: 'm3', text: 'holiday photo', assets: [{ kind: 'image', uri: outside }] },
    ];
    writeFileSync(file, `${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
    expect(cli('ingest', file, '--format', 'unified', '--db', from, '--context', 'alice').code).toBe(0);

    const first = cli('copy', '--from', from, '--to', to, '--json');
    expect(first.code, first.stderr).toBe(0);
    const report = JSON.parse(first.stdout);
    expect(report.contexts).toMatchObject([{ contextId: 'alice', memories: 3, written: 3 }]);
    expect(report.mediaFiles).toBe(1);
    const copied = join(dir, 'to.db.media', 'alice', 'p.png');
    expect(readFileSync(copied, 'utf8')).toBe('photo bytes');

    const store = await openStore(to, { readonly: true });
    try {
      expect((await store.getMemory('alice', 'm2'))?.assets[0]?.uri).toBe(copied);
      // A file outside the source's media folder is referenced, not copied.
      expect((await store.getMemory('alice', 'm3'))?.assets[0]?.uri).toBe(outside);
      expect((await store.getViews('alice', ['m2'])).find((v) => v.uri)?.uri ?? copied).toBe(copied);
    } finally {
      await store.close();
    }
    const again = cli('copy', '--from', from, '--to', to, '--json');
    expect(again.code, again.stderr).toBe(0);
    const second = JSON.parse(again.stdout);
    expect(second.contexts[0]).toMatchObject({ written: 0, vectors: 0, edges: 0, semantic: false });
    expect(second.mediaFiles).toBe(0);
    // Forgetting in the target removes the target's copy, never the source's file.
    const forget = cli('forget', '--db', to, '--context', 'alice', '--json');
    expect(forget.code, forget.stderr).toBe(0);
    expect(existsSync(copied)).toBe(false);
    expect(existsSync(photo)).toBe(true);
  }, 120_000);

  it('refuses a copy onto itself, in-memory archives and a missing source (exit 2, nothing created)', () => {
    const from = join(dir, 'none.db');
    expect(cli('copy', '--from', from, '--to', join(dir, 'x.db')).code).toBe(2);
    expect(existsSync(join(dir, 'x.db'))).toBe(false);
    const self = cli('copy', '--from', join(dir, 'from.db'), '--to', join(dir, '.', 'from.db'), '--json');
    expect(self.code).toBe(2);
    expect(JSON.parse(self.stderr).error).toMatchObject({ code: 'INVALID_INPUT', location: { field: 'to' } });
    expect(cli('copy', '--from', join(dir, 'from.db'), '--to', 'memory:').code).toBe(2);
  });
});
