import type { MemoryRecord } from '../../types/memory-record.ts';
import { explicitSupersedes } from '../../types/supersession.ts';
import { timestampMs } from '../date-extraction.ts';
import { contentTokens, normalizeMessageId } from './email-facts.ts';
import { compareBySequence, PairSet, type RecordPair } from './record-pair.ts';

/** Constants of the `supersedes` rule (documented on `supersedesPairs`; docs/supersession.md). */
export const SUPERSEDES_RULE = {
  /** A newer memory is compared with at most this many memories right before it in its thread. */
  window: 8,
  /** Shared topic tokens needed after a strong cue ("update:", "moved to") and after a weak one ("now"). */
  minSharedStrong: 1,
  minSharedWeak: 2,
} as const;

/**
 * Cues that a memory revises an earlier statement. Strong cues say so outright; weak ones ("now", "instead",
 * "no longer") are common words, so they need a wider topic overlap.
 */
const STRONG_CUE =
  /\b(?:update[ds]?\s*:|updated?|correction|corrected|actually|chang(?:e|ed|es)\s+to|moved(?:\s+to)?|rescheduled|postponed|brought\s+forward|pushed\s+(?:back|to)|new\s+(?:date|time|deadline|address|number))\b/i;
const WEAK_CUE = /\b(?:now|instead|no\s+longer|not\s+any\s*more)\b/i;
/** A negation cue revises a statement without stating a new value ("I no longer work at Acme"). */
const NEGATION_CUE = /\b(?:no\s+longer|not\s+any\s*more)\b/i;
/** How many words after a negation cue it governs ("no longer | works at Acme Robotics"). */
const NEGATED_WORDS = 4;

