import { describe, expect, it } from 'vitest';
import { GraphmemixError } from '../../src/errors/graphmemix-error.ts';
import { loadOptionalPackage } from '../../src/importers/optional-package.ts';

/** What Node throws when a package is not installed. */
function notFound(name: string): Error {
  return Object.assign(new Error(`Cannot find package '${name}' imported from /x.js`), {
    code: 'ERR_MODULE_NOT_FOUND',
  });
}

describe('loadOptionalPackage', () => {
  it('a missing package is a CONFIG error naming the package and how to install it', async () => {
    const error = await loadOptionalPackage('mailparser', 'mail import', () =>
      Promise.reject(notFound('mailparser')),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GraphmemixError);
    expect((error as GraphmemixError).code).toBe('CONFIG');
    expect((error as GraphmemixError).details).toEqual({ package: 'mailparser' });
    expect((error as GraphmemixError).message).toContain('npm install mailparser');
  });

  it('a package that fails to load (e.g. a broken native binding) is named too', async () => {
    const error = await loadOptionalPackage('sharp', 'photo import', () =>
      Promise.reject(new Error('Could not load the "sharp" module using the linux-x64 runtime')),
    ).catch((e: unknown) => e);
    expect((error as GraphmemixError).code).toBe('CONFIG');
    expect((error as GraphmemixError).details).toEqual({ package: 'sharp' });
  });

  it('loads an installed package', async () => {
    const exifr = await loadOptionalPackage('exifr', 'EXIF');
    expect(typeof exifr.default.parse).toBe('function');
  });
});
