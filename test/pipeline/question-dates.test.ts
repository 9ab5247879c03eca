import { describe, expect, it } from 'vitest';
import { needsDateReference, temporalExpansion } from '../../src/pipeline/question-dates.ts';

// Thursday 20 June 2024 is the reference everywhere below.
const reference = { latest: '2024-06-20T18:00:00Z', earliest: '2024-01-03T09:00:00Z' };
const terms = (question: string, ref: typeof reference | object = reference) =>
  temporalExpansion(question, ref)?.terms ?? [];

describe('temporalExpansion (question dates resolved against a fixed reference)', () => {
  it('resolves "last <weekday>" to the latest such day before the reference', () => {
    // Tuesday 18 June 2024; "tuesday" itself is in the question already.
    expect(terms('What did I buy last Tuesday?')).toEqual(['2024', '06', '18', 'june']);
    // "last Thursday" on a Thursday is a week back, 13 June.
    expect(terms('Where did I eat last Thursday?')).toEqual(['2024', '06', '13', 'june']);
  });

  it('resolves N days / weeks / months ago and last month / year', () => {
    expect(terms('What did we talk about three days ago?')).toEqual(['2024', '06', '17', 'june', 'monday']);
    expect(terms('What did I read 2 weeks ago?')).toEqual(['june', '2024']);
    expect(terms('Which film did I see a couple of months ago?')).toEqual(['april', '2024']);
    expect(terms('What happened last month?')).toEqual(['may', '2024']);
    expect(terms('Where did I travel last year?')).toEqual(['2023']);
    expect(terms('What did I say yesterday?')).toEqual(['2024', '06', '19', 'june', 'wednesday']);
  });

  it('resolves a bare month to the latest such month on or before the reference', () => {
    expect(terms('What did I cook in June?')).toEqual(['2024']);
    expect(terms('What did I plant in September?')).toEqual(['2023']);
    // "may" the verb is no month
    expect(terms('What may I have forgotten?')).toEqual([]);
  });

  it('gives a stated day its long form and weekday, without a reference', () => {
    expect(terms('What did Alex talk about on 2023-03-04?', {})).toEqual(['4', 'march', 'saturday']);
    expect(terms('What happened on June 17, 2024?', {})).toEqual(['06', 'monday']);
    // A month and day without a year take the reference's year.
    expect(terms('What happened on June 17?')).toEqual(['2024', '06', 'monday']);
  });

  it('skips range boundaries (after / before / between ... and)', () => {
    expect(terms('What did Alex discuss AFTER 2023-03-06?', {})).toEqual([]);
    expect(
      terms('Between 2023-03-01 and 2023-03-07, how many times did Alex discuss medication?', {}),
    ).toEqual([]);
  });

  it('resolves the first and the last session to the context dates', () => {
    expect(terms('What did I say in the first session?')).toEqual([
      '2024',
      '01',
      '03',
      '3',
      'january',
      'wednesday',
    ]);
    expect(terms('What did we agree in our last conversation?')).toEqual([
      '2024',
      '06',
      '20',
      'june',
      'thursday',
    ]);
  });

  it('resolves nothing relative without a reference, and says when one is needed', () => {
    expect(terms('What did I buy last Tuesday?', {})).toEqual([]);
    expect(needsDateReference('What did I buy last Tuesday?')).toBe(true);
    expect(needsDateReference('three days ago')).toBe(true);
    expect(needsDateReference('What did Alex talk about on 2023-03-04?')).toBe(false);
    expect(needsDateReference('What colour is the lamp?')).toBe(false);
  });

  it('is bounded on hostile input (100k characters, thousands of expressions)', () => {
    const question = 'last Tuesday 3 days ago in June on 2024-01-05 '.repeat(2_500);
    expect(question.length).toBeGreaterThan(100_000);
    const started = performance.now();
    const expansion = temporalExpansion(question, reference);
    expect(performance.now() - started).toBeLessThan(2_000);
    // at most MAX_QUESTION_DATES dates of at most 6 terms each
    expect(expansion!.terms.length).toBeLessThanOrEqual(36);
    expect(expansion!.weight).toBe(1);
  });
});

describe('temporalExpansion leaves alone', () => {
  it('dates in answer options and "the first conversation about" a topic', () => {
    const question = 'When did Alex see the snake?\n(A) 2023-10-29\n(B) 2023-10-19\nC. 2023-11-02';
    expect(temporalExpansion(question, reference)).toBeUndefined();
    expect(terms('How many days separate the first conversation about cats from the wrap-up?')).toEqual([]);
    expect(terms('When did Alex have his last conversation before the summary?')).toEqual([]);
  });
});
