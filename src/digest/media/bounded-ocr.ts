import type { OcrEngine } from '../../importers/ocr/tesseract-ocr.ts';

/**
 * One lazily started OCR engine shared by every digest of a Graphmemix, with a time bound per image: an
 * image that runs over `timeoutMs` gets '' and a failure, and the engine is terminated (tesseract cannot be
 * interrupted mid-image) and started afresh on the next image.
 */
export interface BoundedOcr {
  recognize(png: Buffer): Promise<string>;
  terminate(): Promise<void>;
}

export function createBoundedOcr(factory: () => OcrEngine, timeoutMs: number): BoundedOcr {
  let engine: OcrEngine | undefined;
  return {
    async recognize(png: Buffer): Promise<string> {
      engine ??= factory();
      const current = engine;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`OCR ran over ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        return await Promise.race([current.recognize(png), timeout]);
      } catch (error) {
        if (engine === current) engine = undefined;
        await current.terminate().catch(() => undefined);
        throw error;
      } finally {
        clearTimeout(timer);
      }
    },
    async terminate(): Promise<void> {
      const current = engine;
      engine = undefined;
      await current?.terminate();
    },
  };
}
