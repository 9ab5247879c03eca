import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { dictionaryKey } from '../../src/store/lexical-dictionary-key.ts';
import { plainArray } from '../../src/store/postgres/postgres-lexical-index.ts';
import { PG_SKIP, PG_URL } from './postgres-test-db.ts';

/** The lexical batch's array literals (postgres-lexical-index.ts): only where no element needs quoting. */
if (PG_SKIP) console.warn(`[postgres plain array round trip skipped] ${PG_SKIP}`);

const KEYS = ['apple', 'null value', 'x', 'Ü', '-', 'nullable'].map(dictionaryKey);

describe('plainArray', () => {
  it('writes integers and dictionary keys as one literal', () => {
    expect(plainArray([3, 0, -2])).toBe('{3,0,-2}');
    expect(plainArray([])).toBe('{}');
    expect(plainArray(KEYS)).toBe(`{${KEYS.join(',')}}`);
    expect(plainArray(['text', 'caption', 'a_b-9'])).toBe('{text,caption,a_b-9}');
  });

  it('leaves to the driver anything a literal would have to quote or would read otherwise', () => {
    for (const values of [
      ['NULL'],
      ['a', 'null'],
      ['nUlL'],
      ['a b'],
      ['a,b'],
      ['"'],
      ['{x}'],
      ['é'],
      [''],
      [1.5],
      [Number.NaN],
      [2 ** 60],
    ]) {
      expect(plainArray(values)).toBe(values);
    }
    expect(plainArray(['nullable', 'NULLS'])).toBe('{nullable,NULLS}');
  });

  it.skipIf(PG_SKIP !== undefined)('reads back in PostgreSQL as the same array', async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      const texts = [...KEYS, 'text', 'nullable', 'NULL', 'a b', ''];
      const ints = [0, 7, -3, 123456789];
      const { rows } = await client.query<{ t: string[]; i: number[] }>(
        'SELECT $1::text[] AS t, $2::integer[] AS i',
        [plainArray(texts), plainArray(ints)],
      );
      expect(rows[0]!.t).toEqual(texts);
      expect(rows[0]!.i).toEqual(ints);
      const plain = await client.query<{ t: string[] }>('SELECT $1::text[] AS t', [plainArray(KEYS)]);
      expect(plain.rows[0]!.t).toEqual(KEYS);
    } finally {
      await client.end();
    }
  });
});
