/**
 * Dates stated in free text (emails), for `same_record` event-date categories and `record_grounding`.
 * Conservative by design: a missed date costs one edge, a wrong date links unrelated memories.
 *
 * Recognised forms (all resolved to a calendar day 'YYYY-MM-DD'; invalid days such as Feb 30 are dropped):
 * - ISO: 2024-05-07, 2024/05/07 (a time part after it is ignored).
 * - Month name: "May 7", "May 7th", "May 7, 2024", "7 May 2024", "7th of May"; full or 3-letter names,
 *   "Sept" too. The bare word "may" only counts when capitalised ("May"/"MAY"), so "you may 5" is no date.
 * - Numeric with a 4- or 2-digit year: "05/07/2024", "5-7-24", "07.05.2024". Ambiguity rule: a first number
 *   over 12 means day-first, a second over 12 means month-first; when both are <= 12 the order is
 *   month-first (US) for '/' and '-', day-first for '.' (the European dotted form); `dayFirst: true` flips
 *   the default for '/' and '-'.
 * - A weekday before a date ("Tuesday, May 7") must agree with it: with a stated year a disagreeing weekday
 *   drops the date; with an inferred year the nearest year (to the anchor) where the weekday agrees wins.
 * - Without a year, the year comes from the anchor: the candidate (anchor year -1, 0, +1) nearest the anchor.
 *   Without an anchor such dates are dropped.
 * - Relative words only with an anchor: today, tonight, tomorrow, yesterday, "this <weekday>" (the first
 *   such day on or after the anchor). "next <weekday>" is not extracted: it means the coming day to some
 *   writers and the day of next week to others.
 */
export interface ExtractedDate {
  /** Calendar day 'YYYY-MM-DD'. */
  date: string;
  /** The matched text. */
  text: string;
  /** Offset of the match in the input. */
  index: number;
  form: 'iso' | 'month-name' | 'numeric' | 'relative';
}

export interface DateExtractionOptions {
  /** The text's own date (an email's sent time): resolves missing years and relative words. */
  anchor?: string;
  /** Read ambiguous slash/dash numeric dates day-first (05/07/2024 = 5 July). Default false. */
  dayFirst?: boolean;
}

/** Every date stated in `text`, in order of appearance, without duplicates of the same day. */
export function extractDates(text: string, options: DateExtractionOptions = {}): ExtractedDate[] {
  const anchorDay = options.anchor === undefined ? undefined : calendarDay(options.anchor);
  const anchor = anchorDay === undefined ? undefined : dayNumber(anchorDay);
  const found: ExtractedDate[] = [];
  const taken: Array<[number, number]> = [];
  const add = (match: RegExpExecArray, date: string | undefined, form: ExtractedDate['form']): void => {
    const start = match.index;
    const end = start + match[0].length;
    if (taken.some(([s, e]) => start < e && end > s)) return;
    taken.push([start, end]);
    if (date !== undefined) found.push({ date, text: match[0].trim(), index: start, form });
  };

  for (const match of text.matchAll(ISO_PATTERN)) {
    add(match, validDay(Number(match[1]), Number(match[2]), Number(match[3])), 'iso');
  }
  for (const match of text.matchAll(MONTH_FIRST_PATTERN)) {
    const [, weekday, monthWord, day, year] = match;
    if (!isMonthWord(monthWord ?? '')) continue;
    add(match, resolveNamed(monthWord ?? '', Number(day), year, weekday, anchor), 'month-name');
  }
  for (const match of text.matchAll(DAY_FIRST_PATTERN)) {
    const [, weekday, day, monthWord, year] = match;
    if (!isMonthWord(monthWord ?? '')) continue;
    add(match, resolveNamed(monthWord ?? '', Number(day), year, weekday, anchor), 'month-name');
  }
  for (const match of text.matchAll(NUMERIC_PATTERN)) {
    add(match, resolveNumeric(match, options.dayFirst === true), 'numeric');
  }
  if (anchor !== undefined) {
    for (const match of text.matchAll(RELATIVE_PATTERN)) {
      add(match, resolveRelative(match[0].toLowerCase(), anchor), 'relative');
    }
  }

  found.sort((x, y) => x.index - y.index);
  const seen = new Set<string>();
  return found.filter((item) => {
    if (seen.has(item.date)) return false;
    seen.add(item.date);
    return true;
  });
}

/**
 * The calendar day of an ISO timestamp as written (no time-zone conversion: a photo taken at 23:30 local time
 * belongs to that local day). Undefined when the string does not start with a valid date.
 */
export function calendarDay(timestamp: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(timestamp.trim());
  if (!match) return undefined;
  return validDay(Number(match[1]), Number(match[2]), Number(match[3]));
}

/**
 * Milliseconds of an ISO timestamp. A timestamp without a zone is read as UTC so that two zone-less
 * timestamps compare by their written clock time on any machine.
 */
