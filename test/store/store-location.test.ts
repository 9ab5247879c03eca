import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { dbFolderName, parseStoreLocation, redactDbUrl } from '../../src/store/store-location.ts';

describe('store location: one --db string, three backends, credentials never shown', () => {
  it('dispatches on the form of the string', () => {
    expect(parseStoreLocation('archive.db').kind).toBe('sqlite');
    expect(parseStoreLocation(':memory:').kind).toBe('sqlite');
    expect(parseStoreLocation('memory:').kind).toBe('memory');
    expect(parseStoreLocation('postgres://h/db').kind).toBe('postgres');
    expect(parseStoreLocation('POSTGRESQL://h/db').kind).toBe('postgres');
    // A file whose name merely starts like a scheme stays a file.
    expect(parseStoreLocation('postgres.db').kind).toBe('sqlite');
  });

  it('redacts user, password (even with @ in it) and secret query parameters', () => {
    expect(redactDbUrl('postgres://gm:pa@ss@db.internal:5432/mem?sslmode=require&password=x')).toBe(
      'postgres://[redacted]@db.internal:5432/mem?sslmode=require&password=[redacted]',
    );
    expect(redactDbUrl('postgresql://gm@127.0.0.1/mem')).toBe('postgresql://[redacted]@127.0.0.1/mem');
    expect(redactDbUrl('postgres://127.0.0.1/mem')).toBe('postgres://127.0.0.1/mem');
    expect(redactDbUrl('/tmp/a@b.db')).toBe('/tmp/a@b.db');
    expect(dbFolderName('postgres://gm:secret@db.internal:5432/mem?sslmode=require')).toBe(
      'db.internal_5432_mem',
    );
  });

  it('a server that cannot be reached is a STORE error without the password', async () => {
    const url = 'postgres://gm:Sup3rSecretPw@127.0.0.1:1/graphmemix';
    const error = await openStore(url).then(
      () => undefined,
      (e: unknown) => e as { code: string; message: string },
    );
    expect(error?.code).toBe('STORE');
    expect(error?.message).not.toContain('Sup3rSecretPw');
    expect(JSON.stringify(error)).not.toContain('Sup3rSecretPw');
    expect(error?.message).toContain('127.0.0.1:1');
  }, 30_000);
});
