import { dateForms } from '../digest/build-views.ts';
import { calendarDay, extractDates } from '../digest/date-extraction.ts';
import { EXPANSION_INPUT_CHARS, type QueryExpansion } from '../retrieval/query-expansion.ts';
import { tokenize } from '../retrieval/tokenize.ts';
import { MONTH_NAMES_LOWER, WEEKDAY_NAMES_LOWER } from '../types/calendar-names.ts';

/**
 * Time expressions of a question resolved into the date forms the views carry (`dateForms`: the metadata
 * view holds "2024-06-17 17 June 2024 June 2024 2024 Monday", the text view "[17 June 2024] ..."), so that
 * "last Tuesday", "three days ago", "in June" or "on June 17" reach the memories of that day or month.
 *
 * Resolved, against `reference` (the question's own time when the caller gives it, else the context's
 * latest memory date):
 * - stated days (ISO, "June 17, 2024", "17 June", numeric) and today / yesterday / tomorrow / this <weekday>
 *   (src/digest/date-extraction.ts, the same rules as for mail text);
 * - "last <weekday>" / "on <weekday>" (the latest such day before / on or before the reference);
 * - "N days|weeks|months|years ago" (N a number or one..twelve, "a", "a couple of"); "last week|month|year";
 * - a bare month "in June" (the latest June on or before the reference);
 * - "the first|last session|conversation|chat" (the context's first / latest memory date, `earliest`).
 * A day gives its day, month name, year and weekday; a week, month or year gives the month (or year).
 * A stated day after "before / after / since / until / between" is a boundary, not the asked day: skipped.
 * Not resolved: expressions anchored on an event ("two weeks before my trip") and ordinal sessions.
 * Pure: no clock; the caller passes the reference.
 */
export interface DateReference {
  /** The question's time, or the context's latest memory time ('YYYY-MM-DD...'). */
  latest?: string;
  /** The context's first memory time, for "the first session". */
  earliest?: string;
}

/** At most this many resolved dates per question (each adds 3-4 terms). */
export const MAX_QUESTION_DATES = 6;

/** Weight of the resolved date terms against the question's own words (fitted on fold 0). */
export const TEMPORAL_EXPANSION_WEIGHT = 1;

/** True when resolving the question needs the context's dates (a relative expression or a bare month). */
export function needsDateReference(text: string): boolean {
  return RELATIVE_HINT.test(askedText(text));
}

/**
 * The part of the query that asks: option lines ("(A) 2023-09-12", "B. ...") are candidate answers, not the
 * time of the asked events, so their dates are left out.
 */
function askedText(text: string): string {
  return text
    .slice(0, EXPANSION_INPUT_CHARS)
    .split('\n')
    .filter((line) => !OPTION_LINE.test(line))
    .join('\n');
}

/** The date terms of a question (index form, not already in the question), or undefined when none. */
export function temporalExpansion(
  text: string,
  reference: DateReference = {},
  weight = TEMPORAL_EXPANSION_WEIGHT,
): QueryExpansion | undefined {
  const input = askedText(text);
  const latest = reference.latest === undefined ? undefined : calendarDay(reference.latest);
  const days: string[] = [];
  const months: string[] = [];
  const years: string[] = [];
  for (const found of extractDates(input, latest === undefined ? {} : { anchor: latest })) {
    if (!isBoundary(input, found.index)) days.push(found.date);
  }
  if (latest !== undefined) {
    const anchor = dayNumber(latest);
    for (const match of input.matchAll(WEEKDAY_PATTERN)) {
      const weekday = WEEKDAYS.indexOf(match[2]!.toLowerCase());
      const back = (weekdayOf(anchor) - weekday + 7) % 7;
      days.push(dayString(anchor - (match[1]!.toLowerCase() === 'last' && back === 0 ? 7 : back)));
    }
    for (const match of input.matchAll(AGO_PATTERN)) {
      const count = amount(match[1]!.toLowerCase());
      const unit = match[2]!.toLowerCase().replace(/s$/, '');
      if (count === undefined || count > 400) continue;
      if (unit === 'day') days.push(dayString(anchor - count));
      else if (unit === 'week') months.push(dayString(anchor - count * 7));
      else if (unit === 'month') months.push(shiftMonths(latest, -count));
      else years.push(String(Number(latest.slice(0, 4)) - count));
    }
    for (const match of input.matchAll(LAST_PATTERN)) {
      const unit = match[1]!.toLowerCase();
      if (unit === 'week') months.push(dayString(anchor - 7));
      else if (unit === 'month') months.push(shiftMonths(latest, -1));
      else years.push(String(Number(latest.slice(0, 4)) - 1));
    }
    for (const match of input.matchAll(BARE_MONTH_PATTERN)) {
      const word = match[1]!;
      if (word.toLowerCase() === 'may' && word !== 'May') continue;
      const month = MONTH_NAMES.findIndex((name) => name.startsWith(word.slice(0, 3).toLowerCase())) + 1;
      const year = Number(latest.slice(0, 4)) - (month > Number(latest.slice(5, 7)) ? 1 : 0);
      months.push(`${year}-${String(month).padStart(2, '0')}-01`);
    }
    for (const match of input.matchAll(SESSION_PATTERN)) {
      const which = match[1]!.toLowerCase();
      const day = which === 'first' ? reference.earliest && calendarDay(reference.earliest) : latest;
      if (day) days.push(day);
    }
  }
  const phrases: string[] = [];
  for (const day of unique(days)) {
    const [iso, long, , , weekday] = dateForms(day);
    phrases.push(`${iso} ${long} ${weekday}`);
  }
  for (const month of unique(months)) phrases.push(dateForms(month)[2]!);
  for (const year of unique(years)) phrases.push(year);
  const asked = new Set(tokenize(input));
  const terms: string[] = [];
  for (const phrase of phrases.slice(0, MAX_QUESTION_DATES)) {
    for (const term of tokenize(phrase)) {
      if (!asked.has(term) && !terms.includes(term)) terms.push(term);
    }
  }
  return terms.length === 0 ? undefined : { source: 'temporal', terms, weight };
}

