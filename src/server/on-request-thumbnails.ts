import { httpError } from '../shell-kit/error-response.ts';

/** Thumbnails decoded on request at once (each up to the media limits' 100 megapixels); more answer BUSY. */
export const THUMBNAIL_DECODES_AT_ONCE = 2;
/** Bytes of made thumbnails kept for the next request of the same file (least recently used out first). */
export const THUMBNAIL_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * The thumbnails `GET /v1/media/:id?size=thumb` makes when the media digest stored none (an image kept as a
 * document, an older archive). Each one decodes the whole original: eight requests at once for a 9000 x 9000
 * PNG (250 KB on the wire) slowed every other media request from 58 ms to 1.7 s, sharing libuv's threads,
 * and nothing kept the result (round 52 audit). So at most THUMBNAIL_DECODES_AT_ONCE run at once (the rest
 * get BUSY, 503 with Retry-After, as other bounds), and a made thumbnail is kept by file identity (real
 * path, size, modification time) within THUMBNAIL_CACHE_BYTES, so asking again costs no decode.
 */
export class OnRequestThumbnails {
  private running = 0;
  private readonly cache = new Map<string, Uint8Array<ArrayBuffer>>();
  private cachedBytes = 0;

  constructor(
    private readonly decodesAtOnce = THUMBNAIL_DECODES_AT_ONCE,
    private readonly cacheBytes = THUMBNAIL_CACHE_BYTES,
  ) {}

  /** The thumbnail of the file `key` names, from the cache or made by `make` (undefined: none can be made). */
  async get(
    key: string,
    make: () => Promise<Uint8Array<ArrayBuffer> | undefined>,
  ): Promise<Uint8Array<ArrayBuffer> | undefined> {
    const kept = this.cache.get(key);
    if (kept !== undefined) {
      this.cache.delete(key);
      this.cache.set(key, kept); // most recently used last
      return kept;
    }
    if (this.running >= this.decodesAtOnce) {
      throw httpError('BUSY', 'thumbnails are being made for other requests; retry shortly', {
        retryAfterS: 1,
      });
    }
    this.running++;
    try {
      const made = await make();
      if (made !== undefined) this.keep(key, made);
      return made;
    } finally {
      this.running--;
    }
  }

  private keep(key: string, bytes: Uint8Array<ArrayBuffer>): void {
    if (bytes.byteLength > this.cacheBytes) return;
    const earlier = this.cache.get(key); // two requests that both missed made the same one
    if (earlier !== undefined) this.cachedBytes -= earlier.byteLength;
    this.cache.delete(key);
    this.cache.set(key, bytes);
    this.cachedBytes += bytes.byteLength;
    for (const [oldest, old] of this.cache) {
      if (this.cachedBytes <= this.cacheBytes) break;
      this.cache.delete(oldest);
      this.cachedBytes -= old.byteLength;
    }
  }
}
