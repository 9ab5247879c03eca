import { describe, expect, it } from 'vitest';
import { calendarDay, extractDates, timestampMs } from '../../../src/digest/date-extraction.ts';

const days = (text: string, anchor?: string, dayFirst?: boolean): string[] =>
  extractDates(text, {
    ...(anchor === undefined ? {} : { anchor }),
    ...(dayFirst === undefined ? {} : { dayFirst }),
  }).map((item) => item.date);

describe('extractDates', () => {
  it('reads ISO and month-name forms, with and without a year', () => {
    expect(
      days('Call at 2024-05-07T10:00; party 9 May 2024; trip May 20th, 2024; 1st of June', '2024-04-01'),
    ).toEqual(['2024-05-07', '2024-05-09', '2024-05-20', '2024-06-01']);
  });

  it('drops year-less dates without an anchor and picks the year nearest the anchor', () => {
    expect(days('see you May 7')).toEqual([]);
    expect(days('see you Jan 3', '2024-12-20')).toEqual(['2025-01-03']);
    expect(days('that was Dec 30', '2024-01-05')).toEqual(['2023-12-30']);
  });

  it('applies the numeric ambiguity rule: >12 decides, else month-first for / and -, day-first for .', () => {
    expect(days('05/07/2024')).toEqual(['2024-05-07']);
    expect(days('05/07/2024', undefined, true)).toEqual(['2024-07-05']);
    expect(days('13/07/2024')).toEqual(['2024-07-13']);
    expect(days('07/13/2024', undefined, true)).toEqual(['2024-07-13']);
    expect(days('07.05.2024')).toEqual(['2024-05-07']);
    expect(days('3/4/24')).toEqual(['2024-03-04']);
    expect(days('version 1.2.34')).toEqual([]);
  });

  it('checks a stated weekday against the date', () => {
    expect(days('Tuesday, May 7, 2024')).toEqual(['2024-05-07']);
    expect(days('Friday, May 7, 2024')).toEqual([]);
    // 2024-05-07 is a Tuesday; a "Wednesday May 7" near 2025 resolves to 2025 (a Wednesday).
    expect(days('Wednesday May 7', '2025-03-01')).toEqual(['2025-05-07']);
  });

  it('resolves relative words only against an anchor, and never "next <weekday>"', () => {
    expect(days('see you tomorrow')).toEqual([]);
    expect(days('today, tomorrow, yesterday', '2024-05-07T22:00:00Z')).toEqual([
      '2024-05-07',
      '2024-05-08',
      '2024-05-06',
    ]);
    expect(days('this Friday works', '2024-05-07')).toEqual(['2024-05-10']);
    expect(days('next Friday works', '2024-05-07')).toEqual([]);
  });

  it('ignores the verb "may" and invalid days', () => {
    expect(days('you may 5 times; Feb 30 2024; 2024-13-01', '2024-01-01')).toEqual([]);
  });
});

describe('timestamps', () => {
  it('reads zone-less timestamps as UTC and keeps the written calendar day', () => {
    expect(timestampMs('2024-05-07T10:00:00')).toBe(Date.UTC(2024, 4, 7, 10));
    expect(timestampMs('2024-05-07T10:00:00+02:00')).toBe(Date.UTC(2024, 4, 7, 8));
    expect(calendarDay('2024-05-07T23:30:00-07:00')).toBe('2024-05-07');
    expect(timestampMs('yesterday')).toBeUndefined();
  });
});
