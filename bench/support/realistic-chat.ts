/**
 * Generated chat archives that behave like real ones for indexes and graphs: a Zipfian vocabulary of tens of
 * thousands of words, topics that persist through a session (so neighbours exist), sessions of user and
 * assistant rounds a day apart, timestamps minutes apart, occasional photos with captions and places.
 * Seeded (mulberry32): the same arguments give the same archive. Used by bench:scale and bench:digest.
 *
 * Two shapes (`shape`): 'rounds' (default), user and assistant rows paired by round ids, as Mem-Gallery and an
 * assistant's own log; 'two-person', two named people without round ids, runs of one speaker (a turn changes
 * speaker with probability 0.6) and every turn of a session at the session's date, as LoCoMo's release writes
 * it: the chat shape the held-out sets and users' messenger exports have, whose relations come from
 * `consecutive_turn` and the shared date instead of `same_round`.
 *
 * Why not 150 fixed words: with a tiny vocabulary every memory shares terms with every other, BM25 posting
 * lists are the whole archive and TF-IDF similarity is flat, so costs and graph density say nothing about
 * real text (issue #10 measured "0 similarity edges at 10k" that way).
 */
import { writeFileSync } from 'node:fs';
import { mulberry32 } from '../../src/digest/semantic/seeded-random.ts';
import type { ImportItem } from '../../src/importers/importer-spec.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';

export interface ChatArchiveOptions {
  contextId: string;
  /** Memories to produce. */
  count: number;
  seed: number;
  /** First sequence / id number (to append to an existing archive). Default 0. */
  start?: number;
  /** Words in the vocabulary (default 40,000). */
  vocabulary?: number;
  /** 'rounds' (default) or 'two-person' (see the header). */
  shape?: ChatShape;
}

export type ChatShape = 'rounds' | 'two-person';

/** The shapes, for the benchmarks' `--shape` flag. */
export const CHAT_SHAPES: readonly ChatShape[] = ['rounds', 'two-person'];

/** The two people of the 'two-person' shape. */
const PEOPLE = ['Maya', 'Theo'] as const;

/**
 * Who speaks turn i of a 'two-person' chat: the previous speaker, or the other one with probability 0.6.
 * Stateless (a hash of the seed and the turns since the session began), so an archive extended with `start`
 * continues the same sessions as one generated whole.
 */
function twoPersonSpeaker(seed: number, session: number, turn: number): number {
  let speaker = 0;
  for (let t = 1; t <= turn; t++)
    if (mulberry32(seed * 7_919 + session * 104_729 + t)() < 0.6) speaker = 1 - speaker;
  return speaker;
}

/** Turns per session and the Zipf exponent of word frequencies (natural text is close to 1). */
const SESSION_TURNS = 24;
const ZIPF_S = 1.07;
const TOPIC_WORDS = 60;
const TOPICS = 400;

const FUNCTION_WORDS = (
  'i you we the a to and of in it is that for on with was my me this have be just so but do at not are ' +
  'what about like can your really think know would they there get how if all been when one yes no'
).split(' ');
const SYLLABLES = (
  'ka lo mi ra te su no vi da pe ri mo la ne ti ko sa be du fa go hu ji ma nu po qui re so tu va we xi ya ' +
  'zo bra cle dri fro gla pli sto tra ven mar tor lin gen pas cor del mun sil'
).split(' ');

/** A deterministic vocabulary: pseudo-words from syllables, distinct, length 2..4 syllables. */
export function makeVocabulary(size: number, seed = 1): string[] {
  const next = mulberry32(seed);
  const words = new Set<string>();
  while (words.size < size) {
    const syllables = 2 + Math.floor(next() * 3);
    let word = '';
    for (let s = 0; s < syllables; s++) word += SYLLABLES[Math.floor(next() * SYLLABLES.length)]!;
    words.add(word);
  }
  return [...words];
}

