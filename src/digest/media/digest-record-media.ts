import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { readExif } from '../../importers/exif/read-exif.ts';
import type { ChatModel } from '../../providers/model-spec.ts';
import { RECORD_LIMITS } from '../../schemas/record-limits.ts';
import { documentPartId } from '../../types/document-parts.ts';
import type { MediaAsset, MemoryRecord } from '../../types/memory-record.ts';
import { inSet, trimEndChars } from '../../types/trim-chars.ts';
import type { BoundedOcr } from './bounded-ocr.ts';
import { ocrReadyPng, readImageHeader, storeFrameStrip, storeThumbnail } from './image-tools.ts';
import type { MediaLimits } from './media-limits.ts';
import { readPdf, renderPdfPage } from './read-pdf.ts';
import { extractFrames, frameTimes, probeVideo } from './read-video.ts';

/** The one prompt sent with each image when a vision model is configured. */
export const PHOTO_CAPTION_PROMPT =
  'Describe this photo in one or two factual sentences for a personal memory archive: the scene, ' +
  'objects, people (without guessing identities) and any clearly readable text. No preamble.';

export interface MediaDigestDeps {
  /** OCR of images, frames and page images; absent: no OCR (`ocr: false`). */
  ocr?: BoundedOcr;
  /** Vision chat model for image captions; absent offline. */
  vision?: ChatModel;
  /** Where frames and page images are written (`<dir>/<folder of the context>/derived/<sha256>/`). */
  derivedDir: string;
  limits: MediaLimits;
  /**
   * @internal When the record's digest must stop (`performance.now()` ms): set by digestRecordMedia from
   * limits.recordTimeoutMs and checked between steps (an asset, a frame, a page), each bounded on its own.
   */
  deadline?: number;
}

export interface MediaDigestOutcome {
  record: MemoryRecord;
  /** Parts that failed but left the record usable (a caption call, one frame's OCR). */
  warnings: string[];
  /** Set when the media itself could not be read (malformed, too large, tool missing): status `failed`. */
  error?: string;
  /**
   * New memories the digest made from the record: the pages of a PDF, one memory each, in order
   * (src/types/document-parts.ts). Ingest writes them with the record, in the same batch.
   */
  parts?: MemoryRecord[];
}

/** True when the record has a local media file (absolute path) the digest can read. */
export function hasLocalMedia(record: MemoryRecord): boolean {
  return record.assets.some((asset) => isLocal(asset.uri) && digestKind(asset) !== undefined);
}

/**
 * The one media digest (every way media arrives: importers, JSONL/bundle assets, HTTP and MCP uploads, the
 * library): for each local asset
 * - image: EXIF time/place (record timestamp/location when the record has none), OCR, a caption when a
 *   vision model is configured;
 * - video (ffprobe/ffmpeg): duration, creation time, location, `limits.videoFrames` uniformly sampled frames
 *   (times kept) with OCR per frame;
 * - PDF (poppler-utils): title/author/date in `metadata.document`, one part memory per page (`parts`):
 *   its text, or for a page without a text layer the rendered page image with OCR.
 * Fields a source already gave (OCR, captions, frames, EXIF) are kept, never recomputed. Bounded by
 * MediaLimits. Never throws: what fails is a warning, or `error` when the media cannot be read at all.
 */
export async function digestRecordMedia(
  input: MemoryRecord,
  deps: MediaDigestDeps,
): Promise<MediaDigestOutcome> {
  const record: MemoryRecord = structuredClone(input);
  // Each step has its own bound (a tool run, an OCR call), but a record may hold many assets, frames and
  // pages: the record's limit stops it between steps.
  const bounded: MediaDigestDeps = { ...deps, deadline: performance.now() + deps.limits.recordTimeoutMs };
  const warnings: string[] = [];
  const errors: string[] = [];
  const parts: MemoryRecord[] = [];
  for (const asset of record.assets) {
    // Thumbnails are the digest's own files: whatever a source wrote there is never served.
    delete asset.thumbnail;
    const kind = digestKind(asset);
    if (kind === undefined || !isLocal(asset.uri)) continue;
    try {
      checkDeadline(bounded, 'this asset');
      if (kind === 'image') await digestImage(record, asset, bounded, warnings);
      else if (kind === 'video') await digestVideo(record, asset, bounded, warnings);
      else if (parts.length === 0)
        for (const part of await digestPdf(record, asset, bounded, warnings)) parts.push(part);
      else warnings.push(`asset ${asset.id}: a second PDF in one record is not split into pages`);
    } catch (error) {
      // The file's folder stays on the server: clients read media.error (GET /v1/memories/:id).
      errors.push(`asset ${asset.id}: ${messageOf(error).split(asset.uri).join(basename(asset.uri))}`);
    }
  }
  const outcome: MediaDigestOutcome = { record, warnings };
  if (parts.length > 0) outcome.parts = parts;
  if (errors.length > 0) outcome.error = errors.join('; ').slice(0, 2000);
  return outcome;
}

