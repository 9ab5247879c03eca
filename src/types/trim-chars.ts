/**
 * Trimming by character class without a regex: `/[...]+$/` retries from every start position, so a long run
 * of the class that does not reach the end costs O(n^2) (100k characters took 47 s in an email subject).
 * These walk the ends once.
 */
export function trimEndChars(text: string, isTrimmed: (char: string) => boolean): string {
  let end = text.length;
  while (end > 0 && isTrimmed(text[end - 1]!)) end--;
  return end === text.length ? text : text.slice(0, end);
}

export function trimStartChars(text: string, isTrimmed: (char: string) => boolean): string {
  let start = 0;
  while (start < text.length && isTrimmed(text[start]!)) start++;
  return start === 0 ? text : text.slice(start);
}

/** A character in a set given as a string (`inSet('<>')('<')`), for the two trims above. */
export function inSet(chars: string): (char: string) => boolean {
  return (char) => chars.includes(char);
}

/** Characters `.` in a JavaScript regex does not match, besides '\n': a value holding one ended a `(.*)$` match. */
export const LINE_TERMINATOR = /[\r\u2028\u2029]/;
