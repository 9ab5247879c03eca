import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemGalleryImporter } from '../../src/importers/mem-gallery-importer.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import { SecurityTally, type SecurityWorld, startSecurityWorld } from './security-harness.ts';

// Issue #12 item 1, importers: media resolve inside the import root only (real paths, symlinks out
// refused, regular files only); everything else is handled like a missing file.
const tally = new SecurityTally();
let world: SecurityWorld;
let root: string;

const HOSTILE: [string, string][] = [
  ['traversal', '../../../../../../etc/passwd'],
  ['traversal', 'photos/../../../../../../etc/passwd'],
  ['absolute path', '/etc/passwd'],
  ['/proc', '/proc/self/environ'],
  ['/dev', '/dev/zero'],
  ['file: URI', 'file:///etc/passwd'],
  ['file: URI', 'file:///proc/self/environ'],
  ['encoded traversal', '%2e%2e/%2e%2e/%2e%2e/etc/passwd'],
  ['encoded traversal', 'file:///etc%2fpasswd'],
  ['unicode dots', '\u2024\u2024/\u2024\u2024/etc/passwd'],
  ['NUL byte', 'ok.png\u0000../../etc/passwd'],
  ['NUL byte', 'file:///etc/passwd%00.png'],
  ['symlink', 'link-out.png'],
  ['symlink', 'dir-out/passwd'],
  ['special file', 'fifo.png'],
  ['special file', 'photos'],
];

function insideRoot(uri: string): boolean {
  const rel = relative(realpathSync(root), realpathSync(uri));
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..';
}

beforeAll(async () => {
  world = await startSecurityWorld();
  root = mkdtempSync(join(tmpdir(), 'gmx-sec-import-'));
  mkdirSync(join(root, 'photos'));
  writeFileSync(join(root, 'ok.png'), Buffer.from('89504e470d0a1a0a', 'hex'));
  symlinkSync('/etc/passwd', join(root, 'link-out.png'));
  symlinkSync('/etc', join(root, 'dir-out'));
  try {
    execFileSync('mkfifo', [join(root, 'fifo.png')]);
  } catch {
    writeFileSync(join(root, 'fifo.png'), '');
  }
  const lines = [
    { id: 'control', text: 'a good photo', assets: [{ id: 'p', kind: 'image', uri: 'ok.png' }] },
    ...HOSTILE.map(([, uri], i) => ({
      id: `h${i}`,
      text: `imported note ${i}`,
      assets: [{ id: 'p', kind: 'image', uri }],
    })),
  ];
  writeFileSync(join(root, 'memories.jsonl'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
});
afterAll(async () => {
  await world.close();
  tally.print('importer confinement');
});

describe('importers resolve media inside the import root only', () => {
  it('library ingest (unified): hostile references are dropped with a warning, nothing outside is kept', async () => {
    const report = await world.graphmemix.ingest(root, { format: 'unified', contextId: 'imp' });
    expect(report.warnings.length).toBeGreaterThan(0);
    const control = await world.graphmemix.getMemory('imp', 'control');
    expect(control?.assets[0]?.uri).toBe(join(root, 'ok.png'));
    for (const [i, [category, uri]] of HOSTILE.entries()) {
      const handled = tally.tried(`library ingest: ${category}`);
      const record = (await world.graphmemix.getMemory('imp', `h${i}`)) as MemoryRecord;
      expect(record, uri).toBeDefined();
      for (const asset of record.assets) {
        if (asset.uri !== undefined) expect(insideRoot(asset.uri), asset.uri).toBe(true);
      }
      handled();
    }
  });

  it('HTTP import (unified upload): the same, and the scratch copy is gone afterwards', async () => {
    const form = new FormData();
    form.set('user_id', 'alice');
    form.set('format', 'unified');
    const lines = HOSTILE.map(([, uri], i) => ({
      id: `web${i}`,
      text: `web note ${i}`,
      assets: [{ id: 'p', kind: 'image', uri }],
    }));
    form.set('file', new File([lines.map((l) => JSON.stringify(l)).join('\n')], 'm.jsonl'));
    const response = await world.app.request('/v1/memories/import', {
      method: 'POST',
      headers: { authorization: 'Bearer ka' },
      body: form,
    });
    expect(response.status).toBe(200);
    for (const [i, [category]] of HOSTILE.entries()) {
      const handled = tally.tried(`HTTP import: ${category}`);
      const record = await world.graphmemix.getMemory('alice', `web${i}`);
      expect(record?.assets.every((asset) => asset.uri === undefined)).toBe(true);
      handled();
    }
  });

  it('Mem-Gallery importer: dataset image paths that leave the root are missing, not read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gmx-sec-mg-'));
    mkdirSync(join(dir, 'dialog'));
    const paths = ['../../../../etc/passwd', '/proc/self/environ', 'file:///etc/passwd', '/dev/zero'];
    const dialog = {
      character_profile: { name: 'M' },
      multi_session_dialogues: [
        {
          session_id: 'D1',
          date: '2024-01-01',
          dialogues: paths.map((path, i) => ({
            round: `D1:${i + 1}`,
            user: 'look',
            assistant: 'ok',
            image_id: [`I${i}`],
            input_image: [path],
            image_caption: [`caption ${i}`],
          })),
        },
      ],
    };
    writeFileSync(join(dir, 'dialog', 'X.json'), JSON.stringify(dialog));
    const items = [];
    for await (const item of createMemGalleryImporter().read(dir, {})) items.push(item);
    const assets = items.flatMap((item) => (item.type === 'record' ? item.record.assets : []));
    for (const [i] of paths.entries()) {
      const handled = tally.tried('Mem-Gallery import: outside root');
      // The captioned asset is kept (its caption is evidence) without any uri.
      const asset = assets.find((a) => a.id === `I${i}`);
      expect(asset?.derived?.captions).toEqual([`caption ${i}`]);
      expect(asset?.uri).toBeUndefined();
      handled();
    }
  });
});
