/**
 * The ids an import has taken, per context, with a 128-bit prefix of each one's content hash: it lives as long
 * as the import, so per record it holds the id and a 16-byte string, not a "context\0id" key and the 64-digit
 * hex digest (a million ids: 141 -> 85 bytes of heap each). 128 bits keep "same content" exact in practice:
 * equal prefixes of different records take ~2^64 tries to find, even on purpose.
 */
export class ImportSeen {
  private readonly byContext = new Map<string, Map<string, string>>();

  /** The first 16 bytes of the hex digest as a 16-character string: a copy (a slice would keep the whole digest). */
  fingerprint(hash: string): string {
    return Buffer.from(hash.slice(0, 32), 'hex').toString('latin1');
  }

  get(contextId: string, id: string): string | undefined {
    return this.byContext.get(contextId)?.get(id);
  }

  set(contextId: string, id: string, hash: string): void {
    let ids = this.byContext.get(contextId);
    if (ids === undefined) {
      ids = new Map();
      this.byContext.set(contextId, ids);
    }
    ids.set(id, this.fingerprint(hash));
  }

  clear(): void {
    this.byContext.clear();
  }
}
