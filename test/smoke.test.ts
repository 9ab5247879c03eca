import { describe, expect, it } from 'vitest';
import { GraphmemixError } from '../src/errors/index.ts';

describe('errors', () => {
  it('carries a stable code and names the location', () => {
    const error = new GraphmemixError('INVALID_INPUT', 'bad timestamp', {
      location: { file: 'a.jsonl', line: 3, field: 'timestamp' },
    });
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toContain('a.jsonl:3');
    expect(error.toJSON().location.field).toBe('timestamp');
  });
});
