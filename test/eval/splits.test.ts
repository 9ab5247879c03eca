import { describe, expect, it } from 'vitest';
import { heldoutOrderKey, questionFold, selectSplit } from '../../src/eval/splits.ts';

describe('question splits', () => {
  it('matches folds computed independently (Python hashlib) for known ids', () => {
    expect(questionFold('q1')).toBe(1);
    expect(questionFold('Baking:q7')).toBe(4);
    expect(questionFold('conv-26:qa:3')).toBe(3);
    expect(heldoutOrderKey('q1').slice(0, 16)).toBe('3f95ca92303cae82');
    expect(heldoutOrderKey('conv-26:qa:3').slice(0, 16)).toBe('5685066df94df909');
  });

  it('partitions questions into dev (fold 0) and held-out, roughly 1:4', () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `question-${i}`);
    const dev = selectSplit(ids, 'dev', (id) => id);
    const heldout = selectSplit(ids, 'heldout', (id) => id);
    expect(dev.length + heldout.length).toBe(ids.length);
    expect(new Set([...dev, ...heldout]).size).toBe(ids.length);
    expect(dev.length / ids.length).toBeGreaterThan(0.15);
    expect(dev.length / ids.length).toBeLessThan(0.25);
    for (const id of dev) expect(questionFold(id)).toBe(0);
  });

  it('heldout100 takes the first 100 held-out ids by the salted hash, independent of input order', () => {
    const ids = Array.from({ length: 600 }, (_, i) => `q-${i}`);
    const first = selectSplit(ids, 'heldout100', (id) => id);
    const second = selectSplit([...ids].reverse(), 'heldout100', (id) => id);
    expect(first).toHaveLength(100);
    expect(second).toEqual(first);
    const keys = first.map(heldoutOrderKey);
    expect([...keys].sort()).toEqual(keys);
    for (const id of first) expect(questionFold(id)).not.toBe(0);
  });
});
