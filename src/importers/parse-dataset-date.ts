import { MONTH_NAMES_LOWER } from '../types/calendar-names.ts';
/**
 * Reads the date strings of dialogue datasets into ISO 8601 local date-times (no offset: the datasets state
 * none). Returns undefined for anything it cannot read with certainty; callers keep the raw string in
 * metadata and warn, never guess.
 *
 * Accepted: ISO dates/date-times ("2024-06-17", "2024-06-17 14:05"), LoCoMo ("9:10 am on 3 March, 2024",
 * "3 March, 2024"), REALTALK ("29.12.2023, 22:42:04", day.month.year), and "March 3, 2024".
 */
export function parseDatasetDate(raw: string): string | undefined {
  const text = raw.trim().replace(/\s+/g, ' ');
  return isoForm(text) ?? locomoForm(text) ?? dottedForm(text) ?? monthFirstForm(text);
}

const MONTHS = MONTH_NAMES_LOWER;

function isoForm(text: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/.exec(text);
  if (!match) return undefined;
  return build(Number(match[1]), Number(match[2]), Number(match[3]), timeOf(match[4], match[5], match[6]));
}

function locomoForm(text: string): string | undefined {
  const match = /^(?:(\d{1,2}):(\d{2})(?::(\d{2}))? ?([ap])\.?m\.? on )?(\d{1,2}) ([a-z]+),? (\d{4})$/i.exec(
    text,
  );
  if (!match) return undefined;
  const month = monthNumber(match[6]!);
  if (month === undefined) return undefined;
  const time = match[1] === undefined ? undefined : twelveHour(match[1], match[2]!, match[3], match[4]!);
  if (match[1] !== undefined && time === undefined) return undefined;
  return build(Number(match[7]), month, Number(match[5]), time);
}

function dottedForm(text: string): string | undefined {
  const match = /^(\d{1,2})\.(\d{1,2})\.(\d{4}),? ?(?:(\d{1,2}):(\d{2})(?::(\d{2}))?)?$/.exec(text);
  if (!match) return undefined;
  return build(Number(match[3]), Number(match[2]), Number(match[1]), timeOf(match[4], match[5], match[6]));
}

function monthFirstForm(text: string): string | undefined {
  const match = /^([a-z]+) (\d{1,2}),? (\d{4})$/i.exec(text);
  if (!match) return undefined;
  const month = monthNumber(match[1]!);
  return month === undefined ? undefined : build(Number(match[3]), month, Number(match[2]), undefined);
}

function monthNumber(name: string): number | undefined {
  const lower = name.toLowerCase();
  const index = MONTHS.findIndex(
    (month) => month === lower || (lower.length >= 3 && month.startsWith(lower)),
  );
  return index === -1 ? undefined : index + 1;
}

interface Time {
  hour: number;
  minute: number;
  second: number | undefined;
}

function timeOf(hour?: string, minute?: string, second?: string): Time | undefined {
  if (hour === undefined || minute === undefined) return undefined;
  return {
    hour: Number(hour),
    minute: Number(minute),
    second: second === undefined ? undefined : Number(second),
  };
}

function twelveHour(
  hour: string,
  minute: string,
  second: string | undefined,
  half: string,
): Time | undefined {
  const value = Number(hour);
  if (value < 1 || value > 12) return undefined;
  const pm = half.toLowerCase() === 'p';
  return {
    hour: (value % 12) + (pm ? 12 : 0),
    minute: Number(minute),
    second: second === undefined ? undefined : Number(second),
  };
}

function build(year: number, month: number, day: number, time: Time | undefined): string | undefined {
  if (month < 1 || month > 12 || day < 1) return undefined;
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return undefined;
  const date = `${year}-${pad(month)}-${pad(day)}`;
  if (time === undefined) return date;
  if (time.hour > 23 || time.minute > 59 || (time.second ?? 0) > 59) return undefined;
  return `${date}T${pad(time.hour)}:${pad(time.minute)}:${pad(time.second ?? 0)}`;
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}