/** Throws INVALID_INPUT once the record's digest is past its limit (the asset in progress fails). */
function checkDeadline(deps: MediaDigestDeps, next: string): void {
  if (deps.deadline !== undefined && performance.now() > deps.deadline) {
    throw new GraphmemixError(
      'INVALID_INPUT',
      `the media digest ran over its limit of ${deps.limits.recordTimeoutMs} ms per record (${next} not read)`,
    );
  }
}

function digestKind(asset: MediaAsset): 'image' | 'video' | 'pdf' | undefined {
  if (asset.kind === 'image') return 'image';
  if (asset.kind === 'video') return 'video';
  if (asset.kind === 'document' && (asset.mime === 'application/pdf' || /\.pdf$/i.test(asset.uri ?? ''))) {
    return 'pdf';
  }
  return undefined;
}

function isLocal(uri: string | undefined): uri is string {
  return uri !== undefined && isAbsolute(uri) && !uri.includes('\0');
}

async function checkedSize(path: string, max: number): Promise<number> {
  const info = await stat(path);
  if (!info.isFile()) throw new Error('not a regular file');
  if (info.size > max) throw new Error(`${info.size} bytes, over the limit of ${max}`);
  return info.size;
}

async function digestImage(
  record: MemoryRecord,
  asset: MediaAsset,
  deps: MediaDigestDeps,
  warnings: string[],
): Promise<void> {
  const path = asset.uri!;
  await checkedSize(path, deps.limits.maxImageBytes);
  const bytes = await readFile(path);
  // Pixel bound and format before anything else reads the bytes (image-tools.ts).
  await readImageHeader(bytes, deps.limits);
  if (asset.exif === undefined) {
    const exif = await readExif(bytes);
    for (const warning of exif.warnings) warnings.push(`asset ${asset.id}: ${warning}`);
    if (exif.exif) asset.exif = exif.exif;
  }
  if (record.timestamp === undefined && asset.exif?.takenAt !== undefined)
    record.timestamp = asset.exif.takenAt;
  const { lat, lon } = asset.exif ?? {};
  if (record.location === undefined && lat !== undefined && lon !== undefined) record.location = { lat, lon };
  if (deps.ocr && asset.derived?.ocr === undefined) {
    try {
      const text = await deps.ocr.recognize(await ocrReadyPng(bytes, deps.limits));
      if (text !== '') asset.derived = { ...asset.derived, ocr: text };
    } catch (error) {
      warnings.push(`asset ${asset.id}: OCR failed: ${messageOf(error)}`);
    }
  }
  try {
    const sha256 = asset.sha256 ?? createHash('sha256').update(bytes).digest('hex');
    const dir = await derivedFolder(deps.derivedDir, record.contextId, path, sha256);
    const thumbnail = await storeThumbnail(async () => bytes, join(dir, 'thumb.jpg'), deps.limits);
    if (thumbnail !== undefined) asset.thumbnail = thumbnail;
  } catch (error) {
    warnings.push(`asset ${asset.id}: thumbnail failed: ${messageOf(error)}`);
  }
  if (deps.vision && (asset.derived?.captions ?? []).length === 0) {
    try {
      const reply = await deps.vision.chat({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', uri: path, ...(asset.mime ? { mime: asset.mime } : {}) },
              { type: 'text', text: PHOTO_CAPTION_PROMPT },
            ],
          },
        ],
        temperature: 0,
        maxTokens: 200,
      });
      const caption = reply.text.trim();
      if (caption === '') warnings.push(`asset ${asset.id}: the vision model returned an empty caption`);
      else asset.derived = { ...asset.derived, captions: [caption] };
    } catch (error) {
      warnings.push(`asset ${asset.id}: caption failed: ${messageOf(error)}`);
    }
  }
}

