import type Database from 'better-sqlite3';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import { noSnapshot } from './memory-semantic-index.ts';
import {
  listThreshold,
  type SemanticDoc,
  type SemanticDocChange,
  type SemanticIndexStore,
  type SemanticNeighbour,
  type SemanticPosting,
  type SemanticPostingFilter,
  type SemanticSnapshot,
  type SemanticSnapshotInput,
  type SemanticTermBound,
  type SemanticVector,
  type StagedSemanticReplace,
  stagingSpent,
  stagingWithOtherK,
} from './semantic-index-spec.ts';
import { CACHED_TOP_MIN, type SemanticPostingsCache } from './semantic-postings-cache.ts';
import {
  explicitIndexes,
  type IndexDefinition,
  withIndexesRebuilt,
  withoutForeignKeyChecks,
} from './sqlite-bulk-write-pragmas.ts';
import {
  createSqliteSemanticStaging,
  type SqliteSemanticStaging,
  writeDocRows,
} from './sqlite-semantic-staging.ts';
import { assertKnownDocs, OPEN_RATIO, prepareSemanticStatements } from './sqlite-semantic-statements.ts';
import {
  createSemanticTopLists,
  type EnteredPosting,
  SEMANTIC_TOP_SIZE,
  WHOLE_ROW_MIN,
} from './sqlite-semantic-top.ts';
import { compareStrings } from './store-rules.ts';

/** An exclusive upper limit above every stored value (SQLite REAL holds Infinity). */
const BEYOND = Number.POSITIVE_INFINITY;

/**
 * The SQLite semantic index (tables of migration 5). Postings are rows (context, memory, term) with two
 * indexes: (term, weight desc) for the forward top-k search and (term, ratio) for the reverse one, so both
 * read only the postings above their cutoff. `run` is the store's error mapper (closed handle, constraints).
 */
