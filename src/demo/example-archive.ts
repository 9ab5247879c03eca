import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EXAMPLE_CHAT_DAYS } from './example-chats.ts';
import { formatEml } from './example-mail-writer.ts';
import { EXAMPLE_EML_FILES, EXAMPLE_MBOX_MESSAGES, MAIL_IDS } from './example-mails.ts';
import { renderPhotoJpeg } from './example-photo-renderer.ts';
import { EXAMPLE_PHOTOS } from './example-photos.ts';

/** The archive context every part of the example belongs to (pass it as `contextId` to each importer). */
export const EXAMPLE_CONTEXT_ID = 'maya';

export interface ExampleQuestion {
  prompt: string;
  /** Memory ids (as the unified, mail and photos importers assign them) that together answer it. */
  expectMemoryIds?: string[];
  /** The answer in words, for people reading the demo output. */
  answer?: string;
}

export interface ExampleArchive {
  /** Chats, unified JSONL (format 'unified'). */
  unifiedFile: string;
  /** .eml files and one .mbox (format 'mail'). */
  mailDir: string;
  /** JPEG photos with EXIF time and GPS (format 'photos'). */
  photosDir: string;
  questions: ExampleQuestion[];
  contextId: string;
}

/**
 * Writes a small, self-made archive of three weeks of one person's life (Maya Reis, Lisbon, April 2024):
 * 82 chat messages in 13 daily sessions, an email thread that revises a plan (a pottery workshop moved
 * from Saturday 13 April, Studio 2, to Sunday 14 April, Studio 5), a duplicate forward of the original
 * notice, a train booking, unrelated mail, and six photos rendered at build time with readable text.
 *
 * Offline and deterministic: two calls write byte-identical files (photos included). Write into a fresh or
 * empty directory: existing files with other names are left alone and would be imported too.
 */
export async function writeExampleArchive(dir: string): Promise<ExampleArchive> {
  const mailDir = join(dir, 'mail');
  const photosDir = join(dir, 'photos');
  await mkdir(mailDir, { recursive: true });
  await mkdir(photosDir, { recursive: true });

  const unifiedFile = join(dir, 'chats.jsonl');
  await writeFile(unifiedFile, exampleChatLines().join('\n') + '\n');

  for (const { name, spec } of EXAMPLE_EML_FILES) await writeFile(join(mailDir, name), formatEml(spec));
  await writeFile(join(mailDir, 'other-mail.mbox'), mboxOf(EXAMPLE_MBOX_MESSAGES.map(formatEml)));

  const photos = await Promise.all(EXAMPLE_PHOTOS.map(({ spec }) => renderPhotoJpeg(spec)));
  for (const [index, { name }] of EXAMPLE_PHOTOS.entries())
    await writeFile(join(photosDir, name), photos[index]!);

  return { unifiedFile, mailDir, photosDir, questions: EXAMPLE_QUESTIONS, contextId: EXAMPLE_CONTEXT_ID };
}

/** Record id of a chat message (unified format), e.g. `chat-0409-r2-user`. */
export function exampleChatId(date: string, round: number, role: 'user' | 'assistant'): string {
  return `chat-${date.slice(5, 7)}${date.slice(8, 10)}-r${round}-${role}`;
}

const photoId = (name: string): string => `photo:${name}`;

export const EXAMPLE_QUESTIONS: ExampleQuestion[] = [
  {
    prompt: 'When and in which studio did the pottery workshop finally take place?',
    expectMemoryIds: [MAIL_IDS.workshopChange, photoId('pottery-studio-sign.jpg')],
    answer: 'Sunday 14 April 2024, 14:00 to 17:00, in Studio 5 (first floor) of the Riverside Arts Centre.',
  },
  {
    prompt: 'Where did Maya park the car for the pottery workshop?',
    expectMemoryIds: [photoId('riverside-car-park.jpg'), MAIL_IDS.workshopChange],
    answer: 'In the Riverside car park, level -2, bay 214.',
  },
  {
    prompt: 'Which coach and seat did Maya have on the train to Porto, and when did it leave?',
    expectMemoryIds: [MAIL_IDS.trainTicket, photoId('train-ticket.jpg')],
    answer: 'Coach 4, seat 52, on Alfa Pendular 121 leaving Lisboa Santa Apolonia at 08:39 on 20 April 2024.',
  },
  {
    prompt: 'How much did the coffee and custard tarts at the Majestic cost?',
    expectMemoryIds: [photoId('majestic-receipt.jpg'), exampleChatId('2024-04-21', 2, 'user')],
    answer: 'EUR 11.20: two pastel de nata (6.00) and two galao (5.20).',
  },
  {
    prompt: 'What grows in bed 3 of the garden, and when is it watered?',
    expectMemoryIds: [photoId('garden-whiteboard.jpg'), exampleChatId('2024-04-06', 2, 'user')],
    answer: 'Basil and parsley; watering is on Tuesday and Friday evenings.',
  },
  {
    prompt: 'Who did Maya invite to the pottery workshop, and what did he offer?',
    expectMemoryIds: [MAIL_IDS.workshopForward, MAIL_IDS.leoReply],
    answer: 'Leo Santos; he booked the last place and offered to drive them there and back.',
  },
];

/** One JSON object per line: a context header, then user/assistant messages (one session per day). */
function exampleChatLines(): string[] {
  const lines = [
    JSON.stringify({ type: 'context', id: EXAMPLE_CONTEXT_ID, metadata: { owner: 'Maya Reis' } }),
  ];
  for (const day of EXAMPLE_CHAT_DAYS) {
    const sessionId = `chat-${day.date}`;
    const [hour, minute] = day.time.split(':').map(Number) as [number, number];
    day.rounds.forEach(([userText, assistantText], index) => {
      const round = index + 1;
      const roundId = `${day.date}:${round}`;
      // Rounds four minutes apart; the reply one minute after the message.
      const asked = clock(hour, minute + index * 4);
      const replied = clock(hour, minute + index * 4 + 1);
      lines.push(
        JSON.stringify(chatLine(day.date, round, 'user', userText, sessionId, roundId, asked)),
        JSON.stringify(chatLine(day.date, round, 'assistant', assistantText, sessionId, roundId, replied)),
      );
    });
  }
  return lines;
}

function chatLine(
  date: string,
  round: number,
  role: 'user' | 'assistant',
  text: string,
  sessionId: string,
  roundId: string,
  time: string,
): Record<string, unknown> {
  return {
    type: 'memory',
    id: exampleChatId(date, round, role),
    kind: 'message',
    sessionId,
    roundId,
    role,
    speaker: role === 'user' ? 'Maya' : 'Assistant',
    timestamp: `${date}T${time}:00+01:00`,
    text,
  };
}

function clock(hour: number, minutes: number): string {
  const h = hour + Math.floor(minutes / 60);
  const m = minutes % 60;
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
}

/** mboxrd: a "From " separator per message, ">From " escaping, LF line ends, blank line between messages. */
function mboxOf(messages: string[]): string {
  return messages
    .map((raw) => {
      const body = raw
        .replace(/\r\n/g, '\n')
        .split('\n')
        .map((line) => (/^>*From /.test(line) ? `>${line}` : line))
        .join('\n');
      return `From maya@reis.example Sat Apr 20 07:00:00 2024\n${body.replace(/\n*$/, '\n')}\n`;
    })
    .join('');
}
