import { describe, expect, it } from 'vitest';
import {
  RECORD_GROUNDING_RULE,
  recordGroundingPairs,
} from '../../../src/digest/relations/record-grounding.ts';
import { makeEmail, makePhoto, pairKeys } from './make-record.ts';

describe('record_grounding', () => {
  const booking = makeEmail(
    'mail',
    '2024-04-20T08:00:00Z',
    'Your stay in Lisbon',
    'Check-in on May 7, 2024 at the Alfama guesthouse. Tram tour included.',
  );

  it('links an email to media captured on a stated date when the place name agrees', () => {
    const photo = makePhoto('photo', '2024-05-07T16:00:00', 38.71, -9.13, { place: 'Alfama, Lisbon' });
    expect(pairKeys(recordGroundingPairs([booking, photo]))).toEqual(['mail|photo']);
  });

  it('links when content agrees (2+ shared content tokens) without any location', () => {
    const photo = makePhoto('photo', '2024-05-07T16:00:00', undefined, undefined, {
      caption: 'A yellow tram climbing past the guesthouse',
    });
    expect(pairKeys(recordGroundingPairs([booking, photo]))).toEqual(['mail|photo']);
  });

  it('does not link on the date alone, or with one shared token', () => {
    const bare = makePhoto('bare', '2024-05-07T16:00:00', 52.5, 13.4, { place: 'Berlin' });
    const one = makePhoto('one', '2024-05-07T17:00:00', undefined, undefined, {
      caption: 'a tram in the rain',
    });
    expect(recordGroundingPairs([booking, bare, one])).toEqual([]);
  });

  it('does not link media from another day even when everything else agrees', () => {
    const photo = makePhoto('photo', '2024-05-08T16:00:00', 38.71, -9.13, { place: 'Alfama, Lisbon' });
    expect(recordGroundingPairs([booking, photo])).toEqual([]);
  });

  it('resolves relative dates against the sent date, and uses coordinates within 5 km', () => {
    const mail = makeEmail('mail', '2024-05-06T20:00:00Z', 'Plans', 'Meet at the pier tomorrow morning');
    mail.location = { lat: 38.7, lon: -9.14 };
    const near = makePhoto('near', '2024-05-07T09:00:00', 38.72, -9.14);
    const far = makePhoto('far', '2024-05-07T09:30:00', 38.9, -9.14);
    expect(pairKeys(recordGroundingPairs([mail, near, far]))).toEqual(['mail|near']);
  });

  it('caps the media linked to one email', () => {
    const photos = Array.from({ length: RECORD_GROUNDING_RULE.maxMediaPerEmail + 5 }, (_, i) =>
      makePhoto(`p${String(i).padStart(2, '0')}`, '2024-05-07T10:00:00', 38.71, -9.13, { place: 'Lisbon' }),
    );
    expect(recordGroundingPairs([booking, ...photos])).toHaveLength(RECORD_GROUNDING_RULE.maxMediaPerEmail);
  });
});