export function createSqliteSemanticIndex(
  db: Database.Database,
  run: <T>(work: () => T) => T,
  /** Keeps `{ top: n }` reads across writes (the store clears it on deletes and rolled-back units). */
  cache?: SemanticPostingsCache,
): SemanticIndexStore {
  // Prepared on first use: a read-only handle on a store older than migration 5 has no such tables.
  let prepared: ReturnType<typeof prepareSemanticStatements> | undefined;
  const statements = (): ReturnType<typeof prepareSemanticStatements> => {
    prepared ??= prepareSemanticStatements(db);
    return prepared;
  };
  // Kept top lists (migration 12); a read-only handle may be on an older file without them, and runs no
  // forward search anyway.
  const top = db.readonly ? undefined : createSemanticTopLists(db);
  /** `work` in a write transaction (a savepoint inside one): a row is stored with the read it keeps. */
  const writing = <T>(work: () => T): T => db.transaction(work).immediate();
  /**
   * `postings(term, { minWeight, below })`: from the term's kept row when it holds the window. A whole-list
   * read (minWeight <= 0: a chunk's first window on a term in at most WHOLE_LIST_DF documents) of a list of
   * WHOLE_ROW_MIN to SEMANTIC_TOP_SIZE postings is then kept as a row: at 1M these reads were ~127k rows of
   * an add-100's ~170k posting rows once the truncated terms had rows.
   */
  const weightWindow = (contextId: string, term: string, minWeight: number, below: number) => {
    const s = statements();
    const kept = top?.window(contextId, term, minWeight, below);
    if (kept) return kept;
    const readRows = () =>
      weightRows(s.postingsAboveWeight.all(contextId, term, minWeight, below) as [string, number][]);
    const keeps = (rows: readonly SemanticPosting[]) =>
      rows.length >= WHOLE_ROW_MIN && rows.length < SEMANTIC_TOP_SIZE;
    const rows = readRows();
    if (!top || minWeight > 0 || below !== BEYOND || !keeps(rows)) return rows;
    if (db.inTransaction) {
      top.store(contextId, term, SEMANTIC_TOP_SIZE, rows);
      return rows;
    }
    // Outside a transaction the list is read again inside one (once per term: the row then answers).
    return writing(() => {
      const now = readRows();
      if (keeps(now)) top.store(contextId, term, SEMANTIC_TOP_SIZE, now);
      return now;
    });
  };
  /**
   * `postings(term, { top: n })` for a long read (a truncated term's heaviest postings): its kept row when
   * one answers it, else the statement, whose answer is then kept (in one write transaction with it, so no
   * other writer's commit falls between them).
   */
  const longTop = (contextId: string, term: string, n: number): SemanticPosting[] => {
    const s = statements();
    const kept = top?.read(contextId, term, n);
    if (kept) return kept;
    const readRows = () => weightRows(s.topPostings.all(contextId, term, n) as [string, number][]);
    if (!top) return readRows();
    return writing(() => {
      const rows = readRows();
      top.store(contextId, term, n, rows);
      return rows;
    });
  };
  const snapshotOf = (contextId: string): SemanticSnapshot | undefined => {
    const s = statements();
    const row = s.getSnapshot.get(contextId) as
      | { space: string; documents: number; k: number; created_at: string; changes: number }
      | undefined;
    return row
      ? {
          space: row.space,
          documents: row.documents,
          k: row.k,
          createdAt: row.created_at,
          changes: row.changes,
        }
      : undefined;
  };
  /** True when the memory had a document or postings (so cached posting lists may name it). */
  const dropDoc = (contextId: string, id: string): boolean => {
    const s = statements();
    const docs = s.deleteDoc.run(contextId, id).changes;
    const postings = s.deletePostings.run(contextId, id).changes;
    s.deleteNeighbours.run(contextId, id);
    return docs + postings > 0;
  };
  // A list change rewrites only the rows that changed. `rank` is a row's slot, not its position: lists are
  // read back in their order (byListOrder), so a newcomer entering a list takes the slot of the entry it
  // pushed out (one row, one entry of the neighbour index) instead of shifting every rank below it (up to
  // k rows and 2k random pages of semantic_neighbours_by_neighbour, most of an add's written pages).
  const writeList = (contextId: string, id: string, neighbours: readonly SemanticNeighbour[], k: number) => {
    const s = statements();
    const wanted = new Map(neighbours.map((n) => [n.memoryId, n.score]));
    const free: number[] = [];
    const used = new Set<number>();
    const rows = s.listRows.all(contextId, id) as [number, string, number][];
    // Stored rows exist only with a document: only a memory without any needs the document lookup.
    if (rows.length === 0 && s.getDoc.get(contextId, id) === undefined) {
      throw new GraphmemixError('INVALID_INPUT', `no semantic document for "${id}"`);
    }
    for (const [slot, neighbourId, score] of rows) {
      const want = wanted.get(neighbourId);
      if (want === undefined) {
        free.push(slot);
        continue;
      }
      if (want !== score) s.setNeighbourScore.run(want, contextId, id, slot);
      wanted.delete(neighbourId);
      used.add(slot);
    }
    let next = 0;
    for (const [neighbourId, score] of wanted) {
      const slot = free.shift();
      if (slot !== undefined) {
        s.setNeighbour.run(neighbourId, score, contextId, id, slot);
        used.add(slot);
        continue;
      }
      while (used.has(next)) next++;
      used.add(next);
      s.insertNeighbour.run(contextId, id, next, neighbourId, score);
    }
    for (const slot of free) s.deleteNeighbour.run(contextId, id, slot);
    // Ratios are computed from the threshold when read (migration 9), so a list change writes one row.
    s.setThreshold.run(listThreshold(neighbours, k), contextId, id);
  };
  /**
   * replaceAll's transaction: the context's snapshot, documents and lists replaced, `writeRows` writing the
   * documents' rows (one by one, or copied from a staging area) while the bulk indexes are down.
   */
  const replaceState = (contextId: string, snapshot: SemanticSnapshotInput, writeRows: () => void): void => {
    db.transaction(() => {
      const s = statements();
      // The indexes' sorts may take a helper thread: the kNN pass that preceded this write is over.
      withIndexesRebuilt(db, bulkIndexes(db, s, contextId, snapshot.documents), () => {
        top?.clearContext(contextId);
        for (const statement of [s.clearDocs, s.clearPostings, s.clearNeighbours]) {
          statement.run(contextId);
        }
        writeSnapshot(contextId, snapshot);
        writeRows();
      });
      // The kept rows (cleared above, before the postings, so that the delete trigger finds nothing to
      // drop): the heaviest postings of the terms the forward search truncates, the whole lists of
      // the terms it reads whole.
      for (const [term, df] of snapshot.df) {
        if (df < WHOLE_ROW_MIN) continue;
        const rows = s.topPostings.all(contextId, term, SEMANTIC_TOP_SIZE) as [string, number][];
        top?.store(contextId, term, SEMANTIC_TOP_SIZE, weightRows(rows));
      }
    }).immediate();
  };
  const insertDoc = (contextId: string, doc: SemanticDoc, k: number): void => {
    const s = statements();
    writeDocRows(doc, k, [contextId], {
      doc: (values) => s.insertDoc.run(...values),
      postings: s.insertPostings,
      neighbours: s.insertNeighbours,
    });
  };

  /** The snapshot row (`changes` 0) and its document frequencies, replacing the context's (in a transaction). */
  const writeSnapshot = (contextId: string, snapshot: SemanticSnapshotInput): void => {
    const s = statements();
    s.clearDf.run(contextId);
    s.upsertSnapshot.run(contextId, snapshot.space, snapshot.documents, snapshot.k, snapshot.createdAt);
    for (const [term, df] of snapshot.df) s.insertDf.run(contextId, term, df);
  };

  /** The vectors and entry bounds of the ids in `wanted` (a JSON array), by id. */
  const readVectors = (contextId: string, wanted: string): Map<string, SemanticVector> => {
    const s = statements();
    const out = new Map<string, SemanticVector & { terms: string[]; weights: number[] }>();
    // Vectors come from the document row (migration 9); rows written before it read their postings.
    const older: string[] = [];
    for (const [id, threshold, vector] of s.docsIn.all(contextId, wanted) as [
      string,
      number,
      string | null,
    ][]) {
      if (vector === null) {
        older.push(id);
        out.set(id, { memoryId: id, terms: [], weights: [], threshold });
        continue;
      }
      const [terms, weights] = JSON.parse(vector) as [string[], number[]];
      out.set(id, { memoryId: id, terms, weights, threshold });
    }
    if (older.length === 0) return out;
    const byDoc = new Map<string, Array<[string, number]>>();
    for (const [id, term, weight] of s.postingsIn.all(contextId, JSON.stringify(older)) as [
      string,
      string,
      number,
    ][]) {
      const list = byDoc.get(id);
      if (list) list.push([term, weight]);
      else byDoc.set(id, [[term, weight]]);
    }
    for (const [id, entries] of byDoc) {
      const doc = out.get(id);
      if (!doc) continue;
      entries.sort((x, y) => compareStrings(x[0], y[0]));
      for (const [term, weight] of entries) {
        doc.terms.push(term);
        doc.weights.push(weight);
      }
    }
    return out;
  };

  return {
    async getSnapshot(contextId) {
      return run(() => snapshotOf(contextId));
    },

    async documentFrequencies(contextId, terms) {
      return run(() => {
        // One statement for every term (an add-100 asks for ~500).
        const out = new Map<string, number>();
        if (terms.length === 0) return out;
        const rows = statements().dfIn.all(contextId, JSON.stringify([...new Set(terms)])) as [
          string,
          number,
        ][];
        for (const [term, df] of rows) out.set(term, df);
        return out;
      });
    },

    async replaceAll(contextId: string, snapshot: SemanticSnapshotInput, docs: Iterable<SemanticDoc>) {
      // Without the foreign-key checks (a parent lookup per row, ~20 a memory): the written documents' ids
      // are checked once each after the rows, before the commit (a refused id takes everything back).
      run(() =>
        withoutForeignKeyChecks(db, () =>
          replaceState(contextId, snapshot, () => {
            for (const doc of docs) insertDoc(contextId, doc, snapshot.k);
            assertKnownDocs(statements(), contextId);
          }),
        ),
      );
      cache?.clearContext(contextId);
    },

    stagedReplace(contextId: string, k: number): StagedSemanticReplace {
      let staging: SqliteSemanticStaging | undefined;
      let spent = false;
      const open = (): SqliteSemanticStaging => {
        if (spent) throw stagingSpent(contextId);
        staging ??= createSqliteSemanticStaging(db, k);
        return staging;
      };
      const end = (): void => {
        spent = true;
        const area = staging;
        staging = undefined;
        area?.drop();
      };
      return {
        stage: async (docs) => run(() => open().stage(docs)),
        commit: async (snapshot) => {
          // A commit spends the staging whether it succeeds or not (nothing stored changed if it failed).
          try {
            const area = open();
            if (snapshot.k !== k) throw stagingWithOtherK(contextId, k, snapshot.k);
            run(() =>
              withoutForeignKeyChecks(db, () =>
                replaceState(contextId, snapshot, () => {
                  // Every copied row's memory id is a staged document's (stage writes no other).
                  area.copyInto(contextId);
                  assertKnownDocs(statements(), contextId);
                }),
              ),
            );
          } finally {
            run(end);
            cache?.clearContext(contextId);
          }
        },
        abort: async () => run(end),
      };
    },

    async replaceSnapshot(contextId: string, snapshot: SemanticSnapshotInput) {
      run(() => db.transaction(() => writeSnapshot(contextId, snapshot)).immediate());
      cache?.clearContext(contextId);
    },

    async getDocs(contextId, ids) {
      return run(() => {
        // Two statements per call, not three per id (a forward search reads its candidates in batches).
        const s = statements();
        const wanted = JSON.stringify([...new Set(ids)]);
        const docs = new Map<string, SemanticDoc & { neighbours: SemanticNeighbour[] }>();
        for (const { memoryId, terms, weights } of readVectors(contextId, wanted).values()) {
          docs.set(memoryId, { memoryId, terms, weights, neighbours: [] });
        }
        if (docs.size === 0) return [];
        for (const [id, neighbourId, score] of s.neighboursIn.all(contextId, wanted) as [
          string,
          string,
          number,
        ][]) {
          docs.get(id)?.neighbours.push({ memoryId: neighbourId, score });
        }
        for (const doc of docs.values()) doc.neighbours.sort(byListOrder);
        return ids.flatMap((memoryId): SemanticDoc[] => {
          const doc = docs.get(memoryId);
          return doc ? [doc] : [];
        });
      });
    },

    async getVectors(contextId, ids) {
      return run(() => {
        const vectors = readVectors(contextId, JSON.stringify([...new Set(ids)]));
        return ids.flatMap((memoryId): SemanticVector[] => {
          const vector = vectors.get(memoryId);
          return vector ? [vector] : [];
        });
      });
    },

    async getLists(contextId, ids) {
      return run(() => {
        const s = statements();
        const wanted = JSON.stringify([...new Set(ids)]);
        // One statement: an empty list is left out (the port allows it), so no read of the documents.
        const lists = new Map<string, SemanticNeighbour[]>();
        for (const [id, neighbourId, score] of s.neighboursIn.all(contextId, wanted) as [
          string,
          string,
          number,
        ][]) {
          const list = lists.get(id);
          if (list) list.push({ memoryId: neighbourId, score });
          else lists.set(id, [{ memoryId: neighbourId, score }]);
        }
        for (const list of lists.values()) list.sort(byListOrder);
        return lists;
      });
    },

    async writeDocs(contextId: string, change: SemanticDocChange) {
      // Postings removed here are not known to the cache: any removal drops the context's cached lists.
      let removed = false;
      run(() =>
        db
          .transaction(() => {
            const s = statements();
            const snapshot = snapshotOf(contextId);
            if (!snapshot) throw noSnapshot(contextId);
            for (const id of change.remove ?? []) if (dropDoc(contextId, id)) removed = true;
            for (const doc of change.put ?? []) {
              // A memory's postings and list rows exist only with its document row (written and dropped
              // together): a newcomer (the usual put) costs one lookup here, not three deletes.
              if (s.getDoc.get(contextId, doc.memoryId) !== undefined && dropDoc(contextId, doc.memoryId)) {
                removed = true;
              }
              insertDoc(contextId, doc, snapshot.k);
            }
            const entered: EnteredPosting[] = [];
            for (const doc of change.put ?? [])
              doc.terms.forEach((term, at) => {
                entered.push({ term, memoryId: doc.memoryId, weight: doc.weights[at]! });
              });
            top?.entered(contextId, entered);
            // writeList checks that the document exists (a list's rows prove it: one statement fewer).
            for (const list of change.lists ?? [])
              writeList(contextId, list.memoryId, list.neighbours, snapshot.k);
            const changed = (change.put?.length ?? 0) + (change.remove?.length ?? 0);
            if (changed > 0) s.addChanges.run(changed, contextId);
          })
          .immediate(),
      );
      // Committed (or a savepoint of a unit of work, whose rollback clears the cache).
      if (removed) cache?.clearContext(contextId);
      else
        for (const doc of change.put ?? []) cache?.inserted(contextId, doc.memoryId, doc.terms, doc.weights);
    },

    async termBounds(contextId, terms, options = {}) {
      return run(() => {
        const s = statements();
        const out = new Map<string, SemanticTermBound>();
        for (const term of terms) {
          const weight = s.maxWeight.get(contextId, term) as { value: number | null };
          if (weight.value === null) continue;
          // The ratio bound reads the term's whole posting list (no ratio index since migration 9): only the
          // exact reverse search asks for it, and that mode grows with the context anyway.
          const ratio = options.ratio
            ? (s.maxRatio.get(contextId, term) as { value: number }).value
            : OPEN_RATIO;
          out.set(term, {
            maxWeight: weight.value,
            maxRatio: ratio >= OPEN_RATIO ? Number.POSITIVE_INFINITY : ratio,
          });
        }
        return out;
      });
    },

    async postings(contextId: string, term: string, filter: SemanticPostingFilter) {
      return run(() => {
        const s = statements();
        if (cache && 'top' in filter && filter.top < CACHED_TOP_MIN && cache.keeps(contextId, term)) {
          // A short top read of a term whose longer top read is kept: its prefix (not kept itself). Checked
          // before the data_version statement, which would otherwise run for every uncached term too.
          cache.validate(s.dataVersion.get() as number);
          const known = cache.prefix(contextId, term, Math.max(0, filter.top));
          if (known) return known;
        }
        if ('top' in filter && filter.top >= CACHED_TOP_MIN) {
          // Another connection's commit invalidates every cached list (data_version moves).
          if (cache) {
            cache.validate(s.dataVersion.get() as number);
            const known = cache.get(contextId, term, filter.top);
            if (known) return known;
          }
          const rows = longTop(contextId, term, filter.top);
          cache?.set(contextId, term, filter.top, rows);
          return rows;
        }
        if ('top' in filter) {
          return weightRows(
            s.topPostings.all(contextId, term, Math.max(0, filter.top)) as [string, number][],
          );
        }
        if ('minWeight' in filter)
          return weightWindow(contextId, term, filter.minWeight, filter.below ?? BEYOND);
        const rows = s.postingsAboveRatio.all(
          contextId,
          term,
          Math.min(filter.minRatio, OPEN_RATIO),
          filter.below === undefined || filter.below > OPEN_RATIO ? BEYOND : filter.below,
        ) as [string, number, number][];
        return rows.map(
          ([memoryId, weight, ratio]): SemanticPosting => ({
            memoryId,
            weight,
            ratio: ratio >= OPEN_RATIO ? Number.POSITIVE_INFINITY : ratio,
          }),
        );
      });
    },

    async thresholds(contextId) {
      return run(() => {
        const rows = statements().thresholds.all(contextId) as { memory_id: string; threshold: number }[];
        return new Map(rows.map((row) => [row.memory_id, row.threshold]));
      });
    },

    async referrers(contextId, ids) {
      return run(() => {
        const s = statements();
        const out = new Set<string>();
        for (const id of ids) {
          for (const row of s.referrers.all(contextId, id) as { memory_id: string }[]) out.add(row.memory_id);
        }
        return [...out].sort(compareStrings);
      });
    },
  };
}

