import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventBridgePairs } from '../../../src/digest/relations/event-bridge.ts';
import { haversineKm } from '../../../src/digest/relations/haversine-km.ts';
import { makePhoto, makeRecord, pairKeys } from './make-record.ts';

/** Degrees of latitude for a north-south distance in km (mean Earth radius). */
const degreesFor = (km: number): number => (km / (6371.0088 * Math.PI)) * 180;
const at = (seconds: number): string =>
  new Date(Date.UTC(2024, 4, 7, 10, 0, 0) + seconds * 1000).toISOString();

describe('event_bridge', () => {
  it('links captures 1 minute to 1 hour apart: 59 s no, 61 s yes, 61 min no', () => {
    const base = makePhoto('base', at(0), 38.7, -9.1);
    expect(eventBridgePairs([base, makePhoto('p59', at(59), 38.7, -9.1)])).toEqual([]);
    expect(pairKeys(eventBridgePairs([base, makePhoto('p61', at(61), 38.7, -9.1)]))).toEqual(['base|p61']);
    expect(pairKeys(eventBridgePairs([base, makePhoto('p60m', at(3600), 38.7, -9.1)]))).toEqual([
      'base|p60m',
    ]);
    expect(eventBridgePairs([base, makePhoto('p61m', at(61 * 60), 38.7, -9.1)])).toEqual([]);
  });

  it('links within 5 km only: 4.9 km yes, 5.1 km no', () => {
    const base = makePhoto('base', at(0), 0, 0);
    const near = makePhoto('near', at(600), degreesFor(4.9), 0);
    const far = makePhoto('far', at(600), degreesFor(5.1), 0);
    expect(haversineKm(0, 0, degreesFor(4.9), 0)).toBeCloseTo(4.9, 6);
    expect(pairKeys(eventBridgePairs([base, near]))).toEqual(['base|near']);
    expect(eventBridgePairs([base, far])).toEqual([]);
  });

  it('needs coordinates and media: no location, or a text message, gives no link', () => {
    const base = makePhoto('base', at(0), 1, 1);
    expect(eventBridgePairs([base, makePhoto('nowhere', at(300))])).toEqual([]);
    expect(
      eventBridgePairs([base, makeRecord('msg', { timestamp: at(300), location: { lat: 1, lon: 1 } })]),
    ).toEqual([]);
  });

  it('reads EXIF time and GPS from an asset of a non-photo record', () => {
    const base = makePhoto('base', at(0), 1, 1);
    const note = makeRecord('note', {
      kind: 'note',
      assets: [{ id: 'img', kind: 'image', exif: { takenAt: at(120), lat: 1, lon: 1 } }],
    });
    expect(pairKeys(eventBridgePairs([base, note]))).toEqual(['base|note']);
  });

  it('keeps at most two neighbours per memory, nearest in time first (symmetric cap)', () => {
    // hub at t=0 with five partners at 2,3,4,5,6 minutes; partners are > 1 minute apart from each other too.
    const photos = [makePhoto('hub', at(0), 1, 1)];
    for (let m = 2; m <= 6; m++) photos.push(makePhoto(`p${m}`, at(m * 60 + m * 61), 1, 1));
    const pairs = eventBridgePairs(photos);
    const degree = new Map<string, number>();
    for (const [a, b] of pairs) for (const id of [a, b]) degree.set(id, (degree.get(id) ?? 0) + 1);
    for (const count of degree.values()) expect(count).toBeLessThanOrEqual(2);
    expect(pairKeys(pairs)).toContain('hub|p2');
  });

  it('never exceeds two neighbours and does not depend on input order (random bursts)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 7200 }), fc.integer({ min: 0, max: 3 })), {
          maxLength: 25,
        }),
        (items) => {
          const photos = items.map(([seconds, spot], i) => makePhoto(`p${i}`, at(seconds), spot * 0.03, 0));
          const pairs = eventBridgePairs(photos);
          const degree = new Map<string, number>();
          for (const [a, b] of pairs) for (const id of [a, b]) degree.set(id, (degree.get(id) ?? 0) + 1);
          expect(Math.max(0, ...degree.values())).toBeLessThanOrEqual(2);
          expect(pairKeys(eventBridgePairs([...photos].reverse()))).toEqual(pairKeys(pairs));
        },
      ),
      { numRuns: 100 },
    );
  });
});
