import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-forget-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every file under a folder (recursively). */
function filesUnder(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((name) => join(root, name))
    .filter((path) => statSync(path).isFile());
}

/** The raw bytes of the database file and its WAL (what a disk image would show). */
function storeBytes(db: string): Buffer {
  return Buffer.concat([db, `${db}-wal`].filter(existsSync).map((file) => readFileSync(file)));
}

describe('forget means forget (SQLite file, WAL and media folder)', () => {
  it('leaves no byte of a deleted memory or user in the database, its WAL or the media folder', async () => {
    const db = join(dir, 'archive.db');
    const mediaDir = join(dir, 'archive.db.media');
    const secretText = 'QUETZAL-MARMALADE-4471 was the locker code';
    const userText = 'WOMBAT-TANGERINE-9902 is bob private diary line';
    const keptText = 'the garden needs water on Tuesday';
    const secretBytes = Buffer.from('PNG-BYTES-OF-A-SECRET-PHOTO-8812');
    const userBytes = Buffer.from('PNG-BYTES-OF-BOBS-PHOTO-3345');
    // Media the way the HTTP server saves uploads: <mediaDir>/<user>/<hash>.<ext>.
    mkdirSync(join(mediaDir, 'alice'), { recursive: true });
    mkdirSync(join(mediaDir, 'bob'), { recursive: true });
    const alicePhoto = join(mediaDir, 'alice', 'secret.png');
    const sharedPhoto = join(mediaDir, 'alice', 'shared.png');
    const bobPhoto = join(mediaDir, 'bob', 'bob.png');
    writeFileSync(alicePhoto, secretBytes);
    writeFileSync(sharedPhoto, Buffer.from('shared bytes'));
    writeFileSync(bobPhoto, userBytes);
    // A photo outside the media folder is the user's own file: referenced, never deleted.
    const ownPhoto = join(dir, 'own.png');
    writeFileSync(ownPhoto, Buffer.from('own bytes'));

    const gm = await openGraphmemix({ db, mediaDir });
    const image = (id: string, uri: string) => ({ id, kind: 'image' as const, uri });
    await gm.addMemories('alice', [
      {
        id: 'secret',
        text: secretText,
        assets: [image('p', alicePhoto), image('s', sharedPhoto), image('o', ownPhoto)],
      },
      { id: 'kept', text: keptText, assets: [image('s', sharedPhoto)] },
    ]);
    await gm.addMemories('bob', [
      { id: 'b1', text: userText, assets: [image('p', bobPhoto)] },
      { id: 'b2', text: `${userText} again`, derived: { captions: [userText] } },
    ]);
    await gm.store.putQuestions([
      { id: 'q', contextId: 'bob', prompt: userText, answer: { text: 'x' }, evidence: ['b1'] } as never,
    ]);
    expect(storeBytes(db).includes(secretText)).toBe(true);
    // Lowercased tokens of it sit in the semantic index until forgotten (what the token checks below guard).
    expect(storeBytes(db).includes('quetzal')).toBe(true);

    expect(await gm.deleteMemory('alice', 'secret')).toBe(true);
    const forgotten = await gm.deleteUser('bob');
    expect(forgotten).toEqual({ contextId: 'bob', deleted: true, memories: 2, mediaFiles: 1 });
    expect((await gm.deleteUser('bob')).deleted).toBe(false);

    // While the archive is still open, and after closing it.
    for (const phase of ['open', 'closed']) {
      const bytes = storeBytes(db);
      // The indexes hold tokens, lowercased: no word unique to a forgotten memory may stay either (lexical
      // dictionary, semantic document frequencies).
      for (const needle of [
        secretText,
        userText,
        'QUETZAL-MARMALADE',
        'WOMBAT-TANGERINE',
        'quetzal',
        'wombat',
      ]) {
        expect(bytes.includes(needle), `${needle} in the store files (${phase})`).toBe(false);
      }
      expect(bytes.includes(keptText), phase).toBe(true);
      const media = filesUnder(mediaDir);
      expect(media, phase).toEqual([sharedPhoto]);
      for (const file of media) {
        const content = readFileSync(file);
        expect(content.includes(secretBytes) || content.includes(userBytes)).toBe(false);
      }
      if (phase === 'open') await gm.close();
    }
    expect(existsSync(join(mediaDir, 'bob'))).toBe(false);
    expect(existsSync(ownPhoto)).toBe(true);

    const again = await openGraphmemix({ db, mediaDir });
    expect(await again.store.listContexts()).toEqual([{ id: 'alice', memories: 1, maxSequence: 1 }]);
    expect(await again.store.listQuestions('bob')).toEqual([]);
    expect((await again.search('alice', 'garden')).map((hit) => hit.memoryId)).toEqual(['kept']);
    expect(await again.store.integrityCheck()).toEqual({ ok: true, problems: [] });
    await again.close();
  });
});
