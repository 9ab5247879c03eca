import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { memoryRecordInputSchema, toMemoryRecord } from '../../src/schemas/record-schema.ts';

const defaults = { contextId: 'ctx', sequence: 7 };

describe('toMemoryRecord', () => {
  it('fills defaults and forces the caller context', () => {
    const result = toMemoryRecord({ id: 'm1', text: 'hello', contextId: 'other' }, defaults);
    expect(result).toEqual({
      ok: true,
      record: { id: 'm1', contextId: 'ctx', kind: 'note', sequence: 7, text: 'hello', assets: [] },
    });
  });

  it('takes the real dates the calendar checks once refused or let through', () => {
    for (const timestamp of [
      '0000-02-29',
      '2024-02-29',
      '2024-05-01T10:00:00+14:00',
      '2024-05-01T10:00:00-0930',
    ]) {
      expect(toMemoryRecord({ id: 'x', text: 'a', timestamp }, defaults).ok, timestamp).toBe(true);
    }
  });

  it('keeps given fields and infers kinds', () => {
    const msg = toMemoryRecord({ id: 'm', text: 'hi', speaker: 'Ann', sequence: 3 }, defaults);
    expect(msg.ok && msg.record.kind).toBe('message');
    expect(msg.ok && msg.record.sequence).toBe(3);
    const photo = toMemoryRecord({ id: 'p', assets: [{ kind: 'image', uri: '/a.jpg' }] }, defaults);
    expect(photo.ok && photo.record.kind).toBe('photo');
    expect(photo.ok && photo.record.assets[0]?.id).toBe('asset-0');
  });

  it.each([
    [{ id: 'x', text: 'a', timestamp: '2024-13-01' }, 'timestamp'],
    [{ id: 'x', text: 'a', timestamp: '2024-02-30' }, 'timestamp'],
    [{ id: 'x', text: 'a', timestamp: 'yesterday' }, 'timestamp'],
    // Round 52: an offset out of range and a leap second were taken, and read as no date downstream.
    [{ id: 'x', text: 'a', timestamp: '2024-05-01T10:00:00+99:99' }, 'timestamp'],
    [{ id: 'x', text: 'a', timestamp: '2024-05-01T10:00:00-15:00' }, 'timestamp'],
    [{ id: 'x', text: 'a', timestamp: '2016-12-31T23:59:60Z' }, 'timestamp'],
    [{ id: 'x', text: 'a', timestamp: '0001-02-29' }, 'timestamp'],
    [{ id: 'x', text: 42 }, 'text'],
    [{ id: '', text: 'a' }, 'id'],
    [{ text: 'a' }, 'id'],
    [{ id: 'x', text: 'a', kind: 'tweet' }, 'kind'],
    [{ id: 'x', text: 'a', timestmap: '2024-01-01' }, 'timestmap'],
    [{ id: 'x', assets: [{ kind: 'image' }, { kind: 'bogus' }] }, 'assets.1.kind'],
    [
      {
        id: 'x',
        assets: [
          { id: 'a', kind: 'image' },
          { id: 'a', kind: 'image' },
        ],
      },
      'assets.1.id',
    ],
    [{ id: 'x', text: '  ' }, 'text'],
    [{ id: 'x', text: 'a', location: { lat: 200 } }, 'location.lat'],
    [{ id: 'x', text: 'a', assets: [{ kind: 'image', exif: { takenAt: 'nope' } }] }, 'assets.0.exif.takenAt'],
    ['not an object', '(record)'],
  ])('rejects %j naming field %s', (input, field) => {
    const result = toMemoryRecord(input, defaults);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.field).toBe(field);
  });

  it('accepts ISO date-time forms', () => {
    for (const timestamp of [
      '2024-06-03',
      '2024-06-03T14:05',
      '2024-06-03T14:05:09.123Z',
      '2024-06-03T14:05:00+02:00',
    ]) {
      expect(toMemoryRecord({ id: 'x', text: 'a', timestamp }, defaults).ok).toBe(true);
    }
  });

  it('exports a schema that converts to JSON Schema', () => {
    const schema = z.toJSONSchema(memoryRecordInputSchema) as { required?: string[] };
    expect(schema.required).toEqual(['id']);
  });
});
