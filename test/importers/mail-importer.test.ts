import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatEml, type GeneratedMailSpec } from '../../src/demo/example-mail-writer.ts';
import {
  normalizeMessageId,
  parseMailDate,
  parseMessageIdList,
} from '../../src/importers/mail/mail-fields.ts';
import { splitMbox } from '../../src/importers/mail/split-mbox.ts';
import { createMailImporter } from '../../src/importers/mail-importer.ts';
import { collect, recordsOf, rejectsOf, warningsOf } from '../fixtures/import-items.ts';
import { writeEml, writeMbox } from '../fixtures/mail-fixtures.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gmx-mail-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ana = { name: 'Ana Costa', address: 'Ana@Clinic.example' };
const maya = { name: 'Maya Reis', address: 'maya@home.example' };

const notice: GeneratedMailSpec = {
  messageId: 'Notice-1@Clinic.example',
  date: '2024-04-02T09:15:00+01:00',
  from: ana,
  to: [maya],
  subject: 'Appointment on 12 April',
  text: 'Your appointment is on Friday 12 April 2024 at 10:00.\n',
};
const update: GeneratedMailSpec = {
  messageId: 'update-2@clinic.example',
  date: '2024-04-08T16:00:00+01:00',
  from: ana,
  to: [maya, { address: 'leo@home.example' }],
  subject: 'Re: Appointment on 12 April',
  inReplyTo: 'Notice-1@Clinic.example',
  references: ['Notice-1@Clinic.example'],
  text: 'Correction: the appointment moves to Monday 15 April 2024 at 14:30.\n',
};
const reply: GeneratedMailSpec = {
  messageId: 'reply-3@home.example',
  date: '2024-04-08T18:05:00+01:00',
  from: maya,
  to: [ana],
  subject: 'Re: Re: Appointment on 12 April',
  inReplyTo: 'update-2@clinic.example',
  references: ['Notice-1@Clinic.example', 'update-2@clinic.example'],
  text: 'Thanks, 15 April works.\n',
};

describe('mail field helpers', () => {
  it('normalises Message-IDs and id lists', () => {
    expect(normalizeMessageId(' <Abc.1@Example.COM> ')).toBe('abc.1@example.com');
    expect(normalizeMessageId('<>')).toBeUndefined();
    expect(parseMessageIdList('<a@x> <B@x>\r\n <a@x>')).toEqual(['a@x', 'b@x']);
    expect(parseMessageIdList(['<a@x>', '<c@x>'])).toEqual(['a@x', 'c@x']);
  });

  it('keeps the sender offset of the Date header and refuses garbage', () => {
    expect(parseMailDate(' Tue, 09 Apr 2024 17:42:00 +0100')).toBe('2024-04-09T17:42:00+01:00');
    expect(parseMailDate('Tue, 09 Apr 2024 17:42:00 -0330 (NST)')).toBe('2024-04-09T17:42:00-03:30');
    expect(parseMailDate('Tue, 09 Apr 2024 17:42:00 GMT')).toBe('2024-04-09T17:42:00Z');
    expect(parseMailDate('next tuesday-ish')).toBeUndefined();
  });
});

