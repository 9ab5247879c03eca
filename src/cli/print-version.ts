import { existsSync } from 'node:fs';
import {
  describeStore,
  isInMemoryDb,
  loadModelConfig,
  parseStoreLocation,
  type StoreDescription,
  sqliteVectorSupport,
} from '../index.ts';

/**
 * `graphmemix --version`: the package version, then the store backend and its vector support for the archive
 * named by --db, $GRAPHMEMIX_DB or the config file `db` (nothing named: the SQLite default, not opened). A
 * Postgres archive is connected to, since pgvector is detected on the server; a SQLite file is opened
 * read-only and only when it exists. The URL is printed without its credentials.
 */
export async function printVersion(version: string, args: readonly string[]): Promise<void> {
  const flag = (name: string): string | undefined => {
    const at = args.indexOf(name);
    if (at !== -1) return args[at + 1];
    return args.find((arg) => arg.startsWith(`${name}=`))?.slice(name.length + 1);
  };
  const config = flag('--config');
  const db = flag('--db') ?? loadModelConfig(config === undefined ? {} : { path: config }).db;
  const store = await describeDb(db);
  if (args.includes('--json')) {
    process.stdout.write(
      `${JSON.stringify({
        version,
        backend: store.backend,
        vector_support: store.vectorSupport,
        ...(db === undefined ? {} : { db: parseStoreLocation(db).label }),
      })}\n`,
    );
    return;
  }
  const where = db === undefined ? 'default, no --db given' : parseStoreLocation(db).label;
  process.stdout.write(`${version}\nstore ${store.backend} (${where}), vectors ${store.vectorSupport}\n`);
}

async function describeDb(db: string | undefined): Promise<StoreDescription> {
  if (db === undefined) return { backend: 'sqlite', vectorSupport: sqliteVectorSupport() };
  const location = parseStoreLocation(db);
  if (location.kind === 'memory') return { backend: 'memory', vectorSupport: 'in-process' };
  if (location.kind === 'sqlite' && (isInMemoryDb(db) || !existsSync(location.path))) {
    return { backend: 'sqlite', vectorSupport: isInMemoryDb(db) ? 'stored-ivf' : sqliteVectorSupport() };
  }
  const { openStore } = await import('../index.ts');
  const store = await openStore(db, location.kind === 'sqlite' ? { readonly: true } : {});
  try {
    return describeStore(store);
  } finally {
    await store.close();
  }
}
