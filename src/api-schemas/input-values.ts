import { GraphmemixError } from '../errors/graphmemix-error.ts';

/**
 * Most JSON values (array items and object keys, counted over the whole tree) one request may hold. The
 * schema reports every bad value as an issue (~0.5 KB and ~10 us each), so without a bound one 16 MiB body of
 * 8M invalid array items took 81 s and 4.3 GB before failing (probe, 2026-12-01); and zod passes a nested
 * array's issues to its parent as call arguments, which overflows the stack from ~125k issues. A record with
 * text, time, speaker and a dozen metadata keys is ~20 values, so 1,000 of them (the most one add takes) fit.
 */
export const MAX_INPUT_VALUES = 50_000;

/** Array items and object keys of `value`, counted iteratively; stops once over `max` (returns max + 1). */
export function countInputValues(value: unknown, max: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    const children = Array.isArray(node) ? node : Object.values(node);
    count += children.length;
    if (count > max) return max + 1;
    for (const child of children) if (child !== null && typeof child === 'object') stack.push(child);
  }
  return count;
}

/** TOO_LARGE when a request's input holds more than MAX_INPUT_VALUES values; before any schema sees it. */
export function assertInputValues(value: unknown, max: number = MAX_INPUT_VALUES): void {
  if (countInputValues(value, max) > max) {
    throw new GraphmemixError(
      'TOO_LARGE',
      `request holds more than ${max} JSON values (array items and object keys); send fewer records per request`,
    );
  }
}
