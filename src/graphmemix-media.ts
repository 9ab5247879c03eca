import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OpenGraphmemixOptions } from './graphmemix-options.ts';
import type { OcrEngine } from './importers/ocr/tesseract-ocr.ts';

/** Where digest outputs go without a media folder: beside a file archive, else a per-process temp folder. */
export function derivedFolderFor(options: OpenGraphmemixOptions): string {
  const inMemory =
    options.db === ':memory:' || options.db.startsWith('memory:') || options.store !== undefined;
  return inMemory ? join(tmpdir(), `graphmemix-derived-${process.pid}`) : `${options.db}.media`;
}

/** The tesseract OCR engine factory, loading tesseract.js only when the first image is read. */
export function lazyTesseract(): () => OcrEngine {
  return () => {
    let engine: Promise<OcrEngine> | undefined;
    const get = () => {
      engine ??= import('./importers/ocr/tesseract-ocr.ts').then((m) => m.createTesseractOcr());
      return engine;
    };
    return {
      recognize: async (image: Buffer) => (await get()).recognize(image),
      terminate: async () => {
        if (engine) await (await engine).terminate();
      },
    };
  };
}
