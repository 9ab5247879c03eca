import { describe, expect, it } from 'vitest';
import { OnRequestThumbnails } from '../../src/server/on-request-thumbnails.ts';

const bytes = (n: number) => new Uint8Array(new ArrayBuffer(n));

describe('thumbnails made on request', () => {
  it('makes at most N at once (BUSY past it) and none again for a file it made', async () => {
    const thumbnails = new OnRequestThumbnails(2, 1024);
    let made = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = async () => {
      made++;
      await gate;
      return bytes(10);
    };
    const first = thumbnails.get('a', slow);
    const second = thumbnails.get('b', slow);
    await expect(thumbnails.get('c', slow)).rejects.toMatchObject({ code: 'BUSY' });
    release();
    await Promise.all([first, second]);
    expect(made).toBe(2);
    expect(await thumbnails.get('a', slow)).toHaveLength(10);
    expect(made).toBe(2);
    // A failed make frees its slot.
    await expect(thumbnails.get('d', () => Promise.reject(new Error('corrupt')))).rejects.toThrow('corrupt');
    expect(await thumbnails.get('e', async () => bytes(3))).toHaveLength(3);
  });

  it('keeps made thumbnails within its byte budget, least recently used out first', async () => {
    const thumbnails = new OnRequestThumbnails(2, 100);
    let made = 0;
    const make = (n: number) => async () => {
      made++;
      return bytes(n);
    };
    await thumbnails.get('a', make(40));
    await thumbnails.get('b', make(40));
    await thumbnails.get('a', make(40)); // a used again: b is the oldest now
    await thumbnails.get('c', make(40)); // 120 > 100: b goes
    expect(made).toBe(3);
    await thumbnails.get('a', make(40));
    expect(made).toBe(3);
    await thumbnails.get('b', make(40));
    expect(made).toBe(4);
    await thumbnails.get('huge', make(500)); // over the whole budget: served, not kept
    await thumbnails.get('huge', make(500));
    expect(made).toBe(6);
  });
});
