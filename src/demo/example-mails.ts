import type { GeneratedMailSpec } from './example-mail-writer.ts';

const maya = { name: 'Maya Reis', address: 'maya@reis.example' };
const leo = { name: 'Leo Santos', address: 'leo@santos.example' };
const riverside = { name: 'Riverside Arts Centre', address: 'workshops@riverside-arts.example' };

/** Message-IDs (already normalised: lower case, no brackets) so questions can name the records. */
export const MAIL_IDS = {
  workshopNotice: 'rpw-2041-confirm@riverside-arts.example',
  workshopForward: 'fwd-rpw-2041@reis.example',
  leoReply: 're-fwd-rpw-2041@santos.example',
  workshopChange: 'rpw-2041-change@riverside-arts.example',
  trainTicket: 'px7q42@tickets.cp.example',
  raceBib: 'bib-1187@run-lisboa.example',
  invoice: 'invoice-2024-04@energia.example',
  bookshop: 'newsletter-17@bertrand-books.example',
} as const;

const noticeText = [
  'Dear Maya,',
  '',
  "Your place at the Beginners' Wheel Pottery Workshop is confirmed (Ref RPW-2041).",
  '',
  'Date: Saturday 13 April 2024, 10:00 to 13:00',
  'Place: Riverside Arts Centre, Studio 2 (ground floor), Rua do Rio 14, Lisbon',
  'Deposit paid: EUR 25',
  '',
  'Please bring an apron and wear clothes that can get dirty. Clay and tools are provided.',
  '',
  'See you at the wheel,',
  'Riverside Arts Centre',
].join('\n');

/** The thread that revises a plan, a duplicate forward, and one more grounded booking, as .eml files. */
export const EXAMPLE_EML_FILES: { name: string; spec: GeneratedMailSpec }[] = [
  {
    name: '2024-04-02-workshop-confirmed.eml',
    spec: {
      messageId: MAIL_IDS.workshopNotice,
      date: '2024-04-02T09:12:00+01:00',
      from: riverside,
      to: [maya],
      subject: 'Pottery Workshop registration confirmed (Ref RPW-2041)',
      text: noticeText,
    },
  },
  {
    name: '2024-04-02-fwd-workshop.eml',
    spec: {
      messageId: MAIL_IDS.workshopForward,
      date: '2024-04-02T20:31:00+01:00',
      from: maya,
      to: [leo],
      subject: 'Fwd: Pottery Workshop registration confirmed (Ref RPW-2041)',
      references: [MAIL_IDS.workshopNotice],
      text: [
        'Leo, this is the pottery workshop I told you about. Want to come? Book your own place, it is filling up.',
        '',
        '---------- Forwarded message ----------',
        'From: Riverside Arts Centre <workshops@riverside-arts.example>',
        'Subject: Pottery Workshop registration confirmed (Ref RPW-2041)',
        '',
        noticeText,
      ].join('\n'),
    },
  },
  {
    name: '2024-04-03-re-fwd-workshop.eml',
    spec: {
      messageId: MAIL_IDS.leoReply,
      date: '2024-04-03T08:05:00+01:00',
      from: leo,
      to: [maya],
      subject: 'Re: Fwd: Pottery Workshop registration confirmed (Ref RPW-2041)',
      inReplyTo: MAIL_IDS.workshopForward,
      references: [MAIL_IDS.workshopNotice, MAIL_IDS.workshopForward],
      text: 'Count me in! I booked the last place. I can drive us there and back, my car has room for the pots.',
    },
  },
  {
    name: '2024-04-05-train-ticket.eml',
    spec: {
      messageId: MAIL_IDS.trainTicket,
      date: '2024-04-05T10:58:00+01:00',
      from: { name: 'CP Tickets', address: 'no-reply@tickets.cp.example' },
      to: [maya],
      subject: 'Your ticket: Lisboa Santa Apolonia to Porto Campanha on 20 April 2024 (Booking PX7Q42)',
      text: [
        'Hello Maya Reis,',
        '',
        'Thank you for travelling with CP. Booking PX7Q42.',
        '',
        'Train: Alfa Pendular 121',
        'Date: 20 April 2024',
        'Departs: 08:39 Lisboa Santa Apolonia',
        'Arrives: 11:35 Porto Campanha',
        'Coach 4, seat 52 (window)',
        'Price: EUR 31.40',
        '',
        'Show this ticket on board, printed or on your phone.',
      ].join('\n'),
    },
  },
  {
    name: '2024-04-09-workshop-change-of-date.eml',
    spec: {
      messageId: MAIL_IDS.workshopChange,
      date: '2024-04-09T17:40:00+01:00',
      from: riverside,
      to: [maya, leo],
      subject: 'CHANGE OF DATE: Pottery Workshop (Ref RPW-2041)',
      inReplyTo: MAIL_IDS.workshopNotice,
      references: [MAIL_IDS.workshopNotice],
      text: [
        'Dear participants,',
        '',
        "Our kiln needs an urgent repair, so the Beginners' Wheel Pottery Workshop of Saturday 13 April is",
        'moved to Sunday 14 April 2024, 14:00 to 17:00, in Studio 5 (first floor) of the Riverside Arts Centre.',
        '',
        'Your booking and your EUR 25 deposit carry over; nothing to do if the new date suits you.',
        'Parking: the Riverside car park, level -2, is free for workshop participants on Sundays.',
        '',
        'Sorry for the change,',
        'Riverside Arts Centre',
      ].join('\n'),
    },
  },
];

/** Unrelated mail, delivered in one mbox (one plain-text bill, one HTML-only newsletter, one race email). */
export const EXAMPLE_MBOX_MESSAGES: GeneratedMailSpec[] = [
  {
    messageId: MAIL_IDS.raceBib,
    date: '2024-04-12T12:00:00+01:00',
    from: { name: 'Run Lisboa', address: 'race@run-lisboa.example' },
    to: [maya],
    subject: 'Parque das Nacoes 10k: your bib number',
    text: 'Hi Maya, your bib number is 1187. The race starts on 5 May 2024 at 09:00 by the Vasco da Gama bridge.',
  },
  {
    messageId: MAIL_IDS.invoice,
    date: '2024-04-15T06:30:00+01:00',
    from: { name: 'Energia Lisboa', address: 'billing@energia.example' },
    to: [maya],
    subject: 'Your April electricity invoice',
    text: 'Invoice 2024-04 for Rua das Flores 8: EUR 46.12, paid by direct debit on 25 April 2024.',
  },
  {
    messageId: MAIL_IDS.bookshop,
    date: '2024-04-17T09:00:00+01:00',
    from: { name: 'Bertrand Books', address: 'news@bertrand-books.example' },
    to: [maya],
    subject: 'Spring reads: 20% off novels this week',
    html:
      '<html><body><h1>Spring reads</h1><p>All <b>novels</b> are 20% off until 24 April.</p>' +
      '<ul><li>Piranesi</li><li>The Remains of the Day</li></ul></body></html>',
  },
];