/** Sampler of ranks 0..n-1 with P(rank r) proportional to 1 / (r + 1)^s (inverse CDF by binary search). */
export function zipfSampler(n: number, s: number, next: () => number): () => number {
  const cdf = new Float64Array(n);
  let total = 0;
  for (let r = 0; r < n; r++) {
    total += 1 / (r + 1) ** s;
    cdf[r] = total;
  }
  return () => {
    const u = next() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const vocabularies = new Map<number, string[]>();

/** One context's chat archive, as import items (records only). */
export function* chatArchive(options: ChatArchiveOptions): Generator<ImportItem> {
  for (const record of chatRecords(options)) yield { type: 'record', record, source: { file: 'generated' } };
}

/** The records of chatArchive. */
export function* chatRecords(options: ChatArchiveOptions): Generator<MemoryRecord> {
  const size = options.vocabulary ?? 40_000;
  let vocabulary = vocabularies.get(size);
  if (!vocabulary) {
    vocabulary = makeVocabulary(size);
    vocabularies.set(size, vocabulary);
  }
  const next = mulberry32(options.seed);
  const word = zipfSampler(vocabulary.length, ZIPF_S, next);
  const topicOf = (topic: number, i: number): string =>
    vocabulary[(topic * 7919 + i * 104_729) % vocabulary.length]!;
  const start = options.start ?? 0;
  let topic = 0;
  for (let i = start; i < start + options.count; i++) {
    const session = Math.floor(i / SESSION_TURNS);
    const turn = i % SESSION_TURNS;
    if (turn === 0) topic = Math.floor(next() * TOPICS);
    const length = 6 + Math.floor(next() * 18);
    const words: string[] = [];
    for (let w = 0; w < length; w++) {
      const roll = next();
      if (roll < 0.35) words.push(FUNCTION_WORDS[Math.floor(next() * FUNCTION_WORDS.length)]!);
      else if (roll < 0.55) words.push(topicOf(topic, Math.floor(next() * TOPIC_WORDS)));
      else words.push(vocabulary[word()]!);
    }
    if (options.shape === 'two-person') {
      yield twoPersonRecord(options, i, session, turn, words, next, () =>
        topicOf(topic, Math.floor(next() * TOPIC_WORDS)),
      );
      continue;
    }
    const day = new Date(Date.UTC(2021, 0, 1) + session * 86_400_000 + turn * 90_000);
    const user = turn % 2 === 0;
    const record: MemoryRecord = {
      id: `m${i}`,
      contextId: options.contextId,
      kind: 'message',
      sequence: i,
      sessionId: `s${session}`,
      roundId: `s${session}:${Math.floor(turn / 2)}`,
      role: user ? 'user' : 'assistant',
      speaker: user ? 'Sam' : 'assistant',
      timestamp: day.toISOString().replace('.000Z', 'Z'),
      text: words.join(' '),
      assets: [],
    };
    if (user && next() < 0.04) {
      const caption = Array.from({ length: 8 }, () => topicOf(topic, Math.floor(next() * TOPIC_WORDS)));
      record.assets = [{ id: 'img1', kind: 'image', derived: { captions: [caption.join(' ')] } }];
      record.location = { name: vocabulary[word()]!, lat: 38.7 + next() * 0.01, lon: -9.1 + next() * 0.01 };
    }
    yield record;
  }
}

/** A 'two-person' turn: the speaker's name as role and speaker, no round, the session's date, some photos. */
function twoPersonRecord(
  options: ChatArchiveOptions,
  i: number,
  session: number,
  turn: number,
  words: readonly string[],
  next: () => number,
  topicWord: () => string,
): MemoryRecord {
  const speaker = PEOPLE[twoPersonSpeaker(options.seed, session, turn)]!;
  const day = new Date(Date.UTC(2021, 0, 1) + session * 86_400_000 + 18 * 3_600_000);
  // A literal like the rounds shape's, not a shared builder: spreading shared fields made generation 3x slower,
  // and bench:scale times the generator inside its ingest.
  const record: MemoryRecord = {
    id: `m${i}`,
    contextId: options.contextId,
    kind: 'message',
    sequence: i,
    sessionId: `s${session}`,
    role: speaker,
    speaker,
    timestamp: day.toISOString().replace('.000Z', 'Z'),
    text: words.join(' '),
    assets: [],
  };
  if (next() < 0.03) {
    const caption = Array.from({ length: 8 }, topicWord);
    record.assets = [{ id: 'image-0', kind: 'image', derived: { captions: [caption.join(' ')] } }];
  }
  return record;
}

/** A question drawn from the same distribution: 2-8 words of one generated memory's topic and text. */
export function chatQuestions(count: number, seed: number, options: ChatArchiveOptions): string[] {
  const records = [...chatRecords({ ...options, count: Math.min(options.count, 5000) })];
  const next = mulberry32(seed);
  return Array.from({ length: count }, () => {
    const record = records[Math.floor(next() * records.length)]!;
    const words = record.text.split(' ').filter((w) => !FUNCTION_WORDS.includes(w));
    const n = Math.min(words.length, 2 + Math.floor(next() * 7));
    const picked = Array.from({ length: n }, () => words[Math.floor(next() * words.length)]!);
    return `what did we say about ${picked.join(' ')}`;
  });
}

/**
 * `count` records of chatRecords (seeded) as a unified JSONL file without their context (the importer's
 * `contextId` option chooses it), for the probes that import a file.
 */
export function writeChatJsonl(file: string, count: number, seed: number): void {
  const lines: string[] = [];
  for (const record of chatRecords({ contextId: 'unused', count, seed })) {
    const { contextId: _, ...rest } = record;
    lines.push(JSON.stringify(rest));
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
}