/** Topic tokens of the NEGATED_WORDS words after the first negation cue (bounded: reads one short slice). */
function negatedTokens(text: string): Set<string> {
  const match = NEGATION_CUE.exec(text);
  const tokens = new Set<string>();
  if (match === null) return tokens;
  const after = text.slice(match.index + match[0].length, match.index + match[0].length + 200);
  const words = after
    .split(/[^\p{L}\p{N}'-]+/u)
    .filter((word) => word !== '')
    .slice(0, NEGATED_WORDS);
  for (const token of contentTokens(words.join(' '))) if (!CUE_WORDS.has(token)) tokens.add(token);
  return tokens;
}

/** Cue words are not topic: "update" shared by two unrelated updates says nothing about the slot. */
const CUE_WORDS = new Set(
  'update updated updates correction corrected actually change changed changes moved rescheduled postponed brought forward pushed back new now instead longer anymore any more'.split(
    ' ',
  ),
);

const MONTH = '(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\\.?';
/** Full weekday names only: "sat", "sun", "wed" are ordinary words. */
const WEEKDAY = '(?:mon|tues|wednes|thurs|fri|satur|sun)day';
/** Slot values: dates, weekdays, clock times, amounts, quantities with a unit, e-mail addresses. */
const VALUE_PATTERNS: ReadonlyArray<RegExp> = [
  /\b\d{4}-\d{2}-\d{2}\b/g,
  new RegExp(`\\b\\d{1,2}(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}(?![a-z])`, 'gi'),
  new RegExp(`\\b${MONTH}\\s+\\d{1,2}(?:st|nd|rd|th)?\\b`, 'gi'),
  new RegExp(`\\b${WEEKDAY}\\b`, 'gi'),
  /\b\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)(?![a-z])/gi,
  /\b\d{1,2}:\d{2}\b(?!\s?(?:am|pm|a\.m\.|p\.m\.))/gi,
  /[$€£]\s?\d+(?:[.,]\d+)?/g,
  /\b\d+(?:[.,]\d+)?\s?(?:%|percent|eur|euros?|usd|dollars?|pounds?|kg|km|miles?|minutes?|hours?|days?|weeks?|months?|years?)\b/gi,
  /(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}\b/g,
];

/** What the rule reads from one memory. */
export interface SupersessionFacts {
  id: string;
  sequence: number;
  timeMs?: number;
  /** Explicit `supersedes` ids (trimmed, deduplicated, never the record itself). */
  explicit: string[];
  /** The thread the memory is compared within; undefined: never detected (photos, videos). */
  thread?: string;
  /** Strong / weak / negation cue present (only read on the newer side). */
  cue: 'strong' | 'weak' | 'negation' | undefined;
  values: Set<string>;
  topic: Set<string>;
  /** Topic tokens of the few words a negation cue governs ("no longer WORKS AT ACME"); empty without one. */
  negated: Set<string>;
  question: boolean;
}

export function supersessionFacts(record: MemoryRecord): SupersessionFacts {
  const text = record.text;
  const timeMs = record.timestamp === undefined ? undefined : timestampMs(record.timestamp);
  const topic = new Set<string>();
  for (const token of contentTokens(text)) if (!CUE_WORDS.has(token)) topic.add(token);
  const thread = supersessionThread(record);
  return {
    id: record.id,
    sequence: record.sequence,
    ...(timeMs === undefined ? {} : { timeMs }),
    explicit: explicitSupersedes(record),
    ...(thread === undefined ? {} : { thread }),
    cue: revisionCue(text),
    values: slotValues(text),
    topic,
    negated: negatedTokens(text),
    question: /\?\s*$/.test(text.trim()),
  };
}

/** The revision cue of a text (SupersessionFacts.cue): three tests, without the rest of the facts. */
function revisionCue(text: string): SupersessionFacts['cue'] {
  if (NEGATION_CUE.test(text)) return 'negation';
  if (STRONG_CUE.test(text)) return 'strong';
  return WEAK_CUE.test(text) ? 'weak' : undefined;
}

/**
 * The thread a memory's revisions are looked for in: its session / conversation (`sessionId`), else for an
 * email its mail thread (the first References id, the In-Reply-To, or its own Message-ID), else its run
 * (`runId`), else the context's stream of unthreaded memories. Photos and videos have none: a caption is not a
 * statement that can be corrected.
 */
export function supersessionThread(record: MemoryRecord): string | undefined {
  if (record.kind === 'photo' || record.kind === 'video') return undefined;
  if (record.sessionId !== undefined && record.sessionId !== '') return `s:${record.sessionId}`;
  if (record.kind === 'email') {
    const email = record.metadata?.email as Record<string, unknown> | undefined;
    const references = email?.references;
    const first = Array.isArray(references)
      ? references.find((item): item is string => typeof item === 'string' && item.trim() !== '')
      : typeof references === 'string'
        ? references.split(/\s+/).find((item) => item !== '')
        : undefined;
    const root = first ?? stringField(email?.inReplyTo) ?? stringField(email?.messageId);
    if (root !== undefined) return `m:${normalizeMessageId(root)}`;
  }
  if (record.runId !== undefined && record.runId !== '') return `r:${record.runId}`;
  return 'u:';
}

/**
 * Whether `newer` (later in its thread) revises `older` by the detection rule, on plain facts:
 * 1. `newer` carries a revision cue and is not a question; `older` is not a question;
 * 2. when both have event times, `newer`'s is not earlier;
 * 3. value change: both state slot values (dates, weekdays, times, amounts, quantities, e-mail addresses)
 *    and `newer` states one `older` does not; or, for a negation cue ("no longer"), `older` does not negate
 *    and states a topic token of the words the cue governs (`NEGATED_WORDS` words after it);
 * 4. same slot: they share topic tokens (content tokens minus cue words): at least 1 after a strong cue,
 *    2 after a weak or negation cue.
 */
export function revises(newer: SupersessionFacts, older: SupersessionFacts): boolean {
  if (newer.cue === undefined || newer.question || older.question) return false;
  if (newer.timeMs !== undefined && older.timeMs !== undefined && newer.timeMs < older.timeMs) return false;
  if (newer.cue === 'negation') {
    if (older.cue === 'negation') return false;
    // What is negated must be something the older memory states: "no longer works at Acme" revises "works at
    // Acme", while "it's no longer just about reliability" revises nothing (found as false positives in
    // conversational dev text, where the cue is common).
    let stated = false;
    for (const token of newer.negated) if (older.topic.has(token)) stated = true;
    if (!stated) return false;
  } else {
    if (newer.values.size === 0 || older.values.size === 0) return false;
    let added = false;
    for (const value of newer.values) if (!older.values.has(value)) added = true;
    if (!added) return false;
  }
  let shared = 0;
  for (const token of newer.topic) if (older.topic.has(token)) shared++;
  const needed = newer.cue === 'strong' ? SUPERSEDES_RULE.minSharedStrong : SUPERSEDES_RULE.minSharedWeak;
  return shared >= needed;
}

/**
 * The memory `newer` supersedes by detection, among `before` (the memories right before it in its thread,
 * NEAREST FIRST, at most SUPERSEDES_RULE.window read): the nearest one it revises. A memory with an explicit
 * `supersedes` list is never detected (its writer said what it replaces).
 */
export function detectedTarget(
  newer: SupersessionFacts,
  before: readonly SupersessionFacts[],
): string | undefined {
  if (newer.thread === undefined || newer.explicit.length > 0) return undefined;
  for (const older of before.slice(0, SUPERSEDES_RULE.window)) {
    if (older.thread === newer.thread && revises(newer, older)) return older.id;
  }
  return undefined;
}

/**
 * `supersedes`: a newer memory replaces an older one of the same context (a changed appointment, a
 * corrected amount). A pair is linked when
 * - explicit: one lists the other in `supersedes` (any thread), or
 * - detected: the older is the NEAREST of the 8 memories right before the newer in its thread, in
 *   (sequence, id) order, that the newer revises (`revises`), and the newer has no explicit list.
 * The edge is stored undirected like every relation; `supersessionOrder` (src/types/supersession.ts) says
 * which end is newer.
 */
export function supersedesPairs(records: readonly MemoryRecord[]): RecordPair[] {
  const out = new PairSet();
  // The context's ids, for explicit links only: built on the first record that has one (most archives have
  // none; at 1M memories the set was ~40 MB of the rebuild's peak).
  let ids: Set<string> | undefined;
  // Threads are walked one at a time, so only one thread's last `window` facts are alive: keeping them for
  // every thread at once was ~200 MB at 1M memories (42k sessions x 8 facts). Explicit pairs come first in
  // (sequence, id) order, then each thread's detections in order of its first memory: the same pairs in the
  // same order as a single pass keeping every thread's recent facts.
  const threads = new Map<string, MemoryRecord[]>();
  // A rebuild loads records in (sequence, id) order already: a sorted copy only when they are not.
  for (const record of inSequenceOrder(records)) {
    if (record.supersedes !== undefined && record.supersedes.length > 0) {
      ids ??= new Set(records.map((each) => each.id));
      for (const id of explicitSupersedes(record)) if (ids.has(id)) out.add(record.id, id);
    }
    const thread = supersessionThread(record);
    if (thread === undefined) continue;
    const members = threads.get(thread);
    if (members) members.push(record);
    else threads.set(thread, [record]);
  }
  // A memory's facts (tokens, slot values) are made only when a later memory with a revision cue compares
  // with it, or when it has one itself: most memories have no cue, and the facts were ~9 us a memory of a
  // bulk rebuild. A memory without a cue detects nothing (`revises` needs one), so the pairs are the same.
  for (const members of threads.values()) {
    const recent: LazyFacts[] = [];
    for (const record of members) {
      const entry: LazyFacts = { record };
      if (recent.length > 0 && revisionCue(record.text) !== undefined) {
        const before: SupersessionFacts[] = [];
        for (let at = recent.length - 1; at >= 0; at--) before.push(factsOf(recent[at]!));
        const facts = factsOf(entry);
        const target = detectedTarget(facts, before);
        if (target !== undefined) out.add(facts.id, target);
      }
      recent.push(entry);
      if (recent.length > SUPERSEDES_RULE.window) recent.shift();
    }
  }
  return out.pairs;
}

/** A memory of a thread's window and its facts once made. */
interface LazyFacts {
  record: MemoryRecord;
  facts?: SupersessionFacts;
}

function factsOf(entry: LazyFacts): SupersessionFacts {
  entry.facts ??= supersessionFacts(entry.record);
  return entry.facts;
}

function inSequenceOrder(records: readonly MemoryRecord[]): readonly MemoryRecord[] {
  for (let at = 1; at < records.length; at++) {
    if (compareBySequence(records[at - 1]!, records[at]!) > 0) return [...records].sort(compareBySequence);
  }
  return records;
}

/** Slot values stated in a text, normalised ("June 3" and "3rd of June" -> "3 jun", "Tues" -> "tue"). */
export function slotValues(text: string): Set<string> {
  const values = new Set<string>();
  for (const pattern of VALUE_PATTERNS) {
    for (const match of text.matchAll(pattern)) values.add(normalizeValue(match[0]));
  }
  return values;
}

function normalizeValue(value: string): string {
  const lower = value.toLowerCase().replace(/\s+/g, ' ').replace(/\.$/, '').trim();
  const dayMonth = /^(\d{1,2})(?:st|nd|rd|th)? (?:of )?([a-z]{3})/.exec(lower);
  if (dayMonth) return `${Number(dayMonth[1])} ${dayMonth[2]}`;
  const monthDay = /^([a-z]{3})[a-z]*\.? (\d{1,2})/.exec(lower);
  if (monthDay) return `${Number(monthDay[2])} ${monthDay[1]}`;
  const weekday = new RegExp(`^${WEEKDAY}$`).exec(lower);
  if (weekday) return `wd:${lower.slice(0, 3)}`;
  // "9:00 am" and "9am" are one time.
  return lower.replace(/\s|\./g, '').replace(/:00(?=am|pm)/, '');
}

function stringField(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

export { explicitSupersedes, supersessionOrder } from '../../types/supersession.ts';
