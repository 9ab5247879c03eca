import { describe, expect, it } from 'vitest';
import { extractReferenceCodes, normalizeSubject } from '../../../src/digest/relations/email-facts.ts';
import { sameRecordPairs } from '../../../src/digest/relations/same-record.ts';
import { makeEmail, makeRecord, pairKeys } from './make-record.ts';

describe('normalizeSubject', () => {
  it('strips any run of Re:/Fwd:/[tag] prefixes, case and spacing', () => {
    expect(normalizeSubject('Re: FWD: [team]  Dinner  plans ')).toBe('dinner plans');
    expect(normalizeSubject('AW: Re[2]: Dinner plans!')).toBe('dinner plans');
    expect(normalizeSubject('Dinner: plans')).toBe('dinner: plans');
  });
});

describe('extractReferenceCodes', () => {
  it('finds explicit reference, order, booking and ticket numbers', () => {
    expect(extractReferenceCodes('Ref: ABC-123 and Order #55821, booking ref XK92QP')).toEqual([
      'ABC-123',
      '55821',
      'XK92QP',
    ]);
    expect(extractReferenceCodes('Your confirmation number is ZX7781.')).toEqual(['ZX7781']);
  });

  it('ignores codes without a digit, short codes and bare years', () => {
    expect(extractReferenceCodes('order soon; ticket 12; booking in 2024; reference ABCDEF')).toEqual([]);
  });
});

describe('same_record', () => {
  it('links replies through In-Reply-To / References and siblings of one parent', () => {
    const records = [
      makeEmail('root', '2024-05-01T09:00:00Z', 'Quarterly plan', 'hello', { messageId: '<r@x>' }),
      makeEmail('reply', '2024-05-02T09:00:00Z', 'Something else', 'ok', {
        messageId: '<a@x>',
        inReplyTo: '<R@x>',
      }),
      makeEmail('deep', '2024-06-30T09:00:00Z', 'Another', 'fine', { references: ['<r@x>', '<a@x>'] }),
      makeEmail('sibling', '2024-05-03T09:00:00Z', 'Other words', 'no', { inReplyTo: 'r@x' }),
    ];
    expect(pairKeys(sameRecordPairs(records))).toEqual([
      'deep|reply',
      'deep|root',
      'reply|root',
      'reply|sibling',
      'root|sibling',
    ]);
  });

  it('links emails sharing an explicit reference number, whatever their subjects and dates', () => {
    const records = [
      makeEmail('order', '2024-01-01T09:00:00Z', 'Thanks for your purchase', 'Order #77812 received'),
      makeEmail('ship', '2024-03-01T09:00:00Z', 'Shipped!', 'Your order 77812 is on its way'),
      makeEmail('other', '2024-01-02T09:00:00Z', 'Thanks for your purchase', 'Order #99001 received'),
    ];
    const pairs = pairKeys(sameRecordPairs(records));
    expect(pairs).toContain('order|ship');
    expect(pairs).not.toContain('other|ship');
  });

  it('links Re:/Fwd: subjects within 14 days, not beyond', () => {
    const records = [
      makeEmail('a', '2024-05-01T09:00:00Z', 'Garden party planning'),
      makeEmail('b', '2024-05-10T09:00:00Z', 'Re: Garden party planning'),
      makeEmail('c', '2024-05-29T09:00:00Z', 'Fwd: [family] Garden party planning'),
    ];
    expect(pairKeys(sameRecordPairs(records))).toEqual(['a|b']);
  });

  it('does not link one-word subjects by subject alone', () => {
    const records = [
      makeEmail('a', '2024-05-01T09:00:00Z', 'Hello'),
      makeEmail('b', '2024-05-02T09:00:00Z', 'Re: hello'),
    ];
    expect(sameRecordPairs(records)).toEqual([]);
  });

  it('does not link same subjects whose stated event dates conflict', () => {
    const records = [
      makeEmail('w1', '2024-05-01T09:00:00Z', 'Team dinner', 'Team dinner on May 7 at 7pm'),
      makeEmail('w2', '2024-05-08T09:00:00Z', 'Team dinner', 'Team dinner on May 14 at 7pm'),
    ];
    expect(sameRecordPairs(records)).toEqual([]);
  });

  it('links an event-date category: same stated day and agreeing subject stems, far apart in time', () => {
    const records = [
      makeEmail('invite', '2024-03-01T09:00:00Z', 'Dinner at Nopa', 'Table for four on 2024-05-07.'),
      makeEmail('remind', '2024-05-06T09:00:00Z', 'Reminder: Nopa dinner tomorrow', 'See you there'),
      makeEmail('unrelated', '2024-05-06T10:00:00Z', 'Dentist appointment', 'Your visit is tomorrow'),
    ];
    expect(pairKeys(sameRecordPairs(records))).toEqual(['invite|remind']);
  });

  it('only considers emails', () => {
    const records = [
      makeEmail('mail', '2024-05-01T09:00:00Z', 'Order update', 'Order #55123'),
      makeRecord('chat', { text: 'Order #55123', timestamp: '2024-05-01T09:00:00Z' }),
    ];
    expect(sameRecordPairs(records)).toEqual([]);
  });
});
