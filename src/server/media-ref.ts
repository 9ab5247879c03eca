import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { MediaAsset, MemoryRecord } from '../types/memory-record.ts';

/**
 * A media asset as clients address it: `GET /v1/media/:asset_id?user_id=`. The id names a memory, one of
 * its assets and optionally a video frame (`base64url("<memory id>\n<asset id>\n<frame index or ''>")`):
 * the server looks the file up in the stored record, so a client never names a path.
 */
export interface MediaRef {
  memoryId: string;
  assetId: string;
  frame?: number;
}

/** Longest asset id accepted (memory ids are bounded by the record schema; this bounds the decode). */
export const MAX_MEDIA_REF_CHARS = 4096;

export function encodeMediaRef(ref: MediaRef): string {
  return Buffer.from(`${ref.memoryId}\n${ref.assetId}\n${ref.frame ?? ''}`, 'utf8').toString('base64url');
}

export function decodeMediaRef(value: string): MediaRef | undefined {
  if (value.length === 0 || value.length > MAX_MEDIA_REF_CHARS || !/^[A-Za-z0-9_-]+$/.test(value)) {
    return undefined;
  }
  const parts = Buffer.from(value, 'base64url').toString('utf8').split('\n');
  if (parts.length !== 3) return undefined;
  const [memoryId, assetId, frame] = parts as [string, string, string];
  if (memoryId === '' || assetId === '') return undefined;
  if (frame === '') return { memoryId, assetId };
  if (!/^\d{1,4}$/.test(frame)) return undefined;
  return { memoryId, assetId, frame: Number(frame) };
}

/** The stored file of a ref: the asset's uri or one of its frames; undefined when the record has none. */
export function mediaFileOf(
  record: MemoryRecord,
  ref: MediaRef,
): { asset: MediaAsset; uri: string; mime?: string } | undefined {
  const asset = record.assets.find((candidate) => candidate.id === ref.assetId);
  if (asset === undefined) return undefined;
  if (ref.frame !== undefined) {
    const uri = asset.frames?.[ref.frame];
    return uri === undefined ? undefined : { asset, uri };
  }
  if (asset.uri === undefined) return undefined;
  return { asset, uri: asset.uri, ...(asset.mime ? { mime: asset.mime } : {}) };
}

/** Every addressable media file of a record (assets with a uri, then each video frame), for listings. */
export function mediaRefsOf(
  record: MemoryRecord,
): { ref: MediaRef; kind: 'image' | 'frame' | 'video' | 'other' }[] {
  const out: { ref: MediaRef; kind: 'image' | 'frame' | 'video' | 'other' }[] = [];
  for (const asset of record.assets) {
    if (asset.uri !== undefined) {
      const kind = asset.kind === 'image' ? 'image' : asset.kind === 'video' ? 'video' : 'other';
      out.push({ ref: { memoryId: record.id, assetId: asset.id }, kind });
    }
    for (const [frame] of (asset.frames ?? []).entries()) {
      out.push({ ref: { memoryId: record.id, assetId: asset.id, frame }, kind: 'frame' });
    }
  }
  return out;
}

/**
 * Short-lived HMAC signatures for browser links: a media URL in the viewer page (`exp`, `sig` query
 * parameters) and the session cookie of the login form. The secret is random per server process, so every
 * link and session ends with the process; no API key ever appears in a URL.
 */
export class BrowserSigner {
  readonly #secret: Buffer;

  constructor(secret: Buffer = randomBytes(32)) {
    this.#secret = secret;
  }

  /** `exp` (unix seconds) and `sig` for GET /v1/media/<ref>?user_id=<user>. */
  signMedia(
    userId: string,
    ref: string,
    ttlSeconds: number,
    nowMs = Date.now(),
  ): { exp: number; sig: string } {
    const exp = Math.floor(nowMs / 1000) + ttlSeconds;
    return { exp, sig: this.#mac(`media\n${userId}\n${ref}\n${exp}`) };
  }

  verifyMedia(userId: string, ref: string, exp: string, sig: string, nowMs = Date.now()): boolean {
    if (!/^\d{1,12}$/.test(exp) || Number(exp) < Math.floor(nowMs / 1000)) return false;
    return this.#equal(sig, this.#mac(`media\n${userId}\n${ref}\n${exp}`));
  }

  /** A session token naming a key by its digest (never the key itself), valid `ttlSeconds`. */
  session(keyDigestHex: string, ttlSeconds: number, nowMs = Date.now()): string {
    const exp = Math.floor(nowMs / 1000) + ttlSeconds;
    return `${exp}.${keyDigestHex}.${this.#mac(`session\n${keyDigestHex}\n${exp}`)}`;
  }

  /** The key digest of a valid, unexpired session token. */
  verifySession(token: string, nowMs = Date.now()): string | undefined {
    const match = /^(\d{1,12})\.([0-9a-f]{64})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!match) return undefined;
    const [, exp, digest, sig] = match as unknown as [string, string, string, string];
    if (Number(exp) < Math.floor(nowMs / 1000)) return undefined;
    return this.#equal(sig, this.#mac(`session\n${digest}\n${exp}`)) ? digest : undefined;
  }

  #mac(payload: string): string {
    return createHmac('sha256', this.#secret).update(payload).digest('base64url');
  }

  #equal(given: string, expected: string): boolean {
    const a = Buffer.from(given);
    const b = Buffer.from(expected);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}
