import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { RetryTimers } from '../../src/digest/retry-timers.ts';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  vi.useRealTimers();
});

it('plans one retry per delay in turn, counts failures until a success, then none', () => {
  const timers = new RetryTimers([10, 100]);
  const ran: string[] = [];
  const first = new Date('2026-01-01T00:00:00.000Z');
  expect(timers.failed('ann', () => ran.push('ann'), true, first)).toEqual({
    attempts: 1,
    since: first.toISOString(),
    delayMs: 10,
  });
  vi.advanceTimersByTime(9);
  expect(ran).toEqual([]);
  vi.advanceTimersByTime(1);
  expect(ran).toEqual(['ann']);
  expect(timers.planned()).toBe(0);
  const second = timers.failed('ann', () => ran.push('ann'), true, new Date('2026-01-01T00:00:05.000Z'));
  expect(second).toEqual({ attempts: 2, since: first.toISOString(), delayMs: 100 });
  vi.advanceTimersByTime(100);
  expect(ran).toEqual(['ann', 'ann']);
  // The delays are spent: counted, nothing planned.
  expect(timers.failed('ann', () => ran.push('ann'), true)).toMatchObject({ attempts: 3 });
  expect(timers.planned()).toBe(0);
  expect(timers.reset('ann')).toBe(true);
  expect(timers.reset('ann')).toBe(false);
  expect(timers.failed('ann', () => ran.push('ann'), true)).toMatchObject({ attempts: 1, delayMs: 10 });
  expect(timers.planned()).toBe(1);
});

it('plans nothing when told not to; cancel and clear drop planned retries', () => {
  const timers = new RetryTimers([10]);
  const ran: string[] = [];
  expect(timers.failed('ann', () => ran.push('ann'), false)).toEqual(
    expect.not.objectContaining({ delayMs: expect.anything() }),
  );
  expect(timers.planned()).toBe(0);
  timers.failed('bob', () => ran.push('bob'), true);
  timers.failed('cy', () => ran.push('cy'), true);
  expect(timers.cancel('bob')).toBe(true);
  expect(timers.cancel('bob')).toBe(false);
  expect(timers.planned()).toBe(1);
  timers.clear();
  vi.advanceTimersByTime(1_000);
  expect(ran).toEqual([]);
});