/**
 * Contexts from this size rewrite the semantic tables' secondary indexes by one sort (`bulkIndexes`); below
 * it the schema change (every connection re-prepares its statements) is not worth saving a few row updates.
 */
export const BULK_INDEX_REBUILD_FROM = 2000;

/**
 * The secondary indexes of the postings and neighbour tables that a whole-context rewrite (`replaceAll`)
 * drops and builds again afterwards, or none. Why: their keys (term, weight / neighbour id) arrive in random
 * order while the rows arrive in primary-key order, so every row of a bulk rebuild was a random insert into
 * a large index (about two thirds of the rows' write cost: 100k memories write ~1M postings and ~0.8M list
 * rows); CREATE INDEX sorts once. Only when the context is at least as large as every other context of the
 * file together (snapshot sizes): the build reads the whole table, other contexts' rows included, so for a
 * small context in a large file (1,000 contexts of 1,000) the row-by-row updates stay cheaper. Either way the
 * tables and indexes hold the same rows.
 */
function bulkIndexes(
  db: Database.Database,
  s: ReturnType<typeof prepareSemanticStatements>,
  contextId: string,
  documents: number,
): IndexDefinition[] {
  if (documents < BULK_INDEX_REBUILD_FROM) return [];
  const others = s.otherDocuments.get(contextId) as number;
  return others > documents ? [] : explicitIndexes(db, ['semantic_postings', 'semantic_neighbours']);
}

/**
 * Raw rows (memory id, weight) as postings: the forward search reads ~10^3-10^4 of them per add, and the
 * statements' row objects were a second allocation per posting.
 */
function weightRows(rows: ReadonlyArray<[string, number]>): SemanticPosting[] {
  const out = new Array<SemanticPosting>(rows.length);
  for (let at = 0; at < rows.length; at++) {
    const row = rows[at]!;
    out[at] = { memoryId: row[0], weight: row[1] };
  }
  return out;
}

/**
 * The order every list is written in (score desc, then id: compareNeighbours of the kNN updaters), restored
 * on read because a row's rank is its slot (writeList), not its position.
 */
function byListOrder(x: SemanticNeighbour, y: SemanticNeighbour): number {
  return y.score - x.score || compareStrings(x.memoryId, y.memoryId);
}
