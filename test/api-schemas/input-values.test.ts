import { describe, expect, it } from 'vitest';
import { countInputValues, MAX_INPUT_VALUES } from '../../src/api-schemas/input-values.ts';
import { parseInput } from '../../src/api-schemas/parse-input.ts';
import { addMemoriesSchema } from '../../src/api-schemas/route-schemas.ts';
import { MAX_LISTED_ISSUES, parseWithSchema } from '../../src/schemas/parse-with-schema.ts';

const withAssets = (assets: unknown[]) => ({ user_id: 'bob', memories: [{ id: 'a', text: 'x', assets }] });

describe('bounds on what one request may make the schema walk', () => {
  it('counts array items and object keys over the whole tree, stopping once over the bound', () => {
    expect(countInputValues({ a: 1, b: [1, 2, { c: null }] }, 100)).toBe(6);
    expect(countInputValues('text', 100)).toBe(0);
    expect(countInputValues(new Array(1000).fill([1, 2]), 50)).toBe(51);
  });

  it('refuses an input over MAX_INPUT_VALUES as TOO_LARGE before the schema runs', () => {
    expect(() => parseInput(addMemoriesSchema, withAssets(new Array(MAX_INPUT_VALUES).fill(0)))).toThrow(
      expect.objectContaining({ code: 'TOO_LARGE' }),
    );
    // Just under it the schema runs and names the first bad field; the details stay small.
    let error: unknown;
    try {
      parseInput(addMemoriesSchema, withAssets(new Array(MAX_INPUT_VALUES - 10).fill(0)));
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'INVALID_INPUT', location: { field: 'memories.0.assets.0' } });
    const details = (error as { details: { issues: unknown[]; moreIssues: number } }).details;
    expect(details.issues).toHaveLength(MAX_LISTED_ISSUES);
    expect(details.moreIssues).toBe(MAX_INPUT_VALUES - 10 - MAX_LISTED_ISSUES);
  });

  it('turns a schema walk that overflows the stack into TOO_LARGE (library callers have no value bound)', () => {
    // zod passes a nested array's issues to its parent as call arguments: 200k overflow them.
    expect(() => parseWithSchema(addMemoriesSchema, withAssets(new Array(200_000).fill(0)))).toThrow(
      expect.objectContaining({ code: 'TOO_LARGE' }),
    );
  });
});
