import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { splitSections } from '../../../src/importers/document-sections.ts';
import type { ArchiveStore } from '../../../src/store/archive-store-spec.ts';
import { openStore } from '../../../src/store/open-store.ts';
import { documentPartId, MAX_DOCUMENT_PARTS } from '../../../src/types/document-parts.ts';
import type { MemoryRecord } from '../../../src/types/memory-record.ts';
import { CTX, expectMatchesRebuild, remove, storedPairs, upsert } from './schema-harness.ts';

const documentMemory = (id: string, parts: number): MemoryRecord => ({
  id,
  contextId: CTX,
  kind: 'document',
  sequence: 0,
  text: `title of ${id}`,
  assets: [],
  metadata: { document: { title: id, parts } },
});
const part = (of: string, n: number): MemoryRecord => ({
  id: documentPartId(of, n),
  contextId: CTX,
  kind: 'document',
  sequence: 0,
  text: `page ${n} of ${of}`,
  assets: [],
  metadata: { document: { of, part: n } },
});

for (const backend of ['memory:', ':memory:']) {
  describe(`same_record between document parts (${backend})`, () => {
    let store: ArchiveStore;
    beforeEach(async () => {
      store = await openStore(backend);
    });
    afterEach(async () => {
      await store.close();
    });

    it('a chain in reading order, built incrementally in any order, equal to the full rebuild', async () => {
      // Parts first and out of order, the document memory last: each write finds its neighbours by key.
      await upsert(store, [part('d', 3)]);
      await upsert(store, [part('d', 1)]);
      await upsert(store, [part('e', 1), documentMemory('e', 1)]);
      await upsert(store, [part('d', 2), documentMemory('d', 3)]);
      const p = (of: string, n: number) => documentPartId(of, n);
      const chain = [
        `d|${p('d', 1)}`,
        `${p('d', 1)}|${p('d', 2)}`,
        `${p('d', 2)}|${p('d', 3)}`,
        `e|${p('e', 1)}`,
      ].sort();
      expect((await storedPairs(store)).same_record).toEqual(chain);
      await expectMatchesRebuild(store, 'after the inserts');
      // A part removed: its two links go, the parts around it are not joined (the order has a gap).
      await remove(store, [p('d', 2)]);
      expect((await storedPairs(store)).same_record).toEqual([`d|${p('d', 1)}`, `e|${p('e', 1)}`].sort());
      await expectMatchesRebuild(store, 'after the removal');
      // A memory that only claims a place in another document's metadata joins nothing it does not match.
      await upsert(store, [{ ...part('d', 2), metadata: { document: { of: 'x', part: 2 } } }]);
      await expectMatchesRebuild(store, 'after a foreign part');
    });
  });
}

describe('splitSections', () => {
  it('bounds the parts of a document: sections cut at MAX_SECTION_CHARS, the tail joins the last part', () => {
    const long = splitSections(`# Big\n\n${'word '.repeat(3000)}`, 'markdown');
    expect(long.length).toBe(4);
    expect(long.every((section) => section.text.length <= 4000)).toBe(true);
    expect(long[0]?.heading).toBe('Big');
    const many = Array.from({ length: MAX_DOCUMENT_PARTS + 50 }, (_, i) => `# H${i}\ntext ${i}`).join('\n');
    const sections = splitSections(many, 'markdown');
    expect(sections).toHaveLength(MAX_DOCUMENT_PARTS);
    expect(sections.at(-1)?.text).toContain(`text ${MAX_DOCUMENT_PARTS + 49}`);
    expect(splitSections('\n\n  \n', 'plain')).toEqual([]);
  });
});
