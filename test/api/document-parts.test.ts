import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash } from '../../src/digest/content-hash.ts';
import { ingestItems } from '../../src/digest/ingest.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { sha256File } from '../../src/importers/media-files.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import { writeTestPdf } from '../fixtures/media-fixtures.ts';
import { MEDIA_TOOLS, reportMissingMediaTools } from '../support/system-tools.ts';

reportMissingMediaTools('test/api/document-parts.test.ts');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gmx-document-parts-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const docId = async (file: string) => `document:${(await sha256File(file)).slice(0, 24)}`;

describe('documents are records of page / section memories', () => {
  it.skipIf(!MEDIA_TOOLS.poppler)(
    'a page without a text layer is evidence on its own: the reader gets its OCR and its image',
    async () => {
      const root = join(dir, 'scan');
      const pdf = await writeTestPdf(join(root, 'bills.pdf'), {
        title: 'Household bills',
        pages: [['Water bill for March, paid by transfer'], { imageText: 'INVOICE 4471' }],
      });
      const gm = await openGraphmemix({ db: ':memory:', mediaDir: join(dir, 'scan-media') });
      try {
        const report = await gm.ingest(root, { format: 'documents', contextId: 'alice' });
        expect(report.rejected).toEqual([]);
        expect(report.imported).toBe(3);
        const id = await docId(pdf);
        const result = await gm.retrieve('alice', 'What was the invoice number 4471 about?');
        const page = result.evidence.find((item) => item.memoryId === `${id}:p0002`);
        expect(page).toBeDefined();
        expect(page!.media).toHaveLength(1);
        expect(page!.media[0]).toMatchObject({ kind: 'image' });
        expect(page!.media[0]!.uri).toMatch(/page-2\.png$/);
        expect(result.packetText).toMatch(/INVOICE 4471/);
        expect(result.packetText).toContain('bills.pdf p.2');
      } finally {
        await gm.close();
      }
    },
  );

  it('same_record joins the document and its parts in reading order; Markdown sections and text blocks', async () => {
    const root = join(dir, 'notes');
    await mkdir(root, { recursive: true });
    await writeFile(
      join(root, 'trip.md'),
      [
        'Intro before any heading.',
        '# Lisbon trip',
        'Flights booked.',
        '```',
        '# not a heading inside a fence',
        '```',
        '## Hotel',
        'Alfama guesthouse, room 12.',
        '### Dinner',
        'Tasca do Chico on Friday.',
      ].join('\n'),
    );
    await writeFile(
      join(root, 'plain.txt'),
      `${'First paragraph. '.repeat(60)}\n\n${'Second one. '.repeat(60)}\n`,
    );
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      const report = await gm.ingest(root, { format: 'documents', contextId: 'alice' });
      expect(report.rejected).toEqual([]);
      const md = await docId(join(root, 'trip.md'));
      const document = await gm.getMemory('alice', md);
      expect(document?.text).toBe('Lisbon trip');
      expect(document?.metadata?.document).toMatchObject({ title: 'Lisbon trip', parts: 4 });
      const parts = await Promise.all([1, 2, 3, 4].map((n) => gm.getMemory('alice', `${md}:p000${n}`)));
      expect(
        parts.map((part) => (part?.metadata?.document as { section?: string } | undefined)?.section),
      ).toEqual([undefined, 'Lisbon trip', 'Hotel', 'Dinner']);
      expect(parts[1]?.text).toContain('# not a heading inside a fence');
      expect(parts[2]?.text).toBe('## Hotel\nAlfama guesthouse, room 12.');
      expect(parts[2]?.sourceId).toBe('trip.md §3');
      expect(await gm.getMemory('alice', `${md}:p0005`)).toBeUndefined();

      const ids = [md, ...parts.map((part) => part!.id)];
      const edges = await gm.store.neighbors('alice', ids);
      const sameRecord = edges
        .filter((edge) => edge.types.includes('same_record'))
        .map((edge) => [edge.a, edge.b].sort().join(' '))
        .sort();
      const chain = ids.slice(1).map((id, i) => [ids[i]!, id].sort().join(' '));
      expect(sameRecord).toEqual(chain.sort());

      // Plain text: paragraphs gathered into blocks of bounded size (two ~1 kB paragraphs: two parts).
      const txt = await docId(join(root, 'plain.txt'));
      expect((await gm.getMemory('alice', txt))?.metadata?.document).toMatchObject({ parts: 2 });

      // Re-import: the same ids, nothing changes.
      const again = await gm.ingest(root, { format: 'documents', contextId: 'alice' });
      expect([again.imported, again.updated, again.unchanged]).toEqual([0, 0, report.imported]);
    } finally {
      await gm.close();
    }
  });

  it.skipIf(!MEDIA_TOOLS.poppler)(
    'a PDF added to a server archive (background digest) gets its pages written back as memories',
    async () => {
      const uploads = join(dir, 'bg-uploads');
      const pdf = await writeTestPdf(join(uploads, 'alice', 'menu.pdf'), {
        title: 'Dinner menu',
        pages: [['Starter: caldo verde'], ['Dessert: pastel de nata']],
      });
      const gm = await openGraphmemix({
        db: join(dir, 'bg.db'),
        mediaDir: uploads,
        mediaDigest: 'background',
      });
      try {
        const report = await gm.addMemories('alice', [
          { id: 'menu', assets: [{ id: 'file', kind: 'document', uri: pdf, mime: 'application/pdf' }] },
        ]);
        expect(report.media?.pending).toBe(1);
        await gm.waitForMedia();
        expect((await gm.getMemory('alice', 'menu'))?.metadata?.document).toMatchObject({ parts: 2 });
        expect((await gm.getMemory('alice', 'menu:p0002'))?.text).toMatch(/pastel de nata/);
        const edges = await gm.store.neighbors('alice', ['menu:p0001']);
        expect(
          edges.filter((edge) => edge.types.includes('same_record')).map((edge) => [edge.a, edge.b]),
        ).toEqual([
          ['menu', 'menu:p0001'],
          ['menu:p0001', 'menu:p0002'],
        ]);
        expect((await gm.search('alice', 'pastel de nata'))[0]?.memoryId).toBe('menu:p0002');
      } finally {
        await gm.close();
      }
    },
  );

  it.skipIf(!MEDIA_TOOLS.poppler)(
    'a document imported as one memory before parts existed is replaced cleanly by a re-import',
    async () => {
      const root = join(dir, 'old');
      const pdf = await writeTestPdf(join(root, 'lease.pdf'), {
        title: 'Lease agreement',
        pages: [['Lease for the flat at Rua Augusta 12'], ['Monthly rent: 950 EUR, due on the 5th']],
      });
      await writeFile(join(root, 'todo.md'), '# Todo\n\nBuy stamps\n\n## Later\n\nCall the bank\n');
      const pdfId = await docId(pdf);
      const mdId = await docId(join(root, 'todo.md'));
      const sha = await sha256File(pdf);
      // What the previous importer and digest stored: one memory per file holding all of its text.
      const oldInput: MemoryRecord = {
        id: pdfId,
        contextId: 'alice',
        kind: 'document',
        sequence: 0,
        sourceId: 'lease.pdf',
        text: '',
        assets: [{ id: 'document', kind: 'document', uri: pdf, mime: 'application/pdf', sha256: sha }],
      };
      const oldPdf: MemoryRecord = {
        ...oldInput,
        text: 'Lease agreement\n\nLease for the flat at Rua Augusta 12\fMonthly rent: 950 EUR, due on the 5th',
        metadata: { document: { pages: 2, title: 'Lease agreement' } },
        media: { status: 'done', sourceHash: contentHash(oldInput) },
      };
      const oldMd: MemoryRecord = {
        id: mdId,
        contextId: 'alice',
        kind: 'document',
        sequence: 1,
        sourceId: 'todo.md',
        text: '# Todo\n\nBuy stamps\n\n## Later\n\nCall the bank\n',
        assets: [],
        metadata: { document: { title: 'Todo', mime: 'text/markdown' } },
      };
      const gm = await openGraphmemix({ db: join(dir, 'old.db') });
      try {
        await ingestItems(
          gm.store,
          [oldPdf, oldMd].map((record) => ({ type: 'record' as const, record, source: { file: 'old' } })),
        );
        expect(await gm.store.countMemories('alice')).toBe(2);
        const report = await gm.ingest(root, { format: 'documents', contextId: 'alice' });
        expect(report.rejected).toEqual([]);
        // Both old memories updated in place (same ids), the pages and sections are new.
        expect([report.updated, report.imported]).toEqual([2, 4]);
        expect(await gm.store.countMemories('alice')).toBe(6);
        const document = await gm.getMemory('alice', pdfId);
        expect(document?.text).toBe('Lease agreement');
        expect(document?.metadata?.document).toMatchObject({ parts: 2, pages: 2 });
        const rent = await gm.retrieve('alice', 'What is the monthly rent in EUR?');
        expect(rent.evidence[0]?.memoryId).toBe(`${pdfId}:p0002`);
        // And a second re-import is unchanged.
        const again = await gm.ingest(root, { format: 'documents', contextId: 'alice' });
        expect([again.imported, again.updated]).toEqual([0, 0]);
      } finally {
        await gm.close();
      }
    },
  );
});