async function digestVideo(
  record: MemoryRecord,
  asset: MediaAsset,
  deps: MediaDigestDeps,
  warnings: string[],
): Promise<void> {
  const path = asset.uri!;
  await checkedSize(path, deps.limits.maxFileBytes);
  const facts = await probeVideo(path, deps.limits);
  // The image rule for frames too: ffmpeg allocates whole decoded frames before scaling them down, so a
  // small file declaring huge frames would otherwise cost gigabytes per sampled frame.
  const pixels = (facts.width ?? 0) * (facts.height ?? 0);
  if (pixels > deps.limits.maxImagePixels) {
    throw new GraphmemixError(
      'INVALID_INPUT',
      `the video's frames are ${facts.width} x ${facts.height} pixels, over the pixel limit of ${deps.limits.maxImagePixels}`,
    );
  }
  if (facts.durationSeconds !== undefined) asset.durationSeconds = facts.durationSeconds;
  if (record.timestamp === undefined && facts.createdAt !== undefined) record.timestamp = facts.createdAt;
  if (record.location === undefined && facts.lat !== undefined && facts.lon !== undefined) {
    record.location = { lat: facts.lat, lon: facts.lon };
  }
  const dir = await derivedFolder(deps.derivedDir, record.contextId, path, asset.sha256);
  if (asset.frames === undefined) await sampleFrames(asset, facts.durationSeconds, dir, deps, warnings);
  // frames the source extracted are kept as given; the strip is made from whichever frames the asset has
  const local = (asset.frames ?? []).filter((frame) => isLocal(frame));
  if (local.length === 0) return;
  try {
    const strip = await storeFrameStrip(local, join(dir, 'strip.jpg'), deps.limits);
    if (strip !== undefined) asset.thumbnail = strip;
  } catch (error) {
    warnings.push(`asset ${asset.id}: frame strip failed: ${messageOf(error)}`);
  }
}

/** `limits.videoFrames` uniformly sampled frames (times kept) with OCR per frame and the video's OCR view. */
async function sampleFrames(
  asset: MediaAsset,
  durationSeconds: number | undefined,
  dir: string,
  deps: MediaDigestDeps,
  warnings: string[],
): Promise<void> {
  const path = asset.uri!;
  const frames = await extractFrames(
    path,
    frameTimes(durationSeconds, deps.limits.videoFrames),
    dir,
    deps.limits,
    (time) => checkDeadline(deps, `the frame at ${time} s`),
  );
  asset.frames = frames.map((frame) => frame.path);
  asset.frameTimes = frames.map((frame) => frame.time);
  if (!deps.ocr) return;
  const texts: string[] = [];
  for (const frame of frames) {
    checkDeadline(deps, `OCR of the frame at ${frame.time} s`);
    try {
      texts.push(await deps.ocr.recognize(await ocrReadyPng(await readFile(frame.path), deps.limits)));
    } catch (error) {
      texts.push('');
      warnings.push(`asset ${asset.id}: OCR of the frame at ${frame.time} s failed: ${messageOf(error)}`);
    }
  }
  if (texts.some((text) => text !== '')) asset.frameText = texts;
  // The distinct frame texts are also the video's OCR view: BM25 statistics are per view kind, and a few
  // near-identical frame views give their words almost no IDF, while the OCR field of the whole context does.
  const distinct = [...new Set(texts.filter((text) => text !== ''))];
  if (distinct.length > 0 && asset.derived?.ocr === undefined) {
    asset.derived = { ...asset.derived, ocr: distinct.join('\n') };
  }
}

/**
 * A PDF: title/author/date and the page count on the record (`metadata.document`, the date as `timestamp`,
 * the title as its text when it has none), and one part per page (src/types/document-parts.ts): the page's
 * text, or for a page without a text layer its rendered image (`page` asset, OCR'd, thumbnail stored).
 * A text-less page past limits.maxPdfImagePages is left out (warned); the parts stay numbered in order.
 */