describe('mail importer: .eml', () => {
  it('threads by headers: ids, thread root session, EmailMetadata, offsets, subject line in text', async () => {
    const root = join(dir, 'eml');
    await writeEml(root, '1-notice.eml', notice);
    await writeEml(root, 'thread/2-update.eml', update);
    await writeEml(root, 'thread/3-reply.eml', reply);
    await writeFile(join(root, 'readme.txt'), 'not mail');

    const items = await collect(createMailImporter().read(root, { contextId: 'maya' }));
    expect(rejectsOf(items)).toEqual([]);
    expect(warningsOf(items)).toEqual([]);
    const records = recordsOf(items);
    expect(records.map((r) => [r.id, r.sessionId, r.sequence, r.sourceId])).toEqual([
      ['notice-1@clinic.example', 'notice-1@clinic.example', 0, '1-notice.eml'],
      ['update-2@clinic.example', 'notice-1@clinic.example', 1, 'thread/2-update.eml'],
      ['reply-3@home.example', 'notice-1@clinic.example', 2, 'thread/3-reply.eml'],
    ]);
    const second = records[1]!;
    expect(second).toMatchObject({
      contextId: 'maya',
      kind: 'email',
      speaker: 'Ana Costa',
      timestamp: '2024-04-08T16:00:00+01:00',
      assets: [],
    });
    expect(second.text).toBe(
      'Subject: Re: Appointment on 12 April\n\nCorrection: the appointment moves to Monday 15 April 2024 at 14:30.',
    );
    expect(second.metadata?.email).toEqual({
      messageId: 'update-2@clinic.example',
      inReplyTo: 'notice-1@clinic.example',
      references: ['notice-1@clinic.example'],
      subject: 'Re: Appointment on 12 April',
      from: 'ana@clinic.example',
      to: ['maya@home.example', 'leo@home.example'],
    });
    expect(records[2]!.metadata?.email).toMatchObject({
      references: ['notice-1@clinic.example', 'update-2@clinic.example'],
    });
  });

  it('converts an HTML-only body to text, hashes a missing Message-ID, warns on a bad Date', async () => {
    const root = join(dir, 'html');
    const raw = [
      'From: News <news@shop.example>',
      'To: maya@home.example',
      'Subject: =?UTF-8?B?U3ByaW5nIHNhbGUg4oCUIDIwJQ==?=',
      'Date: sometime soon',
      'MIME-Version: 1.0',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<html><body><h1>Spring sale</h1><p>All <b>garden tools</b> 20% off until 30 April.</p></body></html>',
      '',
    ].join('\r\n');
    await mkdir(root, { recursive: true });
    await writeFile(join(root, 'sale.eml'), raw);

    const first = await collect(createMailImporter().read(join(root, 'sale.eml'), {}));
    const again = await collect(createMailImporter().read(join(root, 'sale.eml'), {}));
    const record = recordsOf(first)[0]!;
    expect(record.id).toMatch(/^mail-sha256:[0-9a-f]{24}$/);
    expect(recordsOf(again)[0]!.id).toBe(record.id);
    expect(record.contextId).toBe('default');
    expect(record.text.startsWith('Subject: Spring sale — 20%\n\n')).toBe(true);
    expect(record.text).toMatch(/garden tools 20% off until 30 April/i);
    expect(record.text).not.toMatch(/<\/?[a-z]/);
    expect(record.timestamp).toBeUndefined();
    expect(record.metadata?.email).toEqual({
      references: [],
      subject: 'Spring sale — 20%',
      from: 'news@shop.example',
      to: ['maya@home.example'],
    });
    const warnings = warningsOf(first);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toMatch(/Date header/);
    expect(warnings[0]!.message).toContain('sale.eml');
  });

  it('keeps image attachments only when the same bytes are on disk next to the mail; else warns', async () => {
    const root = join(dir, 'attachments');
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const withImage = (id: string, filename: string): GeneratedMailSpec => ({
      ...notice,
      messageId: id,
      attachments: [
        { filename, contentType: 'image/png', content: png },
        { filename: 'terms.pdf', contentType: 'application/pdf', content: Buffer.from('%PDF-1.4') },
      ],
    });
    await writeEml(root, 'a.eml', withImage('a@x', 'ticket.png'));
    await writeFile(join(root, 'ticket.png'), png);
    await writeEml(root, 'b.eml', withImage('b@x', 'missing.png'));

    const items = await collect(createMailImporter().read(root, {}));
    const [a, b] = recordsOf(items);
    expect(a!.assets).toEqual([
      {
        id: 'attachment-1',
        kind: 'image',
        uri: join(root, 'ticket.png'),
        mime: 'image/png',
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    ]);
    expect(a!.metadata?.attachments).toHaveLength(2);
    expect(b!.assets).toEqual([]);
    const warnings = warningsOf(items);
    expect(warnings.map((w) => w.source.recordId)).toEqual(['b@x']);
    expect(warnings[0]!.message).toMatch(/missing\.png/);
  });

  it('skips a second copy of the same message with a warning', async () => {
    const root = join(dir, 'dupes');
    await writeEml(root, 'inbox/notice.eml', notice);
    await writeEml(root, 'archive/notice.eml', notice);
    const items = await collect(createMailImporter().read(root, {}));
    expect(recordsOf(items).map((r) => r.id)).toEqual(['notice-1@clinic.example']);
    expect(warningsOf(items).map((w) => w.message)).toEqual([expect.stringMatching(/another copy/)]);
  });
});

describe('mail importer: .mbox', () => {
  const plain = (id: string, body: string): string =>
    [
      'From: Maya Reis <maya@home.example>',
      'To: leo@home.example',
      'Subject: Garden',
      `Message-ID: <${id}>`,
      'Date: Thu, 04 Apr 2024 10:00:00 +0100',
      'Content-Type: text/plain; charset=utf-8',
      '',
      body,
    ].join('\n');

  it('splits on separators after blank lines, unescapes >From, rejects a malformed message, keeps the rest', async () => {
    const root = join(dir, 'mbox');
    const file = await writeMbox(root, 'inbox.mbox', [
      notice,
      plain('garden-1@home.example', 'Plan:\n\nFrom the shed, take the hoe.\n>From here on, water daily.'),
      'this is not a message\nit has no headers at all\n',
      update,
    ]);
    const items = await collect(createMailImporter().read(root, {}));
    const records = recordsOf(items);
    expect(records.map((r) => [r.id, r.sourceId])).toEqual([
      ['notice-1@clinic.example', 'inbox.mbox#1'],
      ['garden-1@home.example', 'inbox.mbox#2'],
      ['update-2@clinic.example', 'inbox.mbox#4'],
    ]);
    expect(records[1]!.text).toBe(
      'Subject: Garden\n\nPlan:\n\nFrom the shed, take the hoe.\n>From here on, water daily.',
    );
    const rejects = rejectsOf(items);
    expect(rejects).toHaveLength(1);
    expect(rejects[0]!.error.code).toBe('INVALID_INPUT');
    expect(rejects[0]!.error.location.file).toBe(file);
    expect(rejects[0]!.error.message).toMatch(/message 3/);
    expect(rejects[0]!.source.line).toBeGreaterThan(1);
  });

  it('does not split on a "From " line inside a paragraph, and reports text before the first separator', async () => {
    const root = join(dir, 'mbox2');
    const body = 'Line one\nFrom me to you: see you Saturday.\n\nFrom the garden, with love.';
    const file = join(root, 'box.mbox');
    await writeMbox(root, 'box.mbox', [plain('one@x', body)]);
    // Undo the writer's escaping of the mid-paragraph line: an mboxo writer may leave it unescaped.
    const unescaped = (await readFile(file, 'utf8'))
      .replace('>From me', 'From me')
      .replace('>From the', 'From the');
    await writeFile(file, `junk before the first separator\n\n${unescaped}`);

    const parts = [];
    for await (const part of splitMbox(file)) parts.push(part);
    expect(parts.map((p) => [p.index, p.line])).toEqual([
      [0, 1],
      [1, 3],
    ]);
    const items = await collect(createMailImporter().read(file, {}));
    expect(recordsOf(items)[0]!.text).toBe(
      'Subject: Garden\n\nLine one\nFrom me to you: see you Saturday.\n\nFrom the garden, with love.',
    );
    expect(rejectsOf(items).map((r) => r.error.message)).toEqual([expect.stringMatching(/before the first/)]);
  });

  it('reads an mbox without the .mbox extension when named directly', async () => {
    const root = join(dir, 'mbox3');
    await writeMbox(root, 'Inbox', [notice, update]);
    await writeFile(join(root, 'single.eml'), formatEml(reply));
    const records = recordsOf(await collect(createMailImporter().read(join(root, 'Inbox'), {})));
    expect(records.map((r) => r.id)).toEqual(['notice-1@clinic.example', 'update-2@clinic.example']);
  });
});