export function timestampMs(timestamp: string): number | undefined {
  const value = timestamp.trim();
  if (!/^\d{4}-\d{2}-\d{2}/.test(value)) return undefined;
  const hasZone = /(?:[zZ]|[+-]\d{2}:?\d{2})$/.test(value) || value.length === 10;
  const ms = Date.parse(hasZone ? value : `${value}Z`);
  return Number.isNaN(ms) ? undefined : ms;
}

const MONTHS: Record<string, number> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const DAY_MS = 86_400_000;

const MONTH = String.raw`(Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?`;
const WEEKDAY = String.raw`(?:(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*\.?,?\s+(?:the\s+)?)?`;
const ORDINAL = String.raw`(\d{1,2})(?:st|nd|rd|th)?`;
// The ISO form may carry a time ("2024-05-07T10:00"), so it ends at a non-digit rather than a word boundary.
const ISO_PATTERN = /\b(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?!\d)/g;
const MONTH_FIRST_PATTERN = new RegExp(
  String.raw`\b${WEEKDAY}${MONTH}\s+${ORDINAL}\b(?:,?\s+(\d{4})\b)?`,
  'gi',
);
const DAY_FIRST_PATTERN = new RegExp(
  String.raw`\b${WEEKDAY}${ORDINAL}\s+(?:of\s+)?${MONTH}(?:,?\s+(\d{4})\b)?`,
  'gi',
);
// Two-digit years only with '/': "1.2.34" is more often a version number than a date.
const NUMERIC_PATTERN = /\b(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|(?<=\/\d{1,2}\/)\d{2})\b/g;
const RELATIVE_PATTERN =
  /\b(?:today|tonight|tomorrow|yesterday|this\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b/gi;

function isMonthWord(word: string): boolean {
  // "may" the verb is common; only the capitalised month counts.
  return word.toLowerCase() !== 'may' || word === 'May' || word === 'MAY';
}

function resolveNamed(
  monthWord: string,
  day: number,
  yearText: string | undefined,
  weekdayText: string | undefined,
  anchor: number | undefined,
): string | undefined {
  const month = MONTHS[monthWord.slice(0, 3).toLowerCase()];
  if (month === undefined) return undefined;
  const weekday = weekdayText === undefined ? undefined : weekdayIndex(weekdayText);
  if (yearText !== undefined) {
    const date = validDay(Number(yearText), month, day);
    if (date === undefined) return undefined;
    return weekday === undefined || weekdayOf(date) === weekday ? date : undefined;
  }
  if (anchor === undefined) return undefined;
  const anchorYear = new Date(anchor * DAY_MS).getUTCFullYear();
  const candidates = [anchorYear - 1, anchorYear, anchorYear + 1]
    .map((year) => validDay(year, month, day))
    .filter((date): date is string => date !== undefined)
    .filter((date) => weekday === undefined || weekdayOf(date) === weekday)
    .sort((x, y) => Math.abs(dayNumber(x) - anchor) - Math.abs(dayNumber(y) - anchor));
  return candidates[0];
}

function resolveNumeric(match: RegExpExecArray, dayFirst: boolean): string | undefined {
  const first = Number(match[1]);
  const separator = match[2];
  const second = Number(match[3]);
  const yearText = match[4] ?? '';
  const year = yearText.length === 2 ? 2000 + Number(yearText) : Number(yearText);
  let readDayFirst = separator === '.' ? true : dayFirst;
  if (first > 12) readDayFirst = true;
  else if (second > 12) readDayFirst = false;
  return readDayFirst ? validDay(year, second, first) : validDay(year, first, second);
}

function resolveRelative(word: string, anchor: number): string | undefined {
  if (word === 'today' || word === 'tonight') return dayString(anchor);
  if (word === 'tomorrow') return dayString(anchor + 1);
  if (word === 'yesterday') return dayString(anchor - 1);
  const weekday = weekdayIndex(word.replace(/^this\s+/, ''));
  if (weekday === undefined) return undefined;
  const anchorWeekday = new Date(anchor * DAY_MS).getUTCDay();
  return dayString(anchor + ((weekday - anchorWeekday + 7) % 7));
}

function weekdayIndex(text: string): number | undefined {
  const prefix = text.toLowerCase().slice(0, 3);
  const index = WEEKDAYS.findIndex((name) => name.startsWith(prefix));
  return index < 0 ? undefined : index;
}

function weekdayOf(date: string): number {
  return new Date(dayNumber(date) * DAY_MS).getUTCDay();
}

function validDay(year: number, month: number, day: number): string | undefined {
  if (!Number.isInteger(year) || year < 1900 || year > 2200) return undefined;
  if (month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCMonth() !== month - 1) return undefined;
  return date.toISOString().slice(0, 10);
}

/** Days since 1970-01-01 of a 'YYYY-MM-DD' string. */
function dayNumber(date: string): number {
  return Math.round(Date.parse(`${date}T00:00:00Z`) / DAY_MS);
}

function dayString(days: number): string {
  return new Date(days * DAY_MS).toISOString().slice(0, 10);
}
