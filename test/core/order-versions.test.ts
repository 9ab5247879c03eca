import { describe, expect, it } from 'vitest';
import { orderVersions } from '../../src/core/order-versions.ts';

describe('orderVersions', () => {
  it('reads the versions of a fact oldest first, at the place of the first one', () => {
    // The current version ranked first (highest prize), its older version third.
    expect(orderVersions(['new', 'x', 'old', 'y'], [{ older: 'old', newer: 'new' }])).toEqual([
      'old',
      'new',
      'x',
      'y',
    ]);
  });

  it('orders chains and keeps everything else in place', () => {
    const links = [
      { older: 'v1', newer: 'v2' },
      { older: 'v2', newer: 'v3' },
    ];
    expect(orderVersions(['a', 'v3', 'b', 'v1', 'v2'], links)).toEqual(['a', 'v1', 'v2', 'v3', 'b']);
    expect(orderVersions(['a', 'b'], links)).toEqual(['a', 'b']);
  });

  it('ignores links to memories outside the order, and survives a cycle', () => {
    expect(orderVersions(['n', 'a'], [{ older: 'gone', newer: 'n' }])).toEqual(['n', 'a']);
    const cycle = [
      { older: 'p', newer: 'q' },
      { older: 'q', newer: 'p' },
    ];
    expect(orderVersions(['q', 'z', 'p'], cycle)).toEqual(['q', 'p', 'z']);
  });
});