async function digestPdf(
  record: MemoryRecord,
  asset: MediaAsset,
  deps: MediaDigestDeps,
  warnings: string[],
): Promise<MemoryRecord[]> {
  const path = asset.uri!;
  await checkedSize(path, deps.limits.maxFileBytes);
  const pdf = await readPdf(path, deps.limits);
  if (pdf.truncatedPages > 0)
    warnings.push(`asset ${asset.id}: ${pdf.truncatedPages} pages past the limit not read`);
  const previous = record.metadata?.document;
  const document: Record<string, unknown> = {
    ...(typeof previous === 'object' && previous !== null ? previous : {}),
    pages: pdf.pages,
  };
  if (pdf.title) document.title = pdf.title;
  if (pdf.author) document.author = pdf.author;
  if (pdf.createdAt) document.createdAt = pdf.createdAt;
  if (record.timestamp === undefined && pdf.createdAt !== undefined) record.timestamp = pdf.createdAt;
  if (record.text.trim() === '') {
    record.text = [pdf.title, pdf.author ? `by ${pdf.author}` : undefined].filter(Boolean).join('\n');
  }
  const blank = pdf.pageText.flatMap((text, i) => (text.trim() === '' ? [i + 1] : []));
  if (blank.length > deps.limits.maxPdfImagePages) {
    warnings.push(
      `asset ${asset.id}: ${blank.length - deps.limits.maxPdfImagePages} pages without text not rendered`,
    );
  }
  const rendered = new Set(blank.slice(0, deps.limits.maxPdfImagePages));
  const dir = await derivedFolder(deps.derivedDir, record.contextId, path, asset.sha256);
  const parts: MemoryRecord[] = [];
  for (const [i, pageText] of pdf.pageText.entries()) {
    const page = i + 1;
    const assets: MediaAsset[] = [];
    if (pageText.trim() === '') {
      if (!rendered.has(page)) continue;
      checkDeadline(deps, `page ${page}`);
      try {
        const image = await renderPdfPage(path, page, dir, deps.limits);
        if (image === undefined) continue;
        const pageAsset: MediaAsset = { id: 'page', kind: 'image', uri: image, mime: 'image/png' };
        const bytes = await readFile(image);
        if (deps.ocr) {
          const text = await deps.ocr.recognize(await ocrReadyPng(bytes, deps.limits));
          if (text !== '') pageAsset.derived = { ocr: text };
        }
        const thumb = join(dirname(image), `page-${page}.thumb.jpg`);
        const thumbnail = await storeThumbnail(async () => bytes, thumb, deps.limits);
        if (thumbnail !== undefined) pageAsset.thumbnail = thumbnail;
        assets.push(pageAsset);
      } catch (error) {
        warnings.push(`asset ${asset.id}: page ${page} could not be rendered or read: ${messageOf(error)}`);
        continue;
      }
    }
    const number = parts.length + 1;
    const meta: Record<string, unknown> = { of: record.id, part: number, page };
    if (pdf.title) meta.title = pdf.title;
    const part: MemoryRecord = {
      id: documentPartId(record.id, number),
      contextId: record.contextId,
      kind: 'document',
      sequence: record.sequence,
      sourceId: `${record.sourceId ?? record.id} p.${page}`,
      text: fitBytes(pageText, RECORD_LIMITS.maxTextBytes, warnings),
      assets,
      metadata: { document: meta },
    };
    for (const field of ['timestamp', 'sessionId', 'agentId', 'runId'] as const) {
      if (record[field] !== undefined) part[field] = record[field];
    }
    parts.push(part);
  }
  document.parts = parts.length;
  record.metadata = { ...record.metadata, document };
  return parts;
}

/** Cuts text to `max` UTF-8 bytes on a character boundary (warns when it cuts). */
export function fitBytes(text: string, max: number, warnings: string[]): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  warnings.push(`document text cut to ${max} bytes (record text limit)`);
  // The cut character's replacement marks, by a walk (`/\uFFFD+$/` is quadratic on a run of them).
  return trimEndChars(bytes.subarray(0, max).toString('utf8'), inSet('\uFFFD'));
}

/** `<dir>/<context folder>/derived/<sha256 of the file>`: re-digesting the same file reuses its folder. */
async function derivedFolder(dir: string, contextId: string, path: string, sha256?: string): Promise<string> {
  const plain = /^[A-Za-z0-9._-]{1,100}$/.test(contextId) && contextId !== '.' && contextId !== '..';
  const folder = plain
    ? contextId
    : `ctx-${createHash('sha256').update(contextId).digest('hex').slice(0, 16)}`;
  const key =
    sha256 ??
    createHash('sha256')
      .update(await readFile(path))
      .digest('hex');
  return join(dir, folder, 'derived', key.slice(0, 32));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
