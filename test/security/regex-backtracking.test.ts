import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fitBytes } from '../../src/digest/media/digest-record-media.ts';
import { parsePdfInfo } from '../../src/digest/media/read-pdf.ts';
import { normalizeMessageId, normalizeSubject } from '../../src/digest/relations/email-facts.ts';
import { splitSections } from '../../src/importers/document-sections.ts';
import { parseEvidenceRefs } from '../../src/importers/evidence-refs.ts';
import { splitChoices } from '../../src/importers/m3exam-importer.ts';
import { parseMailDate, parseMessageIdList } from '../../src/importers/mail/mail-fields.ts';
import { splitMbox } from '../../src/importers/mail/split-mbox.ts';
import { redactText, WITHHELD } from '../../src/shell-kit/redact.ts';

// Text a client controls, shaped against each pattern that used to backtrack (round 55's ReDoS audit). With
// the old patterns these inputs took from 20 s to many minutes each (past the test timeout); the assertions
// check that the linear replacements give the answers the patterns gave.
const N = 300_000;
const blanks = ' '.repeat(N);

describe('client text against the patterns that backtracked', () => {
  it('markdown headings: a long line with a line terminator is not a heading; real headings still are', () => {
    // A 0.9 KB line (recheck's attack, '\n' as U+2028: whitespace to `\s`, not matched by `.`); the old
    // pattern took 2.3 s at 0.3 KB and 34 s at 0.6 KB (degree 4).
    const tabs = '\t'.repeat(300);
    const hostile = `#\t${tabs}\x00${tabs}\u2028${tabs}\t\x00`;
    const plain = splitSections(`intro\n${hostile}\nbody`, 'markdown');
    expect(plain.length).toBeGreaterThan(0);
    expect(plain.filter((s) => s.heading !== undefined)).toEqual([]);
    const sections = splitSections('# C# #\nx\n##  Plans for May ###  \ny\n####### seven\nz', 'markdown');
    expect(sections.map((s) => s.heading)).toEqual(['C#', 'Plans for May']);
    expect(splitSections('#\u2028Title \u2028 ##\nx', 'markdown')[0]?.heading).toBe('Title');
  });

  it('email subjects and message ids: trailing punctuation and brackets trimmed in one walk', () => {
    expect(normalizeSubject(`${'.'.repeat(N)}x`)).toBe(`${'.'.repeat(N)}x`);
    expect(normalizeSubject(`Re: Fwd: Trip to Lisbon?! ${'.'.repeat(N)}`)).toBe('trip to lisbon');
    expect(normalizeMessageId(`${'>'.repeat(N)}x`)).toBe(`${'>'.repeat(N)}x`);
    expect(normalizeMessageId(` <<A.1@Example.COM>> `)).toBe('a.1@example.com');
  });

  it('mail: Date comments, References lists and mbox envelope lines', () => {
    expect(parseMailDate(`${'('.repeat(N)}Tue, 9 Apr 2024 17:42:00 +0100`)).toBeUndefined();
    expect(parseMailDate('Tue, 9 Apr 2024 17:42:00 +0100 (BST) (x)')).toBe('2024-04-09T17:42:00+01:00');
    const many = Array.from({ length: 200_000 }, (_, i) => `<id${i % 100_000}@x>`).join(' ');
    const ids = parseMessageIdList(many);
    expect([ids.length, ids[0], ids.at(-1)]).toEqual([100_000, 'id0@x', 'id99999@x']);
  });

  it('mbox: a "From " line of repeated weekday-month pairs is read by its head only', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gmx-mbox-redos-'));
    try {
      const file = join(dir, 'a.mbox');
      const hostile = `From x${' Mon Jan '.repeat(40_000)}`;
      await writeFile(
        file,
        `From a@b.example Mon Jan  1 10:00:00 2024\nSubject: one\n\nbody\n\n${hostile}\n\n` +
          'From c@d.example Tue Feb  2 10:00:00 2024\nSubject: two\n\nbody two\n',
      );
      const parts = [];
      for await (const part of splitMbox(file)) parts.push(part);
      // The hostile line has no year in its head: it is body text of the first message, not a separator.
      expect(parts).toHaveLength(2);
      expect(parts[0]!.raw.toString('latin1')).toContain(' Mon Jan  Mon Jan ');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('evidence references: blank runs around colons, dashes and brackets', () => {
    expect(parseEvidenceRefs(`D1${blanks}x`)).toEqual({ ids: [], invalid: ['D1', 'x'] });
    expect(parseEvidenceRefs(`${')'.repeat(N)}x`).invalid).toHaveLength(1);
    expect(parseEvidenceRefs('D1 : 3; (D2:4), "D3 : 5 to D3:7".')).toEqual({
      ids: ['D1:3', 'D2:4', 'D3:5', 'D3:6', 'D3:7'],
      invalid: [],
    });
  });

  it('pdfinfo lines, m3exam choices, cut document text and redaction', () => {
    expect(parsePdfInfo(`Title:${blanks}a\rb\nPages:          3\nCreator: x: y`)).toEqual({
      pages: '3',
      creator: 'x: y',
    });
    const choices = splitChoices(`Which one?\nA)${blanks}x\u2028y\nB) blue\nC) green`);
    expect(choices?.choices).toEqual([
      { id: 'B', text: 'blue' },
      { id: 'C', text: 'green' },
    ]);
    expect(splitChoices('Q\nA)  \nB. red')?.choices).toEqual([
      { id: 'A', text: '' },
      { id: 'B', text: 'red' },
    ]);
    const warnings: string[] = [];
    expect(fitBytes(`${'\uFFFD'.repeat(N)}x${'é'.repeat(10)}`, 3 * N + 2, warnings)).toBe(
      `${'\uFFFD'.repeat(N)}x`,
    );
    expect(redactText(`GET /${'a'.repeat(N)}`)).toBe(`GET /${'a'.repeat(N)}`);
    const prefixes = 'answered HTTP 500 ('.repeat(N / 20);
    expect(redactText(prefixes)).toBe(prefixes);
    // Small cases against the pattern the walk replaced (same answers).
    const old = /(answered HTTP \d{3}(?: \([^)]*\))?):[\s\S]*$/;
    for (const text of [
      'answered HTTP 5xx: a; answered HTTP 429 (m (x) at u) no; answered HTTP 500: body',
      'answered HTTP 429 (m (x): tail',
      'answered HTTP 429 (m at u) no; answered HTTP 502 (m at u): body',
      'answered HTTP 429 (no close; answered HTTP 401: body',
      'answered HTTP 4290: x',
    ]) {
      expect(redactText(text), text).toBe(text.replace(old, `$1: ${WITHHELD}`));
    }
    expect(redactText('see 1http://user:pw@host/x and ftp://tok@h')).toBe(
      'see 1http://[redacted]@host/x and ftp://[redacted]@h',
    );
  });
});
