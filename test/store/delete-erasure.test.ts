import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-erasure-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The raw bytes of the database file and its WAL (what a disk image would show). */
function storeBytes(db: string): Buffer {
  return Buffer.concat([db, `${db}-wal`].filter(existsSync).map((file) => readFileSync(file)));
}

const SECRET = 'PANGOLIN-SAXOPHONE-5523';
const EDITED = 'HUMMINGBIRDTUBA';

describe('a deleted memory is gone from the files when deleteMemory returns', () => {
  for (const writeWorker of [false, true]) {
    it(`leaves no copy in the database file or WAL, before any other write (writeWorker: ${writeWorker})`, async () => {
      const db = join(dir, `archive-${writeWorker}.db`);
      const gm = await openGraphmemix({ db, writeWorker });
      try {
        const records = Array.from({ length: 60 }, (_, i) => ({
          id: `m${i}`,
          role: i % 2 === 0 ? 'user' : 'assistant',
          sessionId: 's1',
          text:
            i === 30
              ? `the locker code is ${SECRET}`
              : i === 31
                ? 'message 31 mentions quokkamandolin once'
                : `message ${i} about the garden and the weather`,
        }));
        await gm.addMemories('alice', records);
        expect(storeBytes(db).includes(SECRET)).toBe(true);
        // Two edits first: the words of the versions before stay in the history until the delete. The first
        // version's word was in the frozen snapshot (df 1).
        await gm.updateMemory('alice', 'm31', { text: `an edited line naming ${EDITED}` });
        await gm.updateMemory('alice', 'm31', { text: 'the last version of message 31' });
        expect(await gm.deleteMemory('alice', 'm30')).toBe(true);
        // The relation journal held the whole record until the delete's relation update: a WAL truncation
        // before that copied the entry into the file, where it stayed (fails without the erasure after it).
        expect(storeBytes(db).includes(SECRET)).toBe(false);
        expect(storeBytes(db).includes('pangolin')).toBe(false);
        expect(await gm.deleteMemory('alice', 'm31')).toBe(true);
        // A word only an earlier version held stayed in the frozen snapshot's document frequencies (fails
        // without dropping it with the version it left).
        for (const word of ['quokkamandolin', EDITED, 'hummingbirdtuba']) {
          expect(storeBytes(db).includes(word), word).toBe(false);
        }
        expect((await gm.getMemory('alice', 'm32'))?.text).toContain('message 32');
        expect(await gm.store.integrityCheck()).toEqual({ ok: true, problems: [] });
      } finally {
        await gm.close();
      }
    });
  }
});
