import type { PostgresSession, Sql } from './postgres-session.ts';

interface Pending<Request, Result> {
  contextId: string;
  requests: Request[];
  settle: Array<{ resolve: (result: Result) => void; reject: (error: unknown) => void }>;
}

/**
 * Reads of one kind issued together (in the same tick, from the same transaction) answered by ONE statement.
 * The incremental relation updates issue many small independent reads (a term's posting window, a key
 * chain's neighbour); Node's pg client runs a connection's statements one after another, so each alone was a
 * round trip (the bulk of an add-1's cost on PostgreSQL). Callers that issue reads together (Promise.all)
 * get them batched; a lone read is a batch of one. Reads inside a unit of work join its transaction (the
 * batch runs in the first caller's async context); reads outside one share a read transaction per context.
 */
export class BatchedReads<Request, Result> {
  private readonly pending = new Map<object, Pending<Request, Result>>();
  /** Batch keys outside any unit of work, per context. */
  private readonly loose = new Map<string, object>();

  constructor(
    private readonly session: PostgresSession,
    /** One statement for the requests; returns one result per request, in their order. */
    private readonly run: (sql: Sql, contextId: string, requests: readonly Request[]) => Promise<Result[]>,
  ) {}

  read(contextId: string, request: Request): Promise<Result> {
    const key = this.session.unitToken(contextId) ?? this.looseKey(contextId);
    let batch = this.pending.get(key);
    if (!batch) {
      const fresh: Pending<Request, Result> = { contextId, requests: [], settle: [] };
      batch = fresh;
      this.pending.set(key, fresh);
      queueMicrotask(() => {
        this.pending.delete(key);
        if (this.loose.get(contextId) === key) this.loose.delete(contextId);
        this.flush(fresh);
      });
    }
    batch.requests.push(request);
    const settle = batch.settle;
    return new Promise((resolve, reject) => settle.push({ resolve, reject }));
  }

  private looseKey(contextId: string): object {
    let key = this.loose.get(contextId);
    if (!key) {
      key = {};
      this.loose.set(contextId, key);
    }
    return key;
  }

  private flush({ contextId, requests, settle }: Pending<Request, Result>): void {
    this.session
      .scoped(contextId, 'read', (sql) => this.run(sql, contextId, requests))
      .then(
        (results) => {
          settle.forEach(({ resolve }, at) => {
            resolve(results[at]!);
          });
        },
        (error: unknown) => {
          for (const { reject } of settle) reject(error);
        },
      );
  }
}
