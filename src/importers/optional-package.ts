import { GraphmemixError } from '../errors/graphmemix-error.ts';

/**
 * The heavy media packages (and usearch, the approximate vector index) are optional dependencies: a text-only install (`npm install --omit=optional`)
 * has none of them, and nothing loads them until a photo, mail or OCR step runs. Every use goes through
 * this one loader so a missing package is a clear CONFIG error naming it, never a module-resolution stack.
 */
interface OptionalPackages {
  sharp: typeof import('sharp');
  'tesseract.js': typeof import('tesseract.js');
  mailparser: typeof import('mailparser');
  // exifr's typings describe its CommonJS export; Node's ES namespace has it as `default` (parse is all we use).
  exifr: { default: { parse: typeof import('exifr')['parse'] } };
  // The persistent approximate vector index (src/store/usearch-vector-index.ts): a native addon.
  usearch: UsearchModule;
}

/**
 * The part of usearch's API the vector index uses, declared here so type-checking needs no package (npm
 * leaves it out on Node < 22: its engines field; scripts/install-usearch.sh).
 */
export interface UsearchModule {
  Index: new (config: {
    dimensions: number;
    metric: 'cos';
    quantization: 'f32';
    connectivity: number;
    expansion_add: number;
    expansion_search: number;
    multi: boolean;
  }) => UsearchIndex;
}

export interface UsearchIndex {
  add(keys: BigUint64Array, vectors: Float32Array, threads?: number): void;
  search(vector: Float32Array, k: number, threads: number): { keys: BigUint64Array; distances: Float32Array };
  contains(key: bigint): boolean;
  remove(key: bigint): number;
  size(): number;
  save(path: string): void;
  load(path: string): void;
  /** Memory-maps a saved index (read-only). */
  view(path: string): void;
}

export type OptionalPackageName = keyof OptionalPackages;
export type OptionalPackage<Name extends OptionalPackageName> = OptionalPackages[Name];

const OPTIONAL_PACKAGES: { [Name in OptionalPackageName]: () => Promise<OptionalPackages[Name]> } = {
  sharp: () => import('sharp'),
  'tesseract.js': () => import('tesseract.js'),
  mailparser: () => import('mailparser'),
  exifr: async () => {
    const { default: exifr } = await import('exifr');
    return { default: { parse: exifr.parse.bind(exifr) } };
  },
  // A variable specifier: the package's own typings are not needed (UsearchModule says what is used).
  usearch: async () => {
    const name = 'usearch';
    return ((await import(name)) as { default: UsearchModule }).default;
  },
};

/**
 * Loads an optional package for `feature` (said in the error, e.g. "photo import"). `load` replaces the
 * import (tests simulate a missing package with it).
 */
export async function loadOptionalPackage<Name extends OptionalPackageName>(
  name: Name,
  feature: string,
  load: () => Promise<OptionalPackage<Name>> = OPTIONAL_PACKAGES[name] as () => Promise<
    OptionalPackage<Name>
  >,
): Promise<OptionalPackage<Name>> {
  try {
    return await load();
  } catch (error) {
    const missing = (error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND';
    throw new GraphmemixError(
      'CONFIG',
      missing
        ? `${feature} needs the optional package ${name}, which is not installed: npm install ${name}`
        : `${feature} needs the optional package ${name}, which failed to load: ${(error as Error).message}`,
      { details: { package: name }, cause: error },
    );
  }
}
