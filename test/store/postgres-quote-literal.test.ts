import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { quoteLiteral } from '../../src/store/postgres/postgres-transaction-sql.ts';

/** quoteLiteral (postgres-transaction-sql.ts) writes exactly the driver's pg.escapeLiteral text. */
describe('quoteLiteral', () => {
  it('equals pg.escapeLiteral on quotes, backslashes and any other character', () => {
    const samples = [
      '',
      'plain',
      "it's",
      "''",
      '\\',
      'a\\b',
      "\\'",
      "'\\''",
      "E'x'",
      '{"a":"b\\"c"}',
      '[["ji\\u00e9"],[0.5]]',
      'é😀\n\t\r',
    ];
    // Random strings over an alphabet heavy in the characters that matter.
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed;
    };
    const alphabet = ["'", '\\', '"', 'a', 'Z', ' ', ',', '{', '}', 'é', '\n', '\uD83D'];
    for (let i = 0; i < 500; i++) {
      const length = next() % 40;
      samples.push(Array.from({ length }, () => alphabet[next() % alphabet.length]).join(''));
    }
    for (const value of samples) expect(quoteLiteral(value)).toBe(pg.escapeLiteral(value));
  });
});
