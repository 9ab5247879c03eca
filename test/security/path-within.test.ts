import { describe, expect, it } from 'vitest';
import { isBelow, isWithin } from '../../src/types/path-within.ts';

describe('isWithin / isBelow (the one containment rule of the media checks)', () => {
  it('the root itself, children and names starting with two dots are within; parents and siblings are not', () => {
    expect(isWithin('/m', '/m')).toBe(true);
    expect(isWithin('/m', '/m/alice/p.png')).toBe(true);
    expect(isWithin('/m', '/m/..x')).toBe(true);
    expect(isWithin('/m', '/m/../etc/passwd')).toBe(false);
    expect(isWithin('/m', '/')).toBe(false);
    expect(isWithin('/m/alice', '/m/alice2/p.png')).toBe(false);
  });

  it('isBelow leaves out the root itself', () => {
    expect(isBelow('/m', '/m')).toBe(false);
    expect(isBelow('/m', '/m/a')).toBe(true);
    expect(isBelow('/m', '/n/a')).toBe(false);
  });
});
