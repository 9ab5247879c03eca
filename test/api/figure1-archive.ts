import type { MemoryRecordInput } from '../../src/graphmemix-api.ts';

/**
 * A small archive in the spirit of the paper's Figure 1: an original notice, a later update email revising
 * its deadline (a reply in the same thread), two copies of the notice, and unrelated memories.
 */
export const NOTICE_TEXT =
  'Subject: Community garden grant application\nThe application deadline for the community garden grant is March 1. Send the signed form to the council office.';

export const FIGURE1_QUESTION = 'What is the revised deadline for the community garden grant application?';

export function figure1Records(): MemoryRecordInput[] {
  const email = (
    id: string,
    day: string,
    text: string,
    messageId: string,
    inReplyTo?: string,
  ): MemoryRecordInput => ({
    id,
    kind: 'email',
    timestamp: `2024-02-${day}T09:00:00Z`,
    sourceId: `mailbox/${id}.eml`,
    text,
    metadata: {
      email: {
        messageId,
        subject: text.split('\n')[0]!.replace(/^Subject:\s*/, ''),
        ...(inReplyTo === undefined ? {} : { inReplyTo }),
      },
    },
  });
  return [
    email('mail-01-notice', '01', NOTICE_TEXT, '<notice@council>'),
    email(
      'mail-02-update',
      '20',
      'Subject: Re: Community garden grant application\nUpdate: the deadline has been revised and moved to March 15 because the portal was down.',
      '<update@council>',
      '<notice@council>',
    ),
    email('mail-03-copy', '02', NOTICE_TEXT, '<copy1@council>'),
    email('mail-04-copy', '03', NOTICE_TEXT, '<copy2@council>'),
    { id: 'note-05', kind: 'note', text: 'Bought tomatoes, basil and olive oil for the weekend dinner.' },
    { id: 'note-06', kind: 'note', text: 'Dentist appointment moved to Thursday afternoon.' },
    { id: 'note-07', kind: 'note', text: 'The bike needs new brake pads before the spring ride.' },
    { id: 'note-08', kind: 'note', text: 'Book club reads a novel about a lighthouse keeper this month.' },
    { id: 'note-09', kind: 'note', text: 'Grandma shared her apple pie recipe with extra cinnamon.' },
    { id: 'note-10', kind: 'note', text: 'Renewed the library card; it now expires in two years.' },
  ];
}

/**
 * Calibration pinned in the store (the documented override of the shipped defaults), so the tests check the
 * structure, not whatever the shipped fit is: under it a lone copy of the notice does not justify a chain.
 */
export const PINNED = { a: 4, b: 0.2, c: -5 };
