import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Worker } from 'tesseract.js';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { loadOptionalPackage } from '../optional-package.ts';

/** Text recognition for images. One engine holds one worker; callers reuse it across images. */
export interface OcrEngine {
  /** Recognises the text of an encoded image (PNG/JPEG bytes). Returns cleaned text, '' when none. */
  recognize(image: Buffer): Promise<string>;
  /** Stops the worker thread. Safe to call twice, and before any `recognize`. */
  terminate(): Promise<void>;
}

export interface TesseractOcrOptions {
  /** Folder holding `eng.traineddata.gz`. Default: the LSTM-only data of `@tesseract.js-data/eng`. */
  langPath?: string;
}

/**
 * Offline OCR through tesseract.js 7 with the English model from `@tesseract.js-data/eng`. Nothing is
 * downloaded: `langPath` points at the package's local copy (tesseract.js would otherwise fetch from a CDN),
 * and `cacheMethod: 'none'` stops it writing `eng.traineddata` into the working directory.
 *
 * The worker starts lazily on the first image (about 1.5 s) and is reused for every later image.
 */
export function createTesseractOcr(options: TesseractOcrOptions = {}): OcrEngine {
  let worker: Promise<Worker> | undefined;
  let terminated = false;

  const getWorker = (): Promise<Worker> => {
    if (terminated) throw new GraphmemixError('INTERNAL', 'OCR engine used after terminate()');
    worker ??= loadOptionalPackage('tesseract.js', 'OCR').then(({ createWorker, OEM }) =>
      createWorker('eng', OEM.LSTM_ONLY, {
        langPath: options.langPath ?? defaultLangPath(),
        cacheMethod: 'none',
        gzip: true,
      }),
    );
    return worker;
  };

  return {
    async recognize(image: Buffer): Promise<string> {
      const ready = await getWorker();
      const result = await ready.recognize(image);
      return cleanOcrText(result.data.text);
    },
    async terminate(): Promise<void> {
      terminated = true;
      const running = worker;
      worker = undefined;
      if (running) await (await running).terminate();
    },
  };
}

/** Trims each line, collapses runs of spaces and drops empty lines; keeps line breaks (they carry layout). */
export function cleanOcrText(text: string): string {
  return text
    .split(/\r?\n/)
    .map((line) => line.replace(/[ \t\f\v]+/g, ' ').trim())
    .filter((line) => line !== '')
    .join('\n');
}

/**
 * The package's `langPath` is the full (legacy + LSTM) model; tesseract.js itself uses the smaller
 * `4.0.0_best_int` data for LSTM-only recognition, so prefer that sibling folder when it is installed.
 */
function defaultLangPath(): string {
  const require = createRequire(import.meta.url);
  let packaged: { langPath?: unknown };
  try {
    packaged = require('@tesseract.js-data/eng') as { langPath?: unknown };
  } catch (cause) {
    throw new GraphmemixError('CONFIG', 'OCR data package @tesseract.js-data/eng is not installed', {
      cause,
    });
  }
  if (typeof packaged.langPath !== 'string') {
    throw new GraphmemixError('CONFIG', '@tesseract.js-data/eng does not export a langPath');
  }
  const bestInt = join(dirname(packaged.langPath), '4.0.0_best_int');
  return existsSync(join(bestInt, 'eng.traineddata.gz')) ? bestInt : packaged.langPath;
}
