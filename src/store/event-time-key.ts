/** An ISO 8601 date-time with a numeric UTC offset (not `Z`): the part `eventTimeKey` rewrites. */
const WITH_OFFSET =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([+-])(\d{2}):?(\d{2})$/;

/**
 * The form of an event time that the store indexes and a time window compares (`from` / `to` filters): the
 * same instant in UTC when the value carries a numeric offset, in the same precision and with `Z`
 * ("2024-05-01T23:00:00-05:00" -> "2024-05-02T04:00:00Z"); anything else as given (a `Z` time, a date,
 * a local time without offset). Before round 52 the window compared the strings as written, so a mail dated
 * in its sender's offset fell on the wrong side of a UTC window by up to 14 hours. The record keeps the
 * time as written; only the index column and the window bounds use this form.
 */
export function eventTimeKey(value: string): string {
  const match = WITH_OFFSET.exec(value);
  if (!match) return value;
  const [, year, month, day, hour, minute, second, fraction, sign, offsetHours, offsetMinutes] = match;
  const offset = (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes));
  // Seconds are not shifted (an offset is whole minutes) and are printed as written (a leap second's 60 too).
  const utc = new Date(
    Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute) - offset),
  );
  // Years 0-99 would be read as 1900-1999 by Date.UTC: corrected, and a shift out of 0000-9999 is left alone.
  if (Number(year) < 100) utc.setUTCFullYear(utc.getUTCFullYear() - 1900);
  const shiftedYear = utc.getUTCFullYear();
  if (!Number.isFinite(utc.getTime()) || shiftedYear < 0 || shiftedYear > 9999) return value;
  const two = (n: number) => String(n).padStart(2, '0');
  const date = `${String(shiftedYear).padStart(4, '0')}-${two(utc.getUTCMonth() + 1)}-${two(utc.getUTCDate())}`;
  const time = `${two(utc.getUTCHours())}:${two(utc.getUTCMinutes())}`;
  return `${date}T${time}${second === undefined ? '' : `:${second}${fraction ?? ''}`}Z`;
}