/** A date right after "before / after / since / until / till / between ... and" bounds a range. */
function isBoundary(text: string, index: number): boolean {
  const before = text.slice(Math.max(0, index - 40), index).toLowerCase();
  return (
    /\b(?:before|after|since|until|till|prior to|between)\s+(?:the\s+)?$/.test(before) ||
    /\bbetween\b[^.?!]*\band\s+$/.test(before)
  );
}

function amount(word: string): number | undefined {
  if (/^\d+$/.test(word)) return Number(word);
  if (word === 'a' || word === 'an' || word === 'one') return 1;
  if (word.startsWith('a couple')) return 2;
  const index = NUMBER_WORDS.indexOf(word);
  return index < 0 ? undefined : index + 2;
}

function shiftMonths(day: string, by: number): string {
  const total = Number(day.slice(0, 4)) * 12 + Number(day.slice(5, 7)) - 1 + by;
  return `${Math.floor(total / 12)}-${String((total % 12) + 1).padStart(2, '0')}-01`;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

const DAY_MS = 86_400_000;
function dayNumber(day: string): number {
  return Math.round(Date.parse(`${day}T00:00:00Z`) / DAY_MS);
}
function dayString(days: number): string {
  return new Date(days * DAY_MS).toISOString().slice(0, 10);
}
function weekdayOf(days: number): number {
  return new Date(days * DAY_MS).getUTCDay();
}

const WEEKDAYS = WEEKDAY_NAMES_LOWER;
const MONTH_NAMES = MONTH_NAMES_LOWER;
const NUMBER_WORDS = [
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
];
const WEEKDAY_PATTERN = /\b(last|on|past)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/gi;
const AGO_PATTERN =
  /\b(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of)\s+(days?|weeks?|months?|years?)\s+ago\b/gi;
const LAST_PATTERN = /\b(?:last|past|previous)\s+(week|month|year)\b/gi;
// A month name without a day after it ("in June", "during March 2023" is left to the stated forms).
const BARE_MONTH_PATTERN =
  /\b(?:in|during|of|since|early|late|mid)[\s-]+(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\b(?!\s*\d)/gi;
// "the first conversation ABOUT x" is the first on a topic, not the first session: only a bare session counts.
const SESSION_PATTERN =
  /\b(first|last|latest|most recent)\s+(?:session|conversation|chat)\b(?!\s+(?:about|on|regarding|where|when|in which|that|which|with|before|after|of|between|from)\b)/gi;
const OPTION_LINE = /^\s*(?:\(?[A-Ha-h]\)|[A-H][.:])\s/;
const RELATIVE_HINT = new RegExp(
  [
    WEEKDAY_PATTERN.source,
    AGO_PATTERN.source,
    LAST_PATTERN.source,
    BARE_MONTH_PATTERN.source,
    SESSION_PATTERN.source,
    String.raw`\b(?:today|tonight|tomorrow|yesterday|this\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b`,
    // a month and day without a year needs the reference's year
    String.raw`\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b(?!,?\s*\d{4})`,
    String.raw`\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\b(?!,?\s*\d{4})`,
  ].join('|'),
  'i',
);
