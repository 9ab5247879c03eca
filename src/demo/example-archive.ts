import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { documentPartId } from '../types/document-parts.ts';
import { EXAMPLE_CHAT_DAYS } from './example-chats.ts';
import { formatEml } from './example-mail-writer.ts';
import { EXAMPLE_EML_FILES, EXAMPLE_MBOX_MESSAGES, MAIL_IDS } from './example-mails.ts';
import { writePdf } from './example-pdf-writer.ts';
import { renderPhotoJpeg } from './example-photo-renderer.ts';
import { EXAMPLE_PHOTOS } from './example-photos.ts';
import { writeTextVideo } from './example-video-writer.ts';

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
  /** JPEG photos with EXIF time and GPS and a short video with text in its frames (format 'media'). */
  photosDir: string;
  /** A PDF with a text layer (format 'documents'). */
  documentsDir: string;
  /** Whether the video was written (ffmpeg installed); without it its question is left out. */
  hasVideo: boolean;
  /**
   * Whether the PDF can be digested (poppler-utils installed); without it the PDF is stored with its media
   * failed and no pages, and its question is left out.
   */
  hasPdfTools: boolean;
  /** Record id of each media or document file by name (content ids: see the media importer). */
  mediaIds: Record<string, string>;
  questions: ExampleQuestion[];
  contextId: string;
}

/** The departures-board video of the train trip (text drawn into its frames). */
export const EXAMPLE_VIDEO = {
  name: 'departures-board.mp4',
  spec: {
    text: 'ALFA 121  LINHA 3',
    seconds: 3,
    createdAt: '2024-04-20T07:33:00Z',
    lat: 38.71369,
    lon: -9.12271,
  },
} as const;

/** The pottery workshop handout (a PDF with a text layer, two pages). */
export const EXAMPLE_PDF = {
  name: 'workshop-handout.pdf',
  spec: {
    title: 'Riverside Arts Centre: wheel throwing for beginners',
    author: 'Riverside Arts Centre',
    createdAt: '2024-04-02T09:00:00Z',
    pages: [
      {
        lines: [
          'Riverside Arts Centre - Wheel throwing for beginners',
          'Bring an apron and a small towel. Clay and tools are provided.',
          'Wear short nails and clothes that can get muddy.',
        ],
      },
      {
        lines: [
          'After the workshop',
          'Your pieces are glazed and fired in our kiln.',
          'Collect your fired pottery from reception from 28 April 2024, 10:00 to 18:00.',
        ],
      },
    ],
  },
} as const;

/**
 * Writes a small, self-made archive of three weeks of one person's life (Maya Reis, Lisbon, April 2024):
 * 82 chat messages in 13 daily sessions, an email thread that revises a plan (a pottery workshop moved
 * from Saturday 13 April, Studio 2, to Sunday 14 April, Studio 5), a duplicate forward of the original
 * notice, a train booking, unrelated mail, six photos rendered at build time with readable text, a short
 * departures-board video with text in its frames (ffmpeg) and a two-page workshop handout PDF.
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

  const mediaIds: Record<string, string> = {};
  const photos = await Promise.all(EXAMPLE_PHOTOS.map(({ spec }) => renderPhotoJpeg(spec)));
  for (const [index, { name }] of EXAMPLE_PHOTOS.entries()) {
    await writeFile(join(photosDir, name), photos[index]!);
    mediaIds[name] = contentId('photo', photos[index]!);
  }
  let hasVideo = true;
  try {
    const video = join(photosDir, EXAMPLE_VIDEO.name);
    await writeTextVideo(video, EXAMPLE_VIDEO.spec);
    mediaIds[EXAMPLE_VIDEO.name] = contentId('video', await readFile(video));
  } catch {
    // No ffmpeg: the archive still works without its video (the demo says so).
    hasVideo = false;
  }
  const documentsDir = join(dir, 'documents');
  await mkdir(documentsDir, { recursive: true });
  const pdf = writePdf(EXAMPLE_PDF.spec);
  await writeFile(join(documentsDir, EXAMPLE_PDF.name), pdf);
  const pdfId = contentId('document', pdf);
  mediaIds[EXAMPLE_PDF.name] = pdfId;
  // Each page is a memory of its own (src/types/document-parts.ts); both pages have a text layer.
  mediaIds[`${EXAMPLE_PDF.name}#page-2`] = documentPartId(pdfId, 2);

  const resolveIds = (question: ExampleQuestion): ExampleQuestion =>
    question.expectMemoryIds === undefined
      ? question
      : { ...question, expectMemoryIds: question.expectMemoryIds.map((id) => fileId(id, mediaIds)) };
  const hasPdfTools = (await runs('pdfinfo')) && (await runs('pdftotext'));
  const questions = EXAMPLE_QUESTIONS.filter((question) => {
    const refs = question.expectMemoryIds ?? [];
    const needsPdf = refs.some((ref) => ref.startsWith(fileRef(EXAMPLE_PDF.name)));
    return (hasVideo || !refs.includes(fileRef(EXAMPLE_VIDEO.name))) && (hasPdfTools || !needsPdf);
  }).map(resolveIds);
  return {
    unifiedFile,
    mailDir,
    photosDir,
    documentsDir,
    hasVideo,
    hasPdfTools,
    mediaIds,
    questions,
    contextId: EXAMPLE_CONTEXT_ID,
  };
}

/**
 * Whether a poppler-utils command is installed (`-v`, fixed arguments, no shell): the documents digest of a PDF
 * needs pdfinfo and pdftotext. Only a missing program counts as absent.
 */
async function runs(command: 'pdfinfo' | 'pdftotext'): Promise<boolean> {
  try {
    await promisify(execFile)(command, ['-v'], { timeout: 10_000 });
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/** Media and documents are identified by content (`<kind>:<first 24 hex of sha256>`), like their importers. */
function contentId(kind: 'photo' | 'video' | 'document', bytes: Buffer): string {
  return `${kind}:${createHash('sha256').update(bytes).digest('hex').slice(0, 24)}`;
}

/** A question's reference to a generated file, resolved to its record id when the archive is written. */
const FILE_REF = 'file:';
function fileRef(name: string): string {
  return `${FILE_REF}${name}`;
}
function fileId(id: string, ids: Record<string, string>): string {
  return id.startsWith(FILE_REF) ? (ids[id.slice(FILE_REF.length)] ?? id) : id;
}

/** Record id of a chat message (unified format), e.g. `chat-0409-r2-user`. */
export function exampleChatId(date: string, round: number, role: 'user' | 'assistant'): string {
  return `chat-${date.slice(5, 7)}${date.slice(8, 10)}-r${round}-${role}`;
}

const photoId = fileRef;

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
  {
    prompt: 'From which platform (linha) did the Alfa 121 to Porto leave?',
    expectMemoryIds: [fileRef(EXAMPLE_VIDEO.name), MAIL_IDS.trainTicket],
    answer: 'Linha 3 (read from a frame of the departures-board video), at 08:39 on 20 April 2024.',
  },
  {
    prompt: 'From what date can Maya collect her fired pottery from reception?',
    expectMemoryIds: [fileRef(`${EXAMPLE_PDF.name}#page-2`)],
    answer: 'From 28 April 2024, 10:00 to 18:00 (page 2 of the workshop handout PDF).',
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
