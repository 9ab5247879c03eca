import { describe, expect, it } from 'vitest';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import { candidateSnippet } from '../../src/verify/candidate-snippet.ts';
import { cleanOcr } from '../../src/verify/clean-ocr.ts';

describe('cleanOcr', () => {
  it('drops unreadable lines and near-duplicates, prefers question terms then numbers', () => {
    const raw = [
      '~ |',
      '#### @@ a',
      'WELCOME TO THE MUSEUM',
      'Welcome to the museum!',
      'Open daily',
      'Ticket price 12 EUR',
      'Dinosaur hall',
    ].join('\n');
    const out = cleanOcr(raw, 'Which hall had the dinosaur?', 200);
    expect(out.split(' | ')).toEqual([
      'Dinosaur hall',
      'Ticket price 12 EUR',
      'WELCOME TO THE MUSEUM',
      'Open daily',
    ]);
  });

  it('cuts at the budget', () => {
    const out = cleanOcr('a very long line of readable text here\nanother readable line', 'q', 20);
    expect(out.length).toBeLessThanOrEqual(20);
    expect(out.endsWith('…')).toBe(true);
  });

  it('returns empty for empty input or budget', () => {
    expect(cleanOcr('', 'q', 100)).toBe('');
    expect(cleanOcr('Readable text', 'q', 0)).toBe('');
  });
});

describe('candidateSnippet', () => {
  const record = (text: string, ocr?: string): MemoryRecord => ({
    id: 'm1',
    contextId: 'c',
    kind: 'photo',
    sequence: 1,
    text,
    location: { name: 'Lisbon' },
    assets: [
      { id: 'a1', kind: 'image', derived: { captions: ['A tram on a hill'], ...(ocr ? { ocr } : {}) } },
    ],
  });

  it('keeps text, captions, OCR (<= 120) and location within 420 characters', () => {
    const snippet = candidateSnippet(
      record('x'.repeat(1000), `Tram 28 timetable ${'y'.repeat(300)}\nLine 28 to Prazeres`),
      'tram 28',
    );
    expect(snippet.length).toBeLessThanOrEqual(420);
    expect(snippet).toContain('Location: Lisbon');
    const ocr = /OCR: (.*) Location:/.exec(snippet)![1]!;
    expect(ocr.length).toBeLessThanOrEqual(120);
  });

  it('orders text, caption, location when short', () => {
    expect(candidateSnippet(record('Trip photo'), 'tram')).toBe(
      'Trip photo [caption] A tram on a hill Location: Lisbon',
    );
  });
});
